// Writes the tuning tables the libsfcconf tests open (the C program and the
// ThreadSanitizer run) into the directory given as the only argument:
//   this_machine.sfctable   27 synthetic shapes, "tuned here" on 2 threads, calibrated
//   calibrated_only.sfctable  this machine's calibration, no tuned shape (the model answers)
//   other_machine.sfctable  the same from a foreign CPU (another ISA); other_machine.hash holds its hash
//   truncated.sfctable      this_machine.sfctable cut in the middle
//   edited_platform.sfctable, duplicated_platform.sfctable, no_platform.sfctable
//                           its platform block edited (the hash no longer matches),
//                           with a line twice, or left out
//   empty.sfctable          no bytes at all
//   partial.sfctable        this machine's shapes with only K_layers, k_block_factor in {1, 2} measured
//                           (the rest NaN, as a restricted tuning grid leaves them), uncalibrated
// The synthetic winners: K >= 4096 -> (2, 4), otherwise (1, 2); see sfc::test::region_shapes().
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "../test_predictor_support.hpp"
#include "sfc/platform.hpp"

int main(int argc, char** argv) try {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  std::filesystem::create_directories(dir);
  sfc::TuningTable here = sfc::test::synthetic_table(sfc::test::region_shapes(), {200, 60});
  here.platform = sfc::detect_platform(2);
  here.save(dir + "/this_machine.sfctable");

  sfc::TuningTable calibrated_only = here;
  calibrated_only.shapes.clear();
  calibrated_only.save(dir + "/calibrated_only.sfctable");

  sfc::TuningTable other = here;
  other.platform = sfc::test::foreign_machine(2);
  other.save(dir + "/other_machine.sfctable");
  std::ofstream(dir + "/other_machine.hash") << other.platform.hash();

  std::ifstream in(dir + "/this_machine.sfctable", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir + "/truncated.sfctable", std::ios::binary) << text.substr(0, text.size() / 2);
  // The platform block: "platform cores N" edited, duplicated, or every platform line dropped.
  const std::size_t cores_at = text.find("platform cores ");
  const std::size_t cores_end = text.find('\n', cores_at) + 1;
  const std::string cores_line = text.substr(cores_at, cores_end - cores_at);
  std::ofstream(dir + "/edited_platform.sfctable", std::ios::binary)
      << text.substr(0, cores_at) << "platform cores 1024\n"
      << text.substr(cores_end);
  std::ofstream(dir + "/duplicated_platform.sfctable", std::ios::binary)
      << text.substr(0, cores_end) << cores_line << text.substr(cores_end);
  std::string without;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at) + 1;
    if (text.compare(at, 9, "platform ") != 0) without += text.substr(at, end - at);
    at = end;
  }
  std::ofstream(dir + "/no_platform.sfctable", std::ios::binary) << without;
  std::ofstream(dir + "/empty.sfctable", std::ios::binary).flush();

  sfc::TuningTable partial = here;
  partial.calibration = {};
  for (sfc::TunedShape& s : partial.shapes) {
    for (int i = 0; i < sfc::kConfigCount; ++i)
      if (const sfc::Knobs knobs = sfc::Knobs::at(i); knobs.k_layers > 2 || knobs.k_block_factor > 2)
        s.seconds[i] = std::numeric_limits<float>::quiet_NaN();
    s.k_layers = 1;
    s.k_block_factor = 2;
  }
  partial.save(dir + "/partial.sfctable");
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "fixture: %s\n", e.what());
  return 1;
}
