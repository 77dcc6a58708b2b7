#include "sfc/config_service.hpp"

#include "fp_flags.hpp"

#include "sfc/shape_recorder.hpp"
#include "sfc/tuning_source.hpp"

namespace sfc {

ConfigService ConfigService::open(const std::optional<std::string>& path, std::string_view platform) {
  const PreservedFpFlags caller_flags;
  std::vector<TuningTable> tables;
  if (path) tables = load_tuning_tables(*path, PlatformChoice::parse_or_environment(platform));
  // Without tuned data this machine's L2 still sizes the default's k_block_factor.
  ConfigService service(ConfigPredictor(tables, {}, detect_platform()));
  if (path) service.path_ = *path;
  return service;
}

ConfigService::ConfigService(ConfigPredictor predictor) : predictor_(std::move(predictor)) {
  ShapeRecorder::start_from_environment();
}

Answer ConfigService::query(const GemmShape& shape, DType dtype, int threads, Layout layout) const {
  const Answer answer = lookup(shape, dtype, threads, layout);
  // After lookup(), which refused bad requests: only valid shapes are counted.
  if (ShapeRecorder* recorder = ShapeRecorder::active()) [[unlikely]]
    recorder->count({shape.m, shape.n, shape.k, dtype, threads, layout, RecordTranspose::unknown,
                     RecordTranspose::unknown},
                    answer.tier, answer.distance);
  return answer;
}

Answer ConfigService::lookup(const GemmShape& shape, DType dtype, int threads, Layout layout) const {
  if (const auto cached = cache_.find(shape, dtype, threads, layout)) return *cached;
  const PreservedFpFlags caller_flags;
  const Answer answer = predictor_.query(shape, dtype, threads, layout);  // validates the request
  cache_.insert(shape, dtype, threads, layout, answer);
  return answer;
}

}  // namespace sfc
