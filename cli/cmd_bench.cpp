// Placeholder until the issue that owns these commands lands.
#include "commands.hpp"

namespace sfc::cli {
void add_bench_command(CLI::App&) {}
}  // namespace sfc::cli
