// Helpers shared by the db and tuner tests: a fixed platform, whole-file
// reads and writes, and child tuners to interrupt (TempDir is in support.hpp).
#pragma once
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sfc/platform.hpp"
#include "sfc/tuning_store.hpp"
#include "support.hpp"

namespace sfc::test {

// A fixed fingerprint, so tests do not depend on the machine they run on.
inline Platform sample_platform(int threads = 2, const std::string& cpu = "Test CPU, 2 cores") {
  return {.cpu_model = cpu,
          .cores = 2,
          .threads = threads,
          .l1d_bytes = 49152,
          .l2_bytes = 1 << 20,
          .l3_bytes = 32 << 20,
          .numa_nodes = 1,
          .isa = "cpx",
          .libxsmm_version = "1.17",
          .compiler = "GCC 12.2.0"};
}

// One measurement with awkward values (a stddev not exactly representable in
// decimal) so that store and file round trips are tested bit for bit.
inline Measurement sample_measurement(GemmShape shape, int kl, int kbf, double mean, const std::string& at,
                                      bool screening = false) {
  return {.shape = shape,
          .dtype = DType::f32,
          .threads = 2,
          .k_layers = kl,
          .k_block_factor = kbf,
          .effective_k_layers = kl,
          .effective_k_block_factor = kbf,
          .blocks = {32, 64, 128},
          .warmup = screening ? 1 : 2,
          .reps = screening ? 1 : 10,
          .mean_s = mean,
          .min_s = mean * 0.875,
          .stddev_s = mean / 3,
          .screening = screening,
          .measured_at = at};
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// The sfc-tune binary (or `binary`) as a child process, its stdout and stderr in files.
// Small inputs and no 1 GiB cache flush unless `environment` says otherwise.
class CliProcess {
 public:
  CliProcess(const std::vector<std::string>& args, const std::string& output_prefix,
             const std::vector<std::string>& environment = {"SFC_COLD_BYTES=1048576"},
             const std::string& binary = SFC_TUNE_BINARY)
      : stdout_path_(output_prefix + ".out"), stderr_path_(output_prefix + ".err") {
    std::vector<std::string> argv_text = {binary};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_text = environment;  // these settings replace the inherited ones
    for (char** e = environ; *e; ++e) {
      const std::string entry = *e, name = entry.substr(0, entry.find('=') + 1);
      bool replaced = false;
      for (const std::string& setting : environment) replaced = replaced || setting.starts_with(name);
      if (!replaced) env_text.push_back(entry);
    }
    std::vector<char*> envp;
    for (std::string& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_path_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int error = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) throw std::runtime_error("cannot start " + argv_text[0]);
  }
  ~CliProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      wait();
    }
  }
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;

  void signal(int number) const { kill(pid_, number); }
  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == 0) return true;
    record(status);
    return false;
  }
  // The exit code, or 128 + the signal that ended it.
  int wait() {
    if (pid_ > 0) {
      int status = 0;
      waitpid(pid_, &status, 0);
      record(status);
    }
    return exit_code_;
  }
  std::string out() const { return slurp(stdout_path_); }
  std::string err() const { return slurp(stderr_path_); }
  // The last line of stdout (where --json puts its summary).
  std::string last_line() const {
    std::string text = out();
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  }

 private:
  void record(int status) {
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    pid_ = -1;
  }
  std::string stdout_path_, stderr_path_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

// Runs sfc-tune to the end; returns the finished process for its output.
struct CliRun {
  int code;
  std::string out, err, last_line;
};
inline CliRun run_cli(const std::vector<std::string>& args, const std::string& output_prefix,
                      const std::vector<std::string>& environment = {"SFC_COLD_BYTES=1048576"}) {
  CliProcess process(args, output_prefix, environment);
  const int code = process.wait();
  return {code, process.out(), process.err(), process.last_line()};
}

}  // namespace sfc::test
