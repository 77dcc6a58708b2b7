// libsfcconf's C API over ConfigService. Every entry point
// is noexcept in effect: C++ exceptions become status codes and a
// thread-local message here, at the boundary.
#include "sfcconf.h"

#include <new>
#include <string>

#include "sfc/config_service.hpp"
#include "sfc/shape_recorder.hpp"
#include "sfc/tuning_source.hpp"

struct sfcconf_handle {
  sfc::ConfigService service;
};

namespace {

thread_local std::string last_error;

sfcconf_status fail(sfcconf_status status, const char* message) noexcept {
  try {
    last_error = message;
  } catch (...) {
    last_error.clear();  // no memory for the message: the code still tells
  }
  return status;
}

sfcconf_status status_of(sfc::SourceError::Kind kind) {
  switch (kind) {
    case sfc::SourceError::Kind::unreadable: return SFCCONF_ERR_UNREADABLE;
    case sfc::SourceError::Kind::corrupt: return SFCCONF_ERR_CORRUPT;
    case sfc::SourceError::Kind::platform: return SFCCONF_ERR_PLATFORM;
  }
  return SFCCONF_ERR_INTERNAL;
}

// Runs `body`, turning whatever it throws into a status and a message.
template <class Body>
sfcconf_status guarded(Body&& body) noexcept {
  try {
    return body();
  } catch (const sfc::SourceError& e) {
    return fail(status_of(e.kind()), e.what());
  } catch (const sfc::Error& e) {
    return fail(SFCCONF_ERR_ARGUMENT, e.what());
  } catch (const std::bad_alloc&) {
    return fail(SFCCONF_ERR_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(SFCCONF_ERR_INTERNAL, e.what());
  } catch (...) {
    return fail(SFCCONF_ERR_INTERNAL, "unknown exception");
  }
}

sfcconf_tier tier_of(sfc::Tier tier) {
  switch (tier) {
    case sfc::Tier::exact: return SFCCONF_TIER_EXACT;
    case sfc::Tier::nearest: return SFCCONF_TIER_NEAREST;
    case sfc::Tier::model: return SFCCONF_TIER_MODEL;
    case sfc::Tier::default_config: return SFCCONF_TIER_DEFAULT;
  }
  return SFCCONF_TIER_DEFAULT;
}

void fill(const sfc::Answer& a, sfcconf_answer* out, sfcconf_platform_match* platform) {
  *out = {a.knobs.k_layers, a.knobs.k_block_factor, tier_of(a.tier), a.distance, a.nearest.m, a.nearest.n,
          a.nearest.k};
  if (platform) *platform = static_cast<sfcconf_platform_match>(a.platform);  // same order, see below
}
static_assert(int(sfc::Layout::blocked) == SFCCONF_BLOCKED &&
              int(sfc::Layout::row_major) == SFCCONF_ROW_MAJOR &&
              int(sfc::Layout::col_major) == SFCCONF_COL_MAJOR);
static_assert(int(sfc::PlatformMatch::exact) == SFCCONF_PLATFORM_EXACT &&
              int(sfc::PlatformMatch::compatible) == SFCCONF_PLATFORM_COMPATIBLE &&
              int(sfc::PlatformMatch::foreign) == SFCCONF_PLATFORM_FOREIGN);

}  // namespace

extern "C" {

sfcconf_status sfcconf_open(const char* path, const char* platform, sfcconf_handle** out) {
  if (!out) return fail(SFCCONF_ERR_ARGUMENT, "sfcconf_open: out is NULL");
  *out = nullptr;
  return guarded([&] {
    *out = new sfcconf_handle{sfc::ConfigService::open(path ? std::optional<std::string>(path) : std::nullopt,
                                                       platform ? platform : "")};
    return SFCCONF_OK;
  });
}

sfcconf_status sfcconf_query(sfcconf_handle* conf, int64_t m, int64_t n, int64_t k, sfcconf_dtype dtype,
                             int threads, sfcconf_answer* answer) {
  return sfcconf_query_layout(conf, m, n, k, dtype, threads, SFCCONF_BLOCKED, answer);
}

sfcconf_status sfcconf_query_layout(sfcconf_handle* conf, int64_t m, int64_t n, int64_t k,
                                    sfcconf_dtype dtype, int threads, sfcconf_layout layout,
                                    sfcconf_answer* answer) {
  return sfcconf_query_match(conf, m, n, k, dtype, threads, layout, answer, nullptr);
}

sfcconf_status sfcconf_query_match(sfcconf_handle* conf, int64_t m, int64_t n, int64_t k, sfcconf_dtype dtype,
                                   int threads, sfcconf_layout layout, sfcconf_answer* answer,
                                   sfcconf_platform_match* platform) {
  return sfcconf_query_source(conf, m, n, k, dtype, threads, layout, answer, platform, nullptr);
}

sfcconf_status sfcconf_query_source(sfcconf_handle* conf, int64_t m, int64_t n, int64_t k,
                                    sfcconf_dtype dtype, int threads, sfcconf_layout layout,
                                    sfcconf_answer* answer, sfcconf_platform_match* platform,
                                    sfcconf_layout* source) {
  if (!conf || !answer) return fail(SFCCONF_ERR_ARGUMENT, "sfcconf_query: conf or answer is NULL");
  if (dtype != SFCCONF_F32 && dtype != SFCCONF_F64 && dtype != SFCCONF_BF16)
    return fail(SFCCONF_ERR_ARGUMENT, "unknown dtype (expected SFCCONF_F32, _F64 or _BF16)");
  if (layout != SFCCONF_BLOCKED && layout != SFCCONF_ROW_MAJOR && layout != SFCCONF_COL_MAJOR)
    return fail(SFCCONF_ERR_ARGUMENT, "unknown layout (expected SFCCONF_BLOCKED, _ROW_MAJOR or _COL_MAJOR)");
  const sfc::GemmShape shape{m, n, k};
  const auto type = dtype == SFCCONF_F32   ? sfc::DType::f32
                    : dtype == SFCCONF_F64 ? sfc::DType::f64
                                           : sfc::DType::bf16;
  const auto entry = layout == SFCCONF_BLOCKED     ? sfc::Layout::blocked
                     : layout == SFCCONF_ROW_MAJOR ? sfc::Layout::row_major
                                                   : sfc::Layout::col_major;
  return guarded([&] {  // query() refuses sizes or threads < 1 with an sfc::Error
    const sfc::Answer a = conf->service.query(shape, type, threads, entry);
    fill(a, answer, platform);
    if (source) *source = static_cast<sfcconf_layout>(a.borrowed_from.value_or(entry));  // same order
    return SFCCONF_OK;
  });
}

void sfcconf_close(sfcconf_handle* conf) { delete conf; }

sfcconf_status sfcconf_record_open(const char* path) {
  if (!path || !*path) return fail(SFCCONF_ERR_ARGUMENT, "sfcconf_record_open: path is NULL or empty");
  return guarded([&] {
    try {
      sfc::ShapeRecorder::start(path);
    } catch (const sfc::RecordFormatError& e) {
      return fail(SFCCONF_ERR_CORRUPT, e.what());
    } catch (const sfc::Error& e) {
      return fail(SFCCONF_ERR_UNREADABLE, e.what());
    }
    return SFCCONF_OK;
  });
}

sfcconf_status sfcconf_record_flush(void) {
  return guarded([] {
    try {
      sfc::ShapeRecorder::flush_active();
    } catch (const sfc::Error& e) {
      return fail(SFCCONF_ERR_UNREADABLE, e.what());
    }
    return SFCCONF_OK;
  });
}

sfcconf_status sfcconf_record_close(void) {
  return sfc::ShapeRecorder::stop() ? SFCCONF_OK
                                    : fail(SFCCONF_ERR_UNREADABLE,
                                           "sfcconf_record_close: the last counts could not be written "
                                           "(the reason is on stderr)");
}

const char* sfcconf_last_error(void) { return last_error.c_str(); }

const char* sfcconf_status_name(sfcconf_status status) {
  switch (status) {
    case SFCCONF_OK: return "ok";
    case SFCCONF_ERR_ARGUMENT: return "argument";
    case SFCCONF_ERR_UNREADABLE: return "unreadable";
    case SFCCONF_ERR_CORRUPT: return "corrupt";
    case SFCCONF_ERR_PLATFORM: return "platform";
    case SFCCONF_ERR_MEMORY: return "memory";
    case SFCCONF_ERR_INTERNAL: return "internal";
  }
  return "unknown";
}

const char* sfcconf_platform_match_name(sfcconf_platform_match match) {
  switch (match) {
    case SFCCONF_PLATFORM_EXACT: return "exact";
    case SFCCONF_PLATFORM_COMPATIBLE: return "compatible";
    case SFCCONF_PLATFORM_FOREIGN: return "foreign";
  }
  return "unknown";
}

const char* sfcconf_tier_name(sfcconf_tier tier) {
  switch (tier) {
    case SFCCONF_TIER_EXACT: return "exact";
    case SFCCONF_TIER_NEAREST: return "nearest";
    case SFCCONF_TIER_MODEL: return "model";
    case SFCCONF_TIER_DEFAULT: return "default";
  }
  return "unknown";
}

}  // extern "C"
