// Where a predictor's tuned winners come from: an exported tuning table or a
// TuningStore database, chosen by how well their platform matches this
// machine (sfc/platform.hpp): exact or compatible platforms are used, a
// foreign one only when forced (`any`) or named by its hash.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sfc/error.hpp"
#include "sfc/platform.hpp"
#include "sfc/tuning_table.hpp"

namespace sfc {

// Why a tuning source could not be used; the C API maps each to a code.
class SourceError : public Error {
 public:
  enum class Kind {
    unreadable,  // missing, a directory, or no permission
    corrupt,     // truncated, edited, empty, of an unknown format or schema
    platform,    // holds nothing for the platform asked for
  };
  SourceError(Kind kind, const std::string& what) : Error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// Which platform's results to load.
struct PlatformChoice {
  enum class Kind {
    this_machine,  // exact, else compatible platforms; foreign ones are refused
    any,           // the best match the file has, foreign included (forced)
    hash,          // exactly the platform of that hash, whatever it is
  };
  Kind kind = Kind::this_machine;
  std::string hash;  // for Kind::hash

  // "" or "this": this_machine; "any"; 16 hex digits: that hash. Throws sfc::Error.
  static PlatformChoice parse(std::string_view text);
  // parse(text), or, when text is empty, parse(the value of SFC_PLATFORM).
  static PlatformChoice parse_or_environment(std::string_view text);
};

// The tables of `path` (a TuningStore database when the file starts with
// SQLite's header, else a tuning-table file) that `choice` selects, at most
// one platform per thread count: for this machine the exact platform, else the
// closest compatible one (most tuned shapes on a tie). When `path` is a
// folder, its tables and databases are chosen from per (dtype, threads) as
// survey_tuning_folder() says, and SFC_VERBOSE prints each choice on stderr.
// Throws SourceError, naming the file and, for a platform refused, the fields
// that differ (for a folder: what each of its files is).
std::vector<TuningTable> load_tuning_tables(const std::string& path, const PlatformChoice& choice = {});

// One table of a folder (a tuning-table file, or one platform of a database)
// and what a folder choice made of it.
struct FolderTable {
  std::string file;                     // the path in the folder
  std::optional<Platform> platform;     // absent when the file could not be read
  std::optional<PlatformMatch> match;   // with this machine; absent with platform
  std::vector<DType> dtypes;            // what it holds (from the file name when it follows the pattern)
  std::size_t shapes = 0;               // how many tuned shapes (all dtypes)
  bool reduced = false;                 // a "-small" or "-quick" table: a full one is preferred
  std::string problem;                  // why it is unusable ("" when usable)
  std::vector<std::string> chosen_for;  // "f32 2 threads", ...: the answers it serves
};

// Every *.table, *.sfctable and *.db file of `folder` and, per (dtype,
// threads), the one that serves it under `choice`: for this machine an exact
// platform before a compatible one (foreign refused), then a full table before
// a "-small"/"-quick" one, then the most shapes, then the first name. File
// names follow `<platform-hash>-<dtype>-t<threads>[-suffix].table`; a table
// file is read up to its shape count only (the chosen ones are loaded in
// full by load_tuning_tables). Throws SourceError when `folder` cannot be listed.
std::vector<FolderTable> survey_tuning_folder(const std::string& folder, const PlatformChoice& choice = {});

// The tables installed with the library, <prefix>/share/sfc-tune/tables,
// found relative to the shared object (or program) that holds this code:
// where sfc::gemm reads when SFC_TUNING is unset. nullopt when that folder
// does not exist (a build tree, or an install without tables).
std::optional<std::string> installed_tuning_folder();

// True when `platform` is this machine's hardware (threads aside).
bool is_this_machine(const Platform& platform);

// "1f2e3d4c5b6a7980 (AMD EPYC, 2 threads, cpx)": a platform in one phrase.
std::string describe(const Platform& platform);

}  // namespace sfc
