#include "sfc/config_service.hpp"

#include "sfc/fp_flags.hpp"
#include "sfc/shape_recorder.hpp"
#include "sfc/tuning_source.hpp"

namespace sfc {

ConfigService ConfigService::open(const std::optional<std::string>& path, std::string_view platform) {
  const PreservedFpFlags caller_flags;
  // What the answers depend on beside the file: the platform asked for
  // (SFC_PLATFORM when the caller names none) and this machine's topology
  // (hwloc's, or HWLOC_XMLFILE's). Either unusable is the tuning's failure
  // (SourceError), not the engine's: the caller's argument stays an sfc::Error.
  PlatformChoice choice;
  try {
    if (path) choice = PlatformChoice::parse_or_environment(platform);
  } catch (const SourceError&) {
    throw;
  } catch (const Error& e) {
    if (!platform.empty()) throw;
    throw SourceError(SourceError::Kind::platform, e.what());
  }
  Platform here;
  try {
    here = detect_platform();
  } catch (const SourceError&) {
    throw;
  } catch (const Error& e) {
    throw SourceError(SourceError::Kind::unreadable, std::string("this machine's topology: ") + e.what());
  }
  std::vector<TuningTable> tables;
  if (path) tables = load_tuning_tables(*path, choice);
  // Without tuned data this machine's L2 still sizes the default's k_block_factor.
  ConfigService service(ConfigPredictor(tables, {}, here));
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
