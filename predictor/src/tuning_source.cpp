// Loading tuned winners for a platform from either kind of file.
#include "sfc/tuning_source.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "sfc/tuning_store.hpp"

namespace sfc {
namespace {

using Kind = SourceError::Kind;

// Every SQLite 3 database file starts with these 16 bytes.
constexpr char sqlite_header[] = "SQLite format 3";

bool is_sqlite_file(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw SourceError(Kind::unreadable, path + " is a directory, not a tuning table or database");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SourceError(Kind::unreadable, "cannot read " + path + ": " + std::strerror(errno));
  char head[sizeof sqlite_header] = {};
  in.read(head, sizeof head);
  if (in.gcount() == 0) throw SourceError(Kind::corrupt, path + " is empty");
  return in.gcount() == sizeof head && std::memcmp(head, sqlite_header, sizeof head) == 0;
}

std::string list(const std::vector<Platform>& platforms) {
  std::string text;
  for (const Platform& p : platforms) text += (text.empty() ? "" : ", ") + describe(p);
  return text.empty() ? "none" : text;
}

// This machine's hash for every thread count asked about, computed once each.
class ThisMachine {
 public:
  bool is(const Platform& p) {
    auto [entry, added] = hashes_.try_emplace(p.threads);
    if (added) entry->second = detect_platform(p.threads).hash();
    return entry->second == p.hash();
  }
  std::string describe_for(int threads) { return describe(detect_platform(threads)); }

 private:
  std::map<int, std::string> hashes_;
};

std::vector<TuningTable> from_table_file(const std::string& path, const std::string& wanted) {
  TuningTable table;
  try {
    table = TuningTable::load(path);
  } catch (const Error& e) {
    throw SourceError(Kind::corrupt, e.what());
  }
  const Platform& p = table.platform;
  ThisMachine here;
  if (wanted.empty() ? !here.is(p) : p.hash() != wanted)
    throw SourceError(
        Kind::platform,
        path + " was tuned on platform " + describe(p) + ", not " +
            (wanted.empty() ? "this machine " + here.describe_for(p.threads) : wanted) +
            (wanted.empty() ? "; name its platform hash to use it anyway" : ""));
  return {std::move(table)};
}

std::vector<TuningTable> from_database(const std::string& path, const std::string& wanted) {
  try {
    const TuningStore store(path, TuningStore::Mode::read_only);
    const std::vector<Platform> platforms = store.platforms();
    ThisMachine here;
    std::vector<TuningTable> tables;
    for (const Platform& p : platforms)
      if (wanted.empty() ? here.is(p) : p.hash() == wanted) tables.push_back(store.table(p.hash()));
    if (tables.empty())
      throw SourceError(Kind::platform,
                        path + " holds no results for " +
                            (wanted.empty() ? "this machine " + here.describe_for(0) : wanted) +
                            "; it holds platforms: " + list(platforms) +
                            (wanted.empty() ? " (name one by hash to use it anyway)" : ""));
    return tables;
  } catch (const SourceError&) {
    throw;
  } catch (const Error& e) {
    throw SourceError(Kind::corrupt, e.what());
  }
}

}  // namespace

std::vector<TuningTable> load_tuning_tables(const std::string& path,
                                            const std::string& platform_hash) {
  return is_sqlite_file(path) ? from_database(path, platform_hash)
                              : from_table_file(path, platform_hash);
}

bool is_this_machine(const Platform& platform) { return ThisMachine().is(platform); }

std::string describe(const Platform& p) {
  return p.hash() + " (" + p.cpu_model + ", " + std::to_string(p.threads) + " threads, " +
         (p.isa.empty() ? "unknown ISA" : p.isa) + ")";
}

}  // namespace sfc
