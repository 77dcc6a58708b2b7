// sfc-tune help [TOPIC]: the environment block (generated from the settings
// table), the list of commands, or one command's --help.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "sfc/error.hpp"
#include "sfc/settings.hpp"

namespace sfc::cli {
namespace {

constexpr std::size_t kWidth = 79;        // every line of the block fits 80 columns
constexpr std::size_t kValueColumn = 24;  // where a variable's text starts
constexpr std::size_t kScreenRows = 25;   // a command's --help fits a terminal of 80x25

// `text` as lines of at most kWidth columns, each after `first` (the first
// line) or kValueColumn spaces; words are not split.
std::string wrapped(const std::string& first, const std::string& text) {
  std::string out = first, line;
  std::size_t column = first.size();
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    at = end + 1;
    const bool starts_line = column == kValueColumn;
    if (!starts_line && column + 1 + word.size() > kWidth) {
      out += "\n" + std::string(kValueColumn, ' ');
      column = kValueColumn;
    } else if (!starts_line) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
  }
  return out + "\n";
}

// The commands under `app` that run something (not a group such as `db`),
// as the words that name them ("gemm", "db info").
void collect(const CLI::App& app, const std::string& prefix, std::vector<std::string>& paths) {
  for (const CLI::App* command : app.get_subcommands({})) {
    const std::string path = prefix + command->get_name();
    if (path == "help") continue;
    if (command->get_subcommands({}).empty())
      paths.push_back(path);
    else
      collect(*command, path + " ", paths);
  }
}

// The rows `text` takes on a screen kWidth + 1 columns wide.
std::size_t screen_rows(const std::string& text) {
  std::size_t rows = 0, at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    rows += std::max<std::size_t>(1, (end - at + kWidth) / (kWidth + 1));
    at = end + 1;
  }
  return rows;
}

// A command's --help: CLI11's own where it fits a screen; else its
// description, usage and option names packed into lines, and where each
// option's text is (sfc-tune help COMMAND, the man page).
class ScreenFormatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    std::string full = CLI::Formatter::make_help(app, name, mode);
    if (mode != CLI::AppFormatMode::Normal || app->get_parent() == nullptr ||
        screen_rows(full) <= kScreenRows)
      return full;
    std::string text = make_description(app) + make_usage(app, name) +
                       "\nOptions (what each means: sfc-tune help" + name.substr(name.find(' ')) + "):\n";
    std::string line = " ";
    for (const CLI::Option* option : app->get_options()) {
      if (option->get_positional() || option == app->get_help_ptr()) continue;
      std::string word = option->get_lnames().empty() ? "-" + option->get_snames().front()
                                                      : "--" + option->get_lnames().front();
      const std::string type = option->get_type_name();
      if (option->get_type_size() != 0 && !type.empty()) word += " " + type.substr(0, type.find(':'));
      if (line.size() > 2 && line.size() + 2 + word.size() > kWidth) {
        text += line + "\n";
        line = " ";
      }
      line += (line.size() > 2 ? "  " : " ") + word;
    }
    text += line + "\n\n" + make_footer(app);
    return text;
  }
};

}  // namespace

std::string full_help(const CLI::App& command, const std::string& name) {
  return CLI::Formatter().make_help(&command, name, CLI::AppFormatMode::Normal);
}

void use_screen_help(CLI::App& app) { app.formatter(std::make_shared<ScreenFormatter>()); }

std::string environment_help() {
  std::string text =
      "EXIT STATUS:\n"
      "  0    done\n"
      "  1    internal error, or a check that failed (--check, evaluate's gates)\n"
      "  2    bad input: an argument, a file or an environment variable\n"
      "  128+N  interrupted by signal N: SIGINT 130, SIGTERM 143, SIGHUP 129\n"
      "       (tune: rerun to resume; bench: the shapes finished are reported)\n"
      "\n"
      "ENVIRONMENT:\n"
      "A bad value gets one warning and the default, or where marked, an error.\n";
  for (const SettingInfo& setting : settings()) {
    std::string first = "  " + std::string(setting.name);
    if (first.size() + 1 > kValueColumn) {
      text += first + "\n";
      first.clear();
    }
    first.resize(kValueColumn, ' ');
    text +=
        wrapped(first, std::string(setting.meaning) + ": " + setting.value + "; default " + setting.fallback +
                           (setting.bad == BadSetting::error ? "; else an error" : ""));
  }
  return text.substr(0, text.size() - 1);  // CLI11 ends a footer with its own line break
}

std::vector<std::string> command_paths(const CLI::App& app) {
  std::vector<std::string> paths;
  collect(app, "", paths);
  return paths;
}

void add_help_command(CLI::App& app) {
  auto topic = std::make_shared<std::vector<std::string>>();
  CLI::App* help = app.add_subcommand(
      "help", "Help on a topic: environment (variables, exit status), commands (their list), or a COMMAND");
  help->add_option("TOPIC", *topic, "environment, commands, or a command's words (db info)");
  help->callback([&app, topic] {
    if (topic->empty()) {
      std::fputs(full_help(app, app.get_name()).c_str(), stdout);
      return;
    }
    if (*topic == std::vector<std::string>{"environment"}) {
      std::printf("%s\n", environment_help().c_str());
      return;
    }
    if (*topic == std::vector<std::string>{"commands"}) {
      for (const std::string& path : command_paths(app)) std::printf("%s\n", path.c_str());
      return;
    }
    const CLI::App* command = &app;
    std::string name = app.get_name();
    for (const std::string& word : *topic) {
      const CLI::App* next = nullptr;
      for (const CLI::App* sub : command->get_subcommands({}))
        if (sub->check_name(word)) next = sub;
      if (!next || next->get_name() == "help") {
        std::string known;
        for (const std::string& path : command_paths(app)) known += ", " + path;
        throw Error("no help on '" + word + "' (topics: environment, commands" + known + ")");
      }
      name += " " + next->get_name();
      command = next;
    }
    std::fputs(full_help(*command, name).c_str(), stdout);
  });
}

}  // namespace sfc::cli
