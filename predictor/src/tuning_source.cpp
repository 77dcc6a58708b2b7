// Loading tuned winners for a platform from either kind of file.
#include "sfc/tuning_source.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "sfc/platform_fields.hpp"
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

// ---- folders of tables ------------------------------------------------------

namespace fs = std::filesystem;

// The platform and shape count of a tuning-table file, read up to its
// "shapes" line (TuningTable::load reads the rest). Throws sfc::Error.
std::pair<Platform, std::size_t> read_table_head(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(std::string("cannot read it: ") + std::strerror(errno));
  std::string line;
  if (!std::getline(in, line) || !line.starts_with("sfc-table ")) throw Error("not a tuning table");
  Platform platform;
  std::string hash;
  while (std::getline(in, line)) {
    if (line.starts_with("platform ")) {
      const std::string rest = line.substr(std::string_view("platform ").size());
      const std::size_t space = rest.find(' ');
      if (space == std::string::npos) throw Error("a platform line needs a field and a value");
      const std::string field = rest.substr(0, space), value = rest.substr(space + 1);
      if (field == "hash") {
        hash = value;
        continue;
      }
      for (const PlatformField& f : platform_fields())
        if (f.name == field) f.set(platform, value);
    } else if (line.starts_with("shapes ")) {
      const long count = std::strtol(line.c_str() + std::string_view("shapes ").size(), nullptr, 10);
      if (count < 0) throw Error("the shape count must be >= 0");
      verify_platform_hash(platform, hash);
      return {platform, static_cast<std::size_t>(count)};
    }
  }
  throw Error("it ends before its 'shapes' line (truncated?)");
}

// What a file name following `<platform-hash>-<dtype>-t<threads>[-suffix].<ext>`
// says: its dtype and whether it is a reduced ("-small", "-quick") table.
struct NameFields {
  DType dtype;
  bool reduced;
};
std::optional<NameFields> parse_table_name(const fs::path& file) {
  std::vector<std::string> parts;
  const std::string stem = file.stem().string();
  for (std::size_t start = 0;;) {
    const std::size_t dash = stem.find('-', start);
    parts.push_back(stem.substr(start, dash == std::string::npos ? std::string::npos : dash - start));
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  if (parts.size() < 3 || parts.size() > 4 || !is_hex_hash(parts[0]) || parts[2].size() < 2 ||
      parts[2][0] != 't' ||
      !std::all_of(parts[2].begin() + 1, parts[2].end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  try {
    return NameFields{parse_dtype(parts[1]),
                      parts.size() == 4 && (parts[3] == "small" || parts[3] == "quick")};
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::vector<DType> dtypes_of(const TuningTable& table) {
  std::set<DType> held;
  for (const TunedShape& s : table.shapes) held.insert(s.dtype);
  return {held.begin(), held.end()};
}

bool is_candidate_file(const fs::directory_entry& entry) {
  const std::string ext = entry.path().extension().string();
  std::error_code ignored;
  return (ext == ".table" || ext == ".sfctable" || ext == ".db") && entry.is_regular_file(ignored);
}

// A folder surveyed: its tables, the loaded ones kept (databases, and table
// files whose name did not tell their dtype), and per (threads, dtype) the
// usable tables, best first.
struct Survey {
  std::vector<FolderTable> tables;
  std::map<std::size_t, TuningTable> loaded;  // by index into `tables`
  std::map<std::pair<int, DType>, std::vector<std::size_t>> ranked;
};

Survey survey(const std::string& folder, const PlatformChoice& choice) {
  std::vector<fs::path> files;
  std::error_code error;
  fs::directory_iterator it(folder, error);
  if (error) throw SourceError(Kind::unreadable, "cannot list the folder " + folder + ": " + error.message());
  for (const fs::directory_entry& entry : it)
    if (is_candidate_file(entry)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  Survey out;
  const Platform here = detect_platform();
  auto add = [&](const std::string& file, const TuningTable* table, const Platform& platform,
                 std::size_t shapes, std::vector<DType> dtypes, bool reduced) {
    FolderTable t;
    t.file = file;
    t.platform = platform;
    t.match = compare_platforms(platform, here).match;
    t.dtypes = std::move(dtypes);
    t.shapes = shapes;
    t.reduced = reduced;
    if (table) out.loaded.emplace(out.tables.size(), *table);
    out.tables.push_back(std::move(t));
  };
  for (const fs::path& path : files) {
    const std::string file = path.string();
    try {
      if (has_sqlite_header(file)) {
        for (const TuningTable& table : TuningStore(file, TuningStore::Mode::read_only).tables())
          add(file, &table, table.platform, table.shapes.size(), dtypes_of(table), false);
      } else if (const std::optional<NameFields> name = parse_table_name(path)) {
        const auto [platform, shapes] = read_table_head(file);
        add(file, nullptr, platform, shapes, {name->dtype}, name->reduced);
      } else {
        const TuningTable table = TuningTable::load(file);
        add(file, &table, table.platform, table.shapes.size(), dtypes_of(table), false);
      }
    } catch (const Error& e) {
      FolderTable unusable;
      unusable.file = file;
      unusable.problem = e.what();
      out.tables.push_back(std::move(unusable));
    }
  }
  for (std::size_t i = 0; i < out.tables.size(); ++i) {
    const FolderTable& t = out.tables[i];
    if (!t.platform) continue;
    const bool wanted = choice.kind == PlatformChoice::Kind::any ||
                        (choice.kind == PlatformChoice::Kind::hash ? t.platform->hash() == choice.hash
                                                                   : *t.match != PlatformMatch::foreign);
    if (!wanted) continue;
    for (DType dtype : t.dtypes) out.ranked[{t.platform->threads, dtype}].push_back(i);
  }
  for (auto& [key, indices] : out.ranked)
    std::stable_sort(indices.begin(), indices.end(), [&](std::size_t a, std::size_t b) {
      const FolderTable &x = out.tables[a], &y = out.tables[b];
      if (*x.match != *y.match) return *x.match < *y.match;
      if (x.reduced != y.reduced) return !x.reduced;
      return x.shapes > y.shapes;  // ties keep the name order
    });
  return out;
}

std::string key_text(const std::pair<int, DType>& key) {
  return std::string(to_string(key.second)) + " " + std::to_string(key.first) + " threads";
}

std::string table_phrase(const FolderTable& t) {
  return fs::path(t.file).filename().string() + " (platform " + std::string(to_string(*t.match)) + ", " +
         (t.reduced ? "reduced" : "full") + " table, " + std::to_string(t.shapes) + " shapes)";
}

bool verbose() { return sfc::setting_flag("SFC_VERBOSE"); }

// Why a folder gave nothing: each file and what is wrong with it for `choice`.
SourceError nothing_usable(const std::string& folder, const Survey& s, const PlatformChoice& choice) {
  if (s.tables.empty())
    return SourceError(Kind::unreadable,
                       folder + " holds no tuning tables (*.table, *.sfctable) or databases (*.db)");
  const Platform here = detect_platform();
  std::string text = folder + " holds no table for " +
                     (choice.kind == PlatformChoice::Kind::hash ? "platform " + choice.hash
                                                                : "this machine " + describe(here)) +
                     ":";
  // One entry per platform (a machine ships several tables), then each unreadable file.
  std::vector<std::pair<const FolderTable*, int>> platforms;  // the first table of each, and the count
  std::string unreadable;
  for (const FolderTable& t : s.tables) {
    if (!t.platform || !t.problem.empty()) {
      unreadable += " " + fs::path(t.file).filename().string() + " is unreadable (" + t.problem + ");";
      continue;
    }
    const auto seen = std::ranges::find_if(
        platforms, [&](const auto& p) { return p.first->platform->hash() == t.platform->hash(); });
    if (seen == platforms.end())
      platforms.emplace_back(&t, 1);
    else
      ++seen->second;
  }
  const bool platform_refused = !platforms.empty();
  for (const auto& [t, count] : platforms) {
    text += " " + std::to_string(count) + (count == 1 ? " table" : " tables") + " of " +
            describe(*t->platform) + ", " + std::string(to_string(*t->match));
    if (*t->match != PlatformMatch::exact)
      text += " (" + compare_platforms(*t->platform, here).describe() + ")";
    text += ";";
  }
  text += unreadable;
  if (platform_refused && choice.kind == PlatformChoice::Kind::this_machine)
    text +=
        " tune this machine (sfc-tune tune --search ranked, docs/tuning.md) or use --platform any (or "
        "SFC_PLATFORM=any) to use a foreign one anyway";
  return SourceError(platform_refused ? Kind::platform : Kind::corrupt, text);
}

std::vector<TuningTable> load_folder(const std::string& folder, const PlatformChoice& choice) {
  Survey s = survey(folder, choice);
  const bool say = verbose();
  std::vector<TuningTable> out;
  for (const auto& [key, indices] : s.ranked) {
    for (std::size_t rank = 0; rank < indices.size(); ++rank) {
      FolderTable& t = s.tables[indices[rank]];
      TuningTable table;
      try {
        const auto loaded = s.loaded.find(indices[rank]);
        table = loaded != s.loaded.end() ? loaded->second : TuningTable::load(t.file);
      } catch (const Error& e) {
        t.problem = e.what();
        if (say)
          std::fprintf(stderr, "sfc_verbose,info,tuning_skipped,file=%s,reason=%s\n", t.file.c_str(),
                       e.what());
        continue;
      }
      const bool had_shapes = !table.shapes.empty();
      // A copy: clang 14 cannot capture a structured binding.
      const DType dtype = key.second;
      std::erase_if(table.shapes, [dtype](const TunedShape& shape) { return shape.dtype != dtype; });
      if (had_shapes && table.shapes.empty()) {  // misnamed: its name says a dtype it does not hold
        t.problem = "it holds no " + std::string(to_string(key.second)) + " shapes, though its name says so";
        if (say)
          std::fprintf(stderr, "sfc_verbose,info,tuning_skipped,file=%s,reason=%s\n", t.file.c_str(),
                       t.problem.c_str());
        continue;
      }
      if (say) {
        std::string why = "platform " + std::string(to_string(*t.match)) + ", " +
                          (t.reduced ? "reduced" : "full") + " table, " +
                          std::to_string(table.shapes.size()) + " shapes";
        if (rank + 1 < indices.size()) {
          why += "; preferred over";
          for (std::size_t other = rank + 1; other < indices.size(); ++other)
            why += (other == rank + 1 ? " " : "; ") + table_phrase(s.tables[indices[other]]);
        }
        std::fprintf(stderr, "sfc_verbose,info,tuning_choice,dtype=%s,threads=%d,file=%s,why=%s\n",
                     std::string(to_string(key.second)).c_str(), key.first, t.file.c_str(), why.c_str());
      }
      t.chosen_for.push_back(key_text(key));
      out.push_back(std::move(table));
      break;
    }
  }
  if (out.empty()) throw nothing_usable(folder, s, choice);
  return out;
}

}  // namespace

std::vector<FolderTable> survey_tuning_folder(const std::string& folder, const PlatformChoice& choice) {
  Survey s = survey(folder, choice);
  for (const auto& [key, indices] : s.ranked) s.tables[indices.front()].chosen_for.push_back(key_text(key));
  return std::move(s.tables);
}

std::optional<std::string> installed_tuning_folder() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&installed_tuning_folder), &info) || !info.dli_fname)
    return std::nullopt;
  std::error_code error;
  fs::path object = fs::canonical(info.dli_fname, error);
  // A program's own name may be relative to where it started: its link in /proc then.
  if (error) object = fs::canonical("/proc/self/exe", error);
  if (error) return std::nullopt;
  // <prefix>/lib, <prefix>/lib64, <prefix>/lib/<multiarch> or <prefix>/bin: look up to two levels above.
  fs::path dir = object.parent_path();
  for (int up = 0; up < 2 && dir.has_parent_path(); ++up) {
    dir = dir.parent_path();
    const fs::path tables = dir / "share" / "sfc-tune" / "tables";
    if (fs::is_directory(tables, error)) return tables.string();
  }
  return std::nullopt;
}

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
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) return load_folder(path, choice);
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
