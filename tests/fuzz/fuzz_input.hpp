// What every fuzz target shares: the readers under test take paths, so an
// input is written to a file of this process's own (one per process: libFuzzer
// may run several jobs at once), and an input is either accepted or refused
// with sfc::Error. Anything else -- another exception, a status that says
// "internal error", a crash, a sanitizer report -- is a finding.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

namespace sfc::fuzz {

// A folder of this process's own under $TMPDIR (or /tmp), made once and
// removed with what is in it when the process exits normally (ctest's replay
// runs and libFuzzer's timed runs left one behind per process). A crash keeps
// it; the input that caused the crash is saved by libFuzzer, not read from here.
inline const std::filesystem::path& scratch_dir() {
  struct Scratch {
    std::filesystem::path path;
    Scratch() {
      const char* tmp = std::getenv("TMPDIR");
      path = std::filesystem::path(tmp && *tmp ? tmp : "/tmp") / ("sfc-fuzz-" + std::to_string(::getpid()));
      std::filesystem::create_directories(path);
    }
    ~Scratch() {
      std::error_code ignored;  // nothing to do about a folder that cannot go
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Scratch scratch;
  return scratch.path;
}

// Writes `bytes` to scratch_dir()/name and returns its path.
inline std::string write_input(const std::uint8_t* data, std::size_t size, const char* name) {
  const std::filesystem::path path = scratch_dir() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path.string();
}

// A property the reader promised does not hold: report and stop, so that the
// fuzzer (or the replay runner) keeps the input.
[[noreturn]] inline void broken(std::string_view what) {
  std::fprintf(stderr, "fuzz: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

}  // namespace sfc::fuzz
