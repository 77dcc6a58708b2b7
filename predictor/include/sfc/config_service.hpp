// ConfigService: the runtime half of the predictor -- what a GEMM call asks
// for its shape, answered from tuned winners loaded once and cached -- and
// nothing of the offline half (no tuning, no timing, no database writes; see
// docs/architecture.md). libsfcconf's C API and sfc::gemm (AutoGemm) are both
// thin layers over it.
//
//   auto service = sfc::ConfigService::open("sfc-tune.table");   // or a database, read-only
//   sfc::Answer a = service.query({m, n, k}, sfc::DType::f32, threads, sfc::Layout::row_major);
//
// query() is thread-safe and, for a shape asked before, costs a hash and a
// few loads (AnswerCache); the first time, a k-d tree search or the model.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "sfc/answer_cache.hpp"
#include "sfc/predictor.hpp"

namespace sfc {

class ConfigService {
 public:
  // The winners of `path` (a tuning table, a database opened read-only, or a
  // folder of them: see load_tuning_tables)
  // for `platform` ("" reads SFC_PLATFORM, then this machine; "any"; a hash:
  // see PlatformChoice), answered for this machine. No path: no tuned data,
  // every shape gets the model or the default tier. Throws SourceError when
  // the file cannot be used, sfc::Error for a bad platform choice.
  static ConfigService open(const std::optional<std::string>& path, std::string_view platform = "");

  // Starts recording shapes when SFC_RECORD asks for it (ShapeRecorder; read once per process).
  explicit ConfigService(ConfigPredictor predictor);

  // The answer for a GEMM about to run; counted in the shape record when one
  // is active (sfc/shape_recorder.hpp), with transposes unknown. Throws
  // sfc::Error for sizes or threads below 1.
  Answer query(const GemmShape& shape, DType dtype, int threads, Layout layout = Layout::blocked) const;

  // The same answer, not counted: for callers that record the GEMM call
  // themselves (AutoGemm, which knows its transposes) or only look.
  Answer lookup(const GemmShape& shape, DType dtype, int threads, Layout layout = Layout::blocked) const;

  const ConfigPredictor& predictor() const { return predictor_; }
  // The file open() read, or "" when none.
  const std::string& path() const { return path_; }

 private:
  ConfigPredictor predictor_;
  std::string path_;
  // Filled by const queries: the cache is built for concurrent readers and
  // writers (lock free), so caching an answer is not a visible change.
  mutable AnswerCache cache_;
};

}  // namespace sfc
