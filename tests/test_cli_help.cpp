// sfc-tune's help: every command's --help fits a screen, the environment
// block is the settings table, and help's topics answer or refuse.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "sfc/settings.hpp"
#include "support.hpp"

namespace {

// `text` with every run of spaces and line breaks as one space.
std::string one_spaced(const std::string& text) {
  std::string out;
  for (const char c : text)
    if (c != ' ' && c != '\n')
      out += c;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The rows `text` takes on an 80-column terminal.
std::size_t screen_rows(const std::string& text) {
  std::size_t rows = 0;
  for (const std::string& line : lines_of(text)) rows += line.empty() ? 1 : (line.size() + 79) / 80;
  return rows;
}

}  // namespace

TEST_CASE("help: every command the CLI lists has a --help of at most 25 rows of 80 columns") {
  const auto listed = sfc::test::run_cli("help commands");
  REQUIRE(listed.exit_code == 0);
  const std::vector<std::string> commands = lines_of(listed.output);
  CHECK(commands.size() >= 11);
  bool record_show = false;
  for (const std::string& command : commands) {
    INFO(command);
    record_show = record_show || command == "record show";
    const auto help = sfc::test::run_cli(command + " --help");
    CHECK(help.exit_code == 0);
    CHECK(screen_rows(help.output) <= 25);
    CHECK(help.output.find("sfc-tune " + command) != std::string::npos);  // its usage line
    // The environment and exit status are said once, in help environment.
    CHECK(help.output.find("SFC_TUNING ") == std::string::npos);
    CHECK(help.output.find("Environment and exit status: sfc-tune help environment") != std::string::npos);
    const auto full = sfc::test::run_cli("help " + command);
    CHECK(full.exit_code == 0);
    CHECK(full.output.find("--help") != std::string::npos);
  }
  CHECK(record_show);
}

TEST_CASE("help: help environment names every variable of the settings table, in 80 columns") {
  const auto environment = sfc::test::run_cli("help environment");
  REQUIRE(environment.exit_code == 0);
  for (const sfc::SettingInfo& setting : sfc::settings()) {
    INFO(setting.name);
    CHECK(environment.output.find(std::string("  ") + setting.name) != std::string::npos);
    CHECK(one_spaced(environment.output).find(setting.fallback) != std::string::npos);
  }
  for (const std::string& line : lines_of(environment.output)) {
    INFO(line);
    CHECK(line.size() <= 80);
  }
  CHECK(environment.output.find("EXIT STATUS") != std::string::npos);
  // sfc-tune --help ends with the same block.
  const auto top = sfc::test::run_cli("--help");
  REQUIRE(top.exit_code == 0);
  CHECK(top.output.size() >= environment.output.size());
  CHECK(top.output.substr(top.output.size() - environment.output.size()) == environment.output);
}

TEST_CASE("help: an unknown topic is refused on one line, naming the topics") {
  const auto unknown = sfc::test::run_cli("help frobnicate");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.output.find("no help on 'frobnicate'") != std::string::npos);
  CHECK(unknown.output.find("environment") != std::string::npos);
  CHECK(lines_of(unknown.output).size() == 1);
  const auto nested = sfc::test::run_cli("help db info");
  CHECK(nested.exit_code == 0);
  CHECK(nested.output.find("Usage: sfc-tune db info") != std::string::npos);
}
