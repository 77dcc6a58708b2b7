// Loading tuned winners for a platform from either kind of file.
#include "sfc/tuning_source.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "sfc/settings.hpp"
#include "sfc/tuning_store.hpp"

namespace sfc {
namespace {

using Kind = SourceError::Kind;

bool is_sqlite_file(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw SourceError(Kind::unreadable, path + " is a directory, not a tuning table or database");
  // A pipe or device would block or never end: checked before anything opens it.
  if (std::filesystem::exists(path, ignored) && !std::filesystem::is_regular_file(path, ignored))
    throw SourceError(Kind::unreadable, "cannot read " + path + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SourceError(Kind::unreadable, "cannot read " + path + ": " + std::strerror(errno));
  if (in.get() == std::ifstream::traits_type::eof()) throw SourceError(Kind::corrupt, path + " is empty");
  return has_sqlite_header(path);
}

std::vector<TuningTable> read_all(const std::string& path) {
  try {
    if (is_sqlite_file(path)) return TuningStore(path, TuningStore::Mode::read_only).tables();
    return {TuningTable::load(path)};
  } catch (const SourceError&) {
    throw;
  } catch (const Error& e) {
    throw SourceError(Kind::corrupt, e.what());
  }
}

bool is_hex_hash(std::string_view text) {
  return text.size() == 16 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// Picks, per thread count, the table that serves it best: the better match,
// then the most shapes. `refuse_foreign` drops foreign platforms first.
std::vector<TuningTable> best_per_thread_count(std::vector<TuningTable> tables, const Platform& here,
                                               bool refuse_foreign) {
  std::map<int, std::pair<PlatformMatch, std::size_t>> chosen;  // threads -> (match, index)
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const PlatformMatch match = compare_platforms(tables[i].platform, here).match;
    if (refuse_foreign && match == PlatformMatch::foreign) continue;
    const auto [entry, added] = chosen.try_emplace(tables[i].platform.threads, match, i);
    const TuningTable& held = tables[entry->second.second];
    if (!added && (match < entry->second.first ||
                   (match == entry->second.first && tables[i].shapes.size() > held.shapes.size())))
      entry->second = {match, i};
  }
  std::vector<TuningTable> out;
  for (auto& [threads, pick] : chosen) out.push_back(std::move(tables[pick.second]));
  return out;
}

std::string refusal(const std::string& path, const std::vector<TuningTable>& tables, const Platform& here) {
  std::string text = path + " holds no results for this machine " + describe(here) + ":";
  for (const TuningTable& t : tables)
    text +=
        " " + describe(t.platform) + " is foreign (" + compare_platforms(t.platform, here).describe() + ");";
  if (tables.empty()) text += " it holds no platform;";
  return text + " use --platform any (or SFC_PLATFORM=any) to use it anyway";
}

}  // namespace

PlatformChoice PlatformChoice::parse(std::string_view text) {
  if (text.empty() || text == "this") return {};
  if (text == "any") return {Kind::any, ""};
  if (is_hex_hash(text)) return {Kind::hash, std::string(text)};
  throw Error("platform '" + std::string(text) +
              "' is none of: this (this machine's exact or compatible results), any (whatever the file "
              "holds), or a platform hash of 16 hex digits (sfc-tune db info lists them)");
}

PlatformChoice PlatformChoice::parse_or_environment(std::string_view text) {
  if (!text.empty()) return parse(text);
  const std::optional<std::string> environment = sfc::setting_text("SFC_PLATFORM");
  if (!environment) return {};
  try {
    return parse(*environment);
  } catch (const Error&) {
    sfc::refuse_setting("SFC_PLATFORM", *environment);  // throws: the table makes it an error
  }
  return {};
}

std::vector<TuningTable> load_tuning_tables(const std::string& path, const PlatformChoice& choice) {
  std::vector<TuningTable> tables = read_all(path);
  if (choice.kind == PlatformChoice::Kind::hash) {
    std::string held;
    for (TuningTable& t : tables) {
      if (t.platform.hash() == choice.hash) return {std::move(t)};
      held += (held.empty() ? "" : ", ") + describe(t.platform);
    }
    throw SourceError(Kind::platform, path + " holds no platform " + choice.hash + "; it holds " +
                                          (held.empty() ? "none" : held));
  }
  const Platform here = detect_platform();
  std::vector<TuningTable> chosen =
      best_per_thread_count(tables, here, choice.kind == PlatformChoice::Kind::this_machine);
  if (chosen.empty()) throw SourceError(Kind::platform, refusal(path, tables, here));
  return chosen;
}

bool is_this_machine(const Platform& platform) {
  return compare_platforms(platform, detect_platform(platform.threads)).match == PlatformMatch::exact;
}

std::string describe(const Platform& p) {
  return p.hash() + " (" + p.cpu_model + ", " + std::to_string(p.threads) + " threads, " +
         (p.isa.empty() ? "unknown ISA" : p.isa) + ")";
}

}  // namespace sfc
