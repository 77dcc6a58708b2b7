// One registration function per command family; each lives in its own
// cmd_*.cpp. A command's callback reports bad input by throwing sfc::Error
// (main prints it on one line and exits with 2).
#pragma once
#include <CLI/CLI.hpp>

namespace sfc::cli {

void add_gemm_command(CLI::App& app);       // cmd_gemm.cpp
void add_store_commands(CLI::App& app);     // cmd_tune.cpp: tune, export, import, merge, db
void add_predict_commands(CLI::App& app);   // cmd_predict.cpp: query, calibrate, evaluate
void add_bench_command(CLI::App& app);      // cmd_bench.cpp

}  // namespace sfc::cli
