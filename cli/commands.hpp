// One registration function per command family; each lives in its own
// cmd_*.cpp. A command's callback reports bad input by throwing sfc::Error
// (main prints it on one line and exits with 2).
#pragma once
#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sfc {
struct RankingOptions;  // sfc/config_ranking.hpp
struct RaceOptions;     // sfc/racing.hpp
}  // namespace sfc

namespace sfc::cli {

using json = nlohmann::ordered_json;  // keys print in the order written

// The database every command reads or writes unless --db names another.
inline constexpr const char* kDefaultDb = "sfc-tune.db";

// A command's --json result: one document on one line of stdout.
inline void print_json(const json& document) { std::printf("%s\n", document.dump().c_str()); }

// A GEMM size: an integer >= 1, refused with a one-line reason otherwise
// (CLI11's PositiveNumber would print the whole range of a double).
inline const CLI::Validator gemm_size(
    [](std::string& text) -> std::string {
      std::int64_t value = 0;
      if (!CLI::detail::lexical_cast(text, value)) return "must be an integer, got '" + text + "'";
      return value >= 1 ? "" : "must be >= 1, got " + text;
    },
    "SIZE>=1");

// A seed: a whole number 0..2^64-1, refused rather than saturated or wrapped
// (CLI11's conversion clamps a value past the range).
inline const CLI::Validator seed_value(
    [](std::string& text) -> std::string {
      std::uint64_t value = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (error == std::errc::result_out_of_range) return "must be at most 18446744073709551615, got " + text;
      if (error != std::errc() || end != text.data() + text.size())
        return "must be a whole number >= 0, got '" + text + "'";
      return "";
    },
    "0..2^64-1");

// A finite real number in [lo, hi] ((lo, hi] when `above_lo`): CLI11's Range
// and PositiveNumber let NaN through, as every comparison with it is false.
inline CLI::Validator real_range(double lo, double hi, bool above_lo = false) {
  constexpr double kMax = std::numeric_limits<double>::max();
  // Written as CLI11's Range writes its own, so the help texts read alike.
  const std::string range = (above_lo ? "(" : "[") + (lo == -kMax ? "-inf" : CLI::detail::to_string(lo)) +
                            " - " + (hi == kMax ? "inf" : CLI::detail::to_string(hi)) + "]";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || value > hi ||
            (above_lo ? value <= lo : value < lo))
          return "must be a finite number in " + range + ", got '" + text + "'";
        return "";
      },
      "FLOAT in " + range);
}

// Any finite real number (a coefficient such as alpha).
inline const CLI::Validator finite_real =
    real_range(-std::numeric_limits<double>::max(), std::numeric_limits<double>::max());

// Where a command's human-readable result goes: stdout, or stderr when
// --json makes stdout exactly one JSON document (`... --json | jq`).
inline std::FILE* human_output(bool as_json) { return as_json ? stderr : stdout; }

// "812 us", "3.21 ms", "1.234 s": a duration in the unit that fits it.
std::string format_seconds(double seconds);  // main.cpp

void add_gemm_command(CLI::App& app);      // cmd_gemm.cpp
void add_tune_command(CLI::App& app);      // cmd_tune.cpp
void add_store_commands(CLI::App& app);    // cmd_store.cpp: export, import, merge, db
void add_predict_commands(CLI::App& app);  // cmd_predict.cpp: query, calibrate, evaluate
void add_bench_command(CLI::App& app);     // cmd_bench.cpp
void add_record_commands(CLI::App& app);   // cmd_record.cpp: record show
void add_help_command(CLI::App& app);      // cmd_help.cpp: help [environment|commands|COMMAND]

// The ranked search's thresholds (--min-shortlist ... --min-gap), for tune
// and for evaluate's replay; `when` starts each description ("With --replay").
void add_ranked_search_options(CLI::App& cmd, RankingOptions& ranking, RaceOptions& race,
                               const std::string& when);  // cmd_tune.cpp

// The exit-status and environment block (from sfc::settings()): the end of
// sfc-tune --help, and all of sfc-tune help environment. cmd_help.cpp.
std::string environment_help();

// `command`'s whole --help text, every option with its meaning, whatever its
// length (`name`: the words that run it, "sfc-tune db info").
std::string full_help(const CLI::App& command, const std::string& name);

// Gives `app` (and the commands added to it after) a --help that fits a
// screen of 80x25: a longer one lists option names only.
void use_screen_help(CLI::App& app);

// Every command that runs something, as the words that name it ("db info"),
// in the order --help lists them: what sfc-tune help commands prints.
std::vector<std::string> command_paths(const CLI::App& app);

}  // namespace sfc::cli
