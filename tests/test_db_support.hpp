// Helpers shared by the db and tuner tests: a private temporary directory and
// whole-file reads and writes.
#pragma once
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sfc/platform.hpp"

namespace sfc::test {

// A fixed fingerprint, so tests do not depend on the machine they run on.
inline Platform sample_platform(int threads = 2, const std::string& cpu = "Test CPU, 2 cores") {
  return {.cpu_model = cpu,
          .cores = 2,
          .threads = threads,
          .l1d_bytes = 49152,
          .l2_bytes = 1 << 20,
          .l3_bytes = 32 << 20,
          .isa = "cpx",
          .libxsmm_version = "1.17",
          .compiler = "GCC 12.2.0"};
}

// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("sfc-test-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace sfc::test
