// Where a predictor's tuned winners come from: an exported tuning table or a
// TuningStore database, chosen by how well their platform matches this
// machine (sfc/platform.hpp): exact or compatible platforms are used, a
// foreign one only when forced (`any`) or named by its hash.
#pragma once
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
// closest compatible one (most tuned shapes on a tie). Throws SourceError,
// naming the file and, for a platform refused, the fields that differ.
std::vector<TuningTable> load_tuning_tables(const std::string& path, const PlatformChoice& choice = {});

// True when `platform` is this machine's hardware (threads aside).
bool is_this_machine(const Platform& platform);

// "1f2e3d4c5b6a7980 (AMD EPYC, 2 threads, cpx)": a platform in one phrase.
std::string describe(const Platform& platform);

}  // namespace sfc
