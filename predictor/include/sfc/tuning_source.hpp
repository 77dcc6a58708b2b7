// Where a predictor's tuned winners come from: an exported tuning table or a
// TuningStore database, for this machine unless another platform is named.
// Results only carry over between machines with the same fingerprint, so a
// file from elsewhere is refused unless its platform is asked for by hash.
#pragma once
#include <string>
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

// The tables of `path` (a TuningStore database when the file starts with
// SQLite's header, else a tuning-table file). With `platform_hash` empty,
// those of this machine, at whatever thread counts were tuned; otherwise
// those of exactly that platform. Throws SourceError, naming the file and,
// for a platform mismatch, the platforms it does hold.
std::vector<TuningTable> load_tuning_tables(const std::string& path,
                                            const std::string& platform_hash = "");

// True when `platform` is this machine running `platform.threads` threads.
bool is_this_machine(const Platform& platform);

// "1f2e3d4c5b6a7980 (AMD EPYC, 2 threads, cpx)": a platform in one phrase.
std::string describe(const Platform& platform);

}  // namespace sfc
