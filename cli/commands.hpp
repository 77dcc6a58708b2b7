// One registration function per command family; each lives in its own
// cmd_*.cpp. A command's callback reports bad input by throwing sfc::Error
// (main prints it on one line and exits with 2).
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

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

}  // namespace sfc::cli
