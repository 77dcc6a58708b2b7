// sfc-tune: the command-line front end. Logs go to stderr; results to stdout
// (with --json, the last line of stdout is one JSON object).
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <new>

#include "commands.hpp"
#include "sfc/error.hpp"

int main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("sfc"));
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  if (const char* level = std::getenv("SFC_LOG_LEVEL")) spdlog::set_level(spdlog::level::from_str(level));

  CLI::App app{"sfc-tune: autotuning for Space-Filling-Curve Communication-Avoiding GEMM"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "sfc-tune " SFC_VERSION);
  sfc::cli::add_gemm_command(app);
  sfc::cli::add_store_commands(app);
  sfc::cli::add_predict_commands(app);
  sfc::cli::add_bench_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command's own non-zero exit (e.g. a failed --check)
  } catch (const CLI::ParseError& e) {
    app.exit(e);         // CLI11 prints the reason (and usage) on stderr
    return 2;
  } catch (const sfc::Error& e) {
    std::fprintf(stderr, "sfc-tune: error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "sfc-tune: error: out of memory\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sfc-tune: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
