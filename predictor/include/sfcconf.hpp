// sfcconf.hpp: the C++ face of libsfcconf, inline over the C API (sfcconf.h)
// so that no C++ type or exception crosses the library's boundary.
//
//   sfcconf::TunedConfigs configs("tuned.sfctable");          // throws sfcconf::Error
//   sfcconf_answer a = configs.query(m, n, k, SFCCONF_F32, 2);
//   run(a.k_layers, a.k_block_factor);
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "sfcconf.h"

namespace sfcconf {

class Error : public std::runtime_error {
 public:
  Error(sfcconf_status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  sfcconf_status status() const noexcept { return status_; }

 private:
  sfcconf_status status_;
};

class TunedConfigs {
 public:
  // Opens a tuning database or table for this machine, for "any" platform,
  // or for the platform whose hash is given (see sfcconf_open; none given:
  // SFC_PLATFORM). A null path opens no file: every answer is the default tier.
  explicit TunedConfigs(const char* path, const char* platform = nullptr) {
    check(sfcconf_open(path, platform, &handle_));
  }
  explicit TunedConfigs(const std::string& path, const std::string& platform = "")
      : TunedConfigs(path.c_str(), platform.c_str()) {}
  ~TunedConfigs() { sfcconf_close(handle_); }
  TunedConfigs(TunedConfigs&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  TunedConfigs& operator=(TunedConfigs&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  TunedConfigs(const TunedConfigs&) = delete;
  TunedConfigs& operator=(const TunedConfigs&) = delete;

  // The answer and how the platform that gave it matches this machine.
  struct Match {
    sfcconf_answer answer;
    sfcconf_platform_match platform;
    sfcconf_layout source;  // the layout whose tuned shapes answered (sfcconf_query_source)
  };
  Match query_match(std::int64_t m, std::int64_t n, std::int64_t k, sfcconf_dtype dtype = SFCCONF_F32,
                    int threads = 1, sfcconf_layout layout = SFCCONF_BLOCKED) const {
    Match match;
    check(sfcconf_query_source(handle_, m, n, k, dtype, threads, layout, &match.answer, &match.platform,
                               &match.source));
    return match;
  }

  // Thread-safe; throws sfcconf::Error for sizes or threads < 1.
  sfcconf_answer query(std::int64_t m, std::int64_t n, std::int64_t k, sfcconf_dtype dtype = SFCCONF_F32,
                       int threads = 1, sfcconf_layout layout = SFCCONF_BLOCKED) const {
    sfcconf_answer answer;
    check(sfcconf_query_layout(handle_, m, n, k, dtype, threads, layout, &answer));
    return answer;
  }

 private:
  static void check(sfcconf_status status) {
    if (status != SFCCONF_OK) throw Error(status, sfcconf_last_error());
  }
  sfcconf_handle* handle_ = nullptr;
};

}  // namespace sfcconf
