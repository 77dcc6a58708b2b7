// Helpers shared by the test files: running the sfc-tune binary as a user
// would, and temporary directories.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>

namespace sfc::test {

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `sfc-tune <args>` through the shell with a 120 s timeout (a hang fails
// the test instead of the suite). `env` is prepended, e.g. "LIBXSMM_TARGET=hsw".
inline CliResult run_cli(const std::string& args, const std::string& env = "") {
  const std::string cmd = env + " timeout 120 " SFC_TUNE_BINARY " " + args + " 2>&1";
  CliResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  explicit TempDir(const std::string& tag = "tmp") {
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

}  // namespace sfc::test
