// The table of environment variables (core/src/settings.cpp) and its reader.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

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
