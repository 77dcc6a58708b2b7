// The table of environment variables (core/src/settings.cpp) and its reader.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "sfc/error.hpp"
#include "sfc/settings.hpp"

TEST_CASE("settings: each variable is listed once, with a meaning and what a value must be") {
  std::set<std::string> names;
  for (const sfc::SettingInfo& setting : sfc::settings()) {
    INFO(setting.name);
    CHECK(names.insert(setting.name).second);
    CHECK(std::string(setting.meaning).size() > 0);
    CHECK(std::string(setting.value).size() > 0);
  }
  CHECK(names.size() >= 20);
}

TEST_CASE("settings: every SFC_ variable docs/reference.md names is in the table") {
  std::ifstream in(std::string(SFC_SOURCE_DIR) + "/docs/reference.md");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string reference = text.str();
  std::set<std::string> listed;
  for (const sfc::SettingInfo& setting : sfc::settings()) listed.insert(setting.name);
  const std::regex variable("SFC_[A-Z_]+[A-Z]");
  int found = 0;
  for (auto it = std::sregex_iterator(reference.begin(), reference.end(), variable);
       it != std::sregex_iterator(); ++it, ++found) {
    INFO(it->str());
    CHECK(listed.count(it->str()) == 1);
  }
  CHECK(found > 0);
}

TEST_CASE("settings: setting_value reads the environment at each call") {
  ::unsetenv("SFC_TUNE_DB");
  CHECK(sfc::setting_value("SFC_TUNE_DB") == nullptr);
  ::setenv("SFC_TUNE_DB", "x.db", 1);
  REQUIRE(sfc::setting_value("SFC_TUNE_DB") != nullptr);
  CHECK(std::string(sfc::setting_value("SFC_TUNE_DB")) == "x.db");
  ::unsetenv("SFC_TUNE_DB");
  CHECK(sfc::setting_value("SFC_TUNE_DB") == nullptr);
}

namespace {

// What `run` writes on stderr (fd 2, where the readers warn).
template <class Run>
std::string stderr_of(Run run) {
  std::fflush(stderr);
  char path[] = "/tmp/sfc-settings-XXXXXX";
  const int file = ::mkstemp(path);
  REQUIRE(file >= 0);
  const int saved = ::dup(2);
  ::dup2(file, 2);
  run();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  ::close(file);
  ::unlink(path);
  return text.str();
}

}  // namespace

TEST_CASE("settings: every variable has a default, and says what a bad value gets") {
  for (const sfc::SettingInfo& setting : sfc::settings()) {
    INFO(setting.name);
    CHECK(std::string(setting.fallback).size() > 0);
  }
}

TEST_CASE("settings: a bad value is named once per process, one line, then the reader answers unset") {
  ::setenv("SFC_BLAS_MIN_DIM", "lots", 1);
  const std::string first = stderr_of([] { CHECK_FALSE(sfc::setting_number("SFC_BLAS_MIN_DIM", 0, 1e9)); });
  CHECK(first == "sfc-tune: warning: SFC_BLAS_MIN_DIM=lots is not a number >= 0; using 0 (none)\n");
  const std::string again = stderr_of([] { CHECK_FALSE(sfc::setting_number("SFC_BLAS_MIN_DIM", 0, 1e9)); });
  CHECK(again.empty());
  ::setenv("SFC_BLAS_MIN_DIM", "12.5", 1);
  CHECK(sfc::setting_number("SFC_BLAS_MIN_DIM", 0, 1e9) == 12.5);
  ::setenv("SFC_BLAS_MIN_DIM", "-1", 1);
  CHECK_FALSE(sfc::setting_number("SFC_BLAS_MIN_DIM", 0, 1e9));
  ::setenv("SFC_BLAS_MIN_DIM", "nan", 1);
  CHECK_FALSE(sfc::setting_number("SFC_BLAS_MIN_DIM", 0, 1e9));
  ::unsetenv("SFC_BLAS_MIN_DIM");
  CHECK_FALSE(sfc::setting_number("SFC_BLAS_MIN_DIM", 0, 1e9));
}

TEST_CASE("settings: choices, counts and flags") {
  ::setenv("SFC_BLAS_ROUTE", "sfc", 1);
  CHECK(sfc::setting_choice("SFC_BLAS_ROUTE", {"race", "sfc"}) == "sfc");
  ::setenv("SFC_BLAS_ROUTE", "fastest", 1);
  const std::string warning = stderr_of([] {
    CHECK_FALSE(sfc::setting_choice("SFC_BLAS_ROUTE", {"race", "sfc"}));
  });
  CHECK(warning.find("SFC_BLAS_ROUTE=fastest is not race or sfc; using race") != std::string::npos);
  ::unsetenv("SFC_BLAS_ROUTE");

  ::setenv("SFC_COLD_BYTES", "4096", 1);
  CHECK(sfc::setting_count("SFC_COLD_BYTES", 0, 8192) == 4096u);
  ::setenv("SFC_COLD_BYTES", "16384", 1);  // above the most
  stderr_of([] { CHECK_FALSE(sfc::setting_count("SFC_COLD_BYTES", 0, 8192)); });
  ::setenv("SFC_COLD_BYTES", "4k", 1);
  stderr_of([] { CHECK_FALSE(sfc::setting_count("SFC_COLD_BYTES", 0, 8192)); });
  ::unsetenv("SFC_COLD_BYTES");

  for (const char* off : {"", "0"}) {
    ::setenv("SFC_BLAS_VERBOSE", off, 1);
    CHECK_FALSE(sfc::setting_flag("SFC_BLAS_VERBOSE"));
  }
  ::setenv("SFC_BLAS_VERBOSE", "yes", 1);
  CHECK(sfc::setting_flag("SFC_BLAS_VERBOSE"));
  ::unsetenv("SFC_BLAS_VERBOSE");
  CHECK_FALSE(sfc::setting_flag("SFC_BLAS_VERBOSE"));
  CHECK_FALSE(sfc::setting_text("SFC_BLAS_VERBOSE"));
}

TEST_CASE("settings: a variable whose table says error throws, every time, with the same sentence") {
  ::setenv("SFC_LOG_LEVEL", "loud", 1);
  for (int i = 0; i < 2; ++i) {
    try {
      sfc::setting_choice("SFC_LOG_LEVEL", {"info", "off"});
      FAIL("no error");
    } catch (const sfc::Error& e) {
      CHECK(std::string(e.what()) ==
            "SFC_LOG_LEVEL=loud is not trace, debug, info, warning, error, critical or off");
    }
  }
  ::unsetenv("SFC_LOG_LEVEL");
}
