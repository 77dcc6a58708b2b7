// sfc-tune: the command-line front end. Logs go to stderr; results to stdout
// (with --json, stdout is exactly one JSON object and the readable lines go to stderr).
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "commands.hpp"
#include "sfc/error.hpp"
#include "sfc/gemm.hpp"
#include "sfc/platform.hpp"
#include "sfc/settings.hpp"

namespace sfc::cli {

std::string format_seconds(double seconds) {
  char text[32];
  const double magnitude = std::fabs(seconds);
  if (magnitude >= 1 || magnitude == 0)
    std::snprintf(text, sizeof text, "%.3f s", seconds);
  else if (magnitude >= 1e-3)
    std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  else
    std::snprintf(text, sizeof text, "%.1f us", seconds * 1e6);
  return text;
}

}  // namespace sfc::cli

namespace {

// SFC_LOG_LEVEL, or nothing when unset; an unknown name is an error, not silence.
std::optional<spdlog::level::level_enum> log_level() {
  const auto name =
      sfc::setting_choice("SFC_LOG_LEVEL", {"trace", "debug", "info", "warning", "error", "critical", "off"});
  if (!name) return std::nullopt;
  return spdlog::level::from_str(std::string(*name));
}

// `text` on one line: a control character a user's value brought in (a line
// break inside an argument) is written as an escape, so every refusal stays one line.
std::string one_line(std::string_view text) {
  std::string line;
  for (const char c : text) {
    if (c == '\n')
      line += "\\n";
    else if (c == '\r')
      line += "\\r";
    else if (c == '\t')
      line += "\\t";
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
      line += escaped;
    } else
      line += c;
  }
  return line;
}

void refuse(const char* kind, std::string_view message) {
  std::fprintf(stderr, "sfc-tune: %s: %s\n", kind, one_line(message).c_str());
}

// Versions of what a run depends on, for --version and bug reports.
std::string version_text() {
  const sfc::Platform p = sfc::detect_platform(1);
  return std::string("sfc-tune " SFC_VERSION "\nLIBXSMM ") + p.libxsmm_version + " (target " + p.isa + "), " +
         p.compiler + "\nplatform of this machine: " + p.cpu_model + ", " + std::to_string(p.cores) +
         " cores";
}

}  // namespace

int main(int argc, char** argv) {
  // NO_COLOR (no-color.org): any value turns colour off.
  spdlog::set_default_logger(spdlog::stderr_color_mt(
      "sfc", sfc::setting_text("NO_COLOR") ? spdlog::color_mode::never : spdlog::color_mode::automatic));
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  try {
    if (const auto level = log_level()) spdlog::set_level(*level);
    sfc::check_thread_environment();  // before any parallel region could take its team size
  } catch (const sfc::Error& e) {
    refuse("error", e.what());
    return 2;
  }

  // Named, so that usage lines say "sfc-tune", not the path it was started by.
  CLI::App app{"sfc-tune: autotuning for Space-Filling-Curve Communication-Avoiding GEMM", "sfc-tune"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text);
  // Every command's --help ends with this line (CLI11 copies a footer into
  // the commands added after it); sfc-tune --help ends with the block itself.
  app.footer("Environment and exit status: sfc-tune help environment");
  sfc::cli::use_screen_help(app);
  sfc::cli::add_gemm_command(app);
  sfc::cli::add_tune_command(app);
  sfc::cli::add_store_commands(app);
  sfc::cli::add_predict_commands(app);
  sfc::cli::add_bench_command(app);
  sfc::cli::add_record_commands(app);
  sfc::cli::add_help_command(app);
  app.footer("Each command's options and what they mean: sfc-tune help COMMAND, or man sfc-tune.\n\n" +
             sfc::cli::environment_help());

  // A word where a command belongs that names none: say so, and list them
  // (CLI11 alone answers "A subcommand is required").
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const CLI::App* command : app.get_subcommands({})) {
      found = found || command->check_name(argv[1]);
      known += (known.empty() ? "" : ", ") + command->get_name();
    }
    if (!found) {
      refuse("error",
             std::string("unknown command '") + argv[1] + "' (commands: " + known + "; see sfc-tune --help)");
      return 2;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command's own non-zero exit (e.g. a failed --check)
  } catch (const CLI::ParseError& e) {
    // One line, as every other refusal (CLI11's own printer adds a second).
    refuse("error", std::string(e.what()) + " (see sfc-tune --help)");
    return 2;
  } catch (const sfc::Error& e) {
    refuse("error", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "sfc-tune: error: out of memory\n");
    return 2;
  } catch (const std::exception& e) {
    refuse("internal error", e.what());
    return 1;
  }
  return 0;
}
