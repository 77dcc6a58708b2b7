// Writes the tuning tables the libsfcconf tests open (the C program and the
// ThreadSanitizer run) into the directory given as the only argument:
//   this_machine.sfctable   27 synthetic shapes, "tuned here" on 2 threads, calibrated
//   calibrated_only.sfctable  this machine's calibration, no tuned shape (the model answers)
//   other_machine.sfctable  the same from another CPU; other_machine.hash holds its hash
//   truncated.sfctable      this_machine.sfctable cut in the middle
//   empty.sfctable          no bytes at all
// The synthetic winners: K >= 4096 -> (2, 4), otherwise (1, 2); see sfc::test::region_shapes().
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
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
  other.platform.cpu_model = "Some Other CPU";
  other.save(dir + "/other_machine.sfctable");
  std::ofstream(dir + "/other_machine.hash") << other.platform.hash();

  std::ifstream in(dir + "/this_machine.sfctable", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir + "/truncated.sfctable", std::ios::binary) << text.substr(0, text.size() / 2);
  std::ofstream(dir + "/empty.sfctable", std::ios::binary).flush();
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "fixture: %s\n", e.what());
  return 1;
}
