// AutoGemm: the ConfigService's answer per shape, and a pool of plans built with it.
#include "sfc/auto_gemm.hpp"

#include <omp.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "sfc/config_service.hpp"
#include "sfc/error.hpp"
#include "sfc/fp_flags.hpp"
#include "sfc/online_tuner.hpp"
#include "sfc/platform.hpp"
#include "sfc/settings.hpp"
#include "sfc/shape_recorder.hpp"
#include "sfc/threads.hpp"
#include "sfc/tuning_source.hpp"
#include "sfcconf_version.h"

namespace sfc {
namespace {

constexpr std::size_t max_idle_plans = 16;

using PlanKey = TuningKey;

// A plan and the answer it was built with (the tier and distance every call
// of it reports to the shape record and SFC_VERBOSE).
struct PlanWithAnswer {
  std::unique_ptr<GemmPlan> plan;
  Answer answer;
  bool reused = false;  // taken from the idle pool, not built for this call
};

// SFC_VERBOSE: read once per process, so a call pays a load of this flag.
bool verbose_from_environment() {
  static const bool verbose = sfc::setting_flag("SFC_VERBOSE");
  return verbose;
}

RecordTranspose recorded(Transpose t) {
  return t == Transpose::none ? RecordTranspose::none : RecordTranspose::transpose;
}

// SFC_TUNE=online's settings, read once per process.
const std::optional<OnlineTuning>& online_from_environment() {
  static const std::optional<OnlineTuning> settings = OnlineTuning::from_environment();
  return settings;
}

// One line per call, like ONEDNN_VERBOSE: comma-separated, each field named,
// in one fprintf so that lines of concurrent calls do not interleave. `plan`
// says where the plan came from: new, reused, or online tuning's candidate.
void print_verbose(const PlanKey& key, Transpose trans_a, Transpose trans_b, const Answer& answer,
                   const GemmPlan& plan, const char* origin, double seconds) {
  // A borrowed answer says whose shapes gave it: `exact` alone would claim this layout was tuned.
  const std::string tier = answer.borrowed_from
                               ? "borrowed-" + std::string(to_string(answer.tier)) + "(from " +
                                     std::string(to_string(*answer.borrowed_from)) + ")"
                               : std::string(to_string(answer.tier));
  char distance[32];
  if (std::isfinite(answer.distance))
    std::snprintf(distance, sizeof distance, "%.3f", answer.distance);
  else
    std::snprintf(distance, sizeof distance, "inf");
  std::fprintf(stderr,
               "sfc_verbose,gemm,dtype=%s,layout=%s,trans=%s%s,shape=%lldx%lldx%lld,threads=%d,tier=%s,"
               "distance=%s,k_layers=%d,k_block_factor=%d,plan=%s,time_us=%.1f\n",
               std::string(to_string(key.dtype)).c_str(), std::string(to_string(key.layout)).c_str(),
               trans_a == Transpose::none ? "N" : "T", trans_b == Transpose::none ? "N" : "T",
               static_cast<long long>(key.m), static_cast<long long>(key.n), static_cast<long long>(key.k),
               key.threads, tier.c_str(), distance, plan.k_layers(), plan.k_block_factor(), origin,
               seconds * 1e6);
}

// SFC_VERBOSE's first lines, once per opened tuning source: what runs and
// what the tables hold, so a later `tier=default` has its reason in view.
void print_info(const ConfigService& service) {
  const Platform& here = detect_platform();
  std::fprintf(stderr, "sfc_verbose,info,version=%s,isa=%s,kernels=libxsmm %s,cpu=%s,platform=%s%s\n",
               SFCCONF_VERSION_STRING, here.isa.c_str(), here.libxsmm_version.c_str(), here.cpu_model.c_str(),
               here.hash().c_str(), in_forked_child() ? ",forked_child=one thread" : "");
  std::fprintf(stderr, "sfc_verbose,info,tuning=%s\n",
               service.path().empty()
                   ? "none (SFC_TUNING unset, no installed tables for this machine: model or default tier)"
                   : service.path().c_str());
  for (const ConfigPredictor::Group& g : service.predictor().groups())
    std::fprintf(stderr, "sfc_verbose,info,table,dtype=%s,threads=%d,layout=%s,shapes=%zu,platform=%s\n",
                 std::string(to_string(g.dtype)).c_str(), g.threads, std::string(to_string(g.layout)).c_str(),
                 g.shapes, std::string(to_string(g.platform)).c_str());
}

// Why a call's (dtype, threads, layout) gets no tuned answer from a table
// that has some, or "" when it has its own. Said once per process on stderr
// (a silent fall to the model or default tier looks like tuning that works).
std::string coverage_gap(const ConfigService& service, const PlanKey& key) {
  const auto groups = service.predictor().groups();
  if (service.path().empty() || groups.empty()) return "";
  std::string threads_held, layouts_held;
  bool own = false, this_count = false;
  for (const ConfigPredictor::Group& g : groups) {
    if (g.dtype != key.dtype) continue;
    if (g.threads == key.threads) {
      this_count = true;
      own = own || g.layout == key.layout;
      layouts_held += (layouts_held.empty() ? "" : ", ") + std::string(to_string(g.layout));
    } else if (threads_held.find(std::to_string(g.threads)) == std::string::npos) {
      threads_held += (threads_held.empty() ? "" : ", ") + std::to_string(g.threads);
    }
  }
  const std::string what = std::string(to_string(key.dtype)) + " GEMMs on " + std::to_string(key.threads) +
                           (key.threads == 1 ? " thread" : " threads");
  if (!this_count)
    return service.path() + " holds no tuned " + what +
           (threads_held.empty() ? std::string() : " (it has " + threads_held + ")") +
           "; they get the model or default tier: tune this thread count, or run with a thread count it has";
  if (!own)
    return service.path() + " holds no " + std::string(to_string(key.layout)) + " " + what + " (it has " +
           layouts_held + "); their answers are borrowed from another layout";
  return "";
}

}  // namespace

struct AutoGemm::Impl {
  explicit Impl(ConfigService s) : service(std::move(s)), verbose(verbose_from_environment()) {
    if (verbose) print_info(service);
    if (const auto& settings = online_from_environment())
      online = std::make_unique<OnlineTuner>(*settings, service);
  }

  ConfigService service;
  const bool verbose;
  std::unique_ptr<OnlineTuner> online;                 // SFC_TUNE=online; null otherwise
  mutable ForkSafeMutex mutex;                         // guards idle
  std::list<std::pair<PlanKey, PlanWithAnswer>> idle;  // most recently used first

  PlanWithAnswer acquire(const PlanKey& key) {
    {
      const std::lock_guard lock(mutex);
      for (auto it = idle.begin(); it != idle.end(); ++it)
        if (it->first == key) {
          PlanWithAnswer found = std::move(it->second);
          idle.erase(it);
          found.reused = true;
          return found;
        }
    }
    // Not counted here: gemm() records every call, this is only a plan's first.
    const PreservedFpFlags caller_flags;  // answering and planning raise none the caller could see
    const Answer answer = service.lookup({key.m, key.n, key.k}, key.dtype, key.threads, key.layout);
    static std::atomic<bool> gap_said{false};
    if (!gap_said.load(std::memory_order_relaxed))
      if (const std::string gap = coverage_gap(service, key); !gap.empty() && !gap_said.exchange(true))
        std::fprintf(stderr, "sfc-tune: notice: %s (said once per process)\n", gap.c_str());
    return {build(key, answer.knobs), answer, false};
  }

  static std::unique_ptr<GemmPlan> build(const PlanKey& key, const Knobs& knobs) {
    return std::make_unique<GemmPlan>(key.plan_request(knobs));
  }

  void release(const PlanKey& key, PlanWithAnswer plan) noexcept {
    const std::lock_guard lock(mutex);
    try {
      idle.emplace_front(key, std::move(plan));
    } catch (...) {
      return;  // no memory to keep it: the plan is freed instead
    }
    while (idle.size() > max_idle_plans) idle.pop_back();
  }
};

AutoGemm::AutoGemm(const char* tuning_path, const char* platform)
    : impl_(std::make_unique<Impl>(ConfigService::open(
          tuning_path ? std::optional<std::string>(tuning_path) : std::nullopt, platform ? platform : ""))) {}

AutoGemm::~AutoGemm() = default;

Answer AutoGemm::configuration(const GemmShape& shape, DType dtype, int threads, Layout layout) const {
  return impl_->service.lookup(shape, dtype, threads > 0 ? threads : default_threads(), layout);
}

void AutoGemm::gemm(Layout layout, const GemmShape& shape, DType dtype, const void* a, std::int64_t lda,
                    const void* b, std::int64_t ldb, void* c, std::int64_t ldc, int threads) {
  gemm(layout, Transpose::none, Transpose::none, shape, dtype, 1.0, a, lda, b, ldb, 0.0, c, ldc, threads);
}

void AutoGemm::gemm(Layout layout, Transpose trans_a, Transpose trans_b, const GemmShape& shape, DType dtype,
                    double alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,
                    double beta, void* c, std::int64_t ldc, int threads) {
  const PlanKey key{shape.m, shape.n, shape.k, dtype, threads > 0 ? threads : default_threads(), layout};
  PlanWithAnswer plan = impl_->acquire(key);
  // The plan that runs this call: the pool's, or online tuning's candidate.
  GemmPlan* running = plan.plan.get();
  const char* origin = plan.reused ? "reused" : "new";
  std::shared_ptr<GemmPlan> candidate;  // online tuning's, kept by it across the candidate's calls
  OnlineTuner::Step step;
  // Not in a forked child, whose runs on one thread would be stored as the key's thread count's.
  if (impl_->online && plan.answer.tier != Tier::exact && !in_forked_child()) [[unlikely]] {
    const PreservedFpFlags caller_flags;  // the tuner's candidates come from the model
    try {
      step = impl_->online->next(key, plan.answer);
      if (step.kind == OnlineTuner::Step::Kind::winner) {
        // Tuned: the winner's plan replaces this one in the pool, answered as exact from now on.
        plan = {Impl::build(key, step.knobs),
                Answer{step.knobs, Tier::exact, PlatformMatch::exact, 0, shape, std::nullopt, step.timed},
                false};
        running = plan.plan.get();
        origin = "online-winner";
      } else if (step.kind == OnlineTuner::Step::Kind::measure) {
        candidate = step.plan;
        running = candidate.get();
        origin = "online-candidate";
      }
    } catch (...) {
      if (step.kind == OnlineTuner::Step::Kind::measure) impl_->online->skip(key);
      impl_->release(key, std::move(plan));
      throw;
    }
  }
  const bool timed = impl_->verbose || candidate;
  const auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  try {
    running->gemm(layout, trans_a, trans_b, alpha, a, lda, b, ldb, beta, c, ldc);
  } catch (...) {
    if (candidate) impl_->online->skip(key);
    impl_->release(key, std::move(plan));
    throw;
  }
  const double seconds =
      timed ? std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() : 0;
  if (candidate) {
    const PreservedFpFlags product_flags;  // what the GEMM raised, and nothing storing the result adds
    impl_->online->report(key, step.candidate, seconds);
  }
  // Counted once it ran: a call the engine refused is not a shape the program runs.
  if (ShapeRecorder* recorder = ShapeRecorder::active())
    recorder->count({key.m, key.n, key.k, dtype, key.threads, layout, recorded(trans_a), recorded(trans_b)},
                    plan.answer.tier, plan.answer.distance);
  if (impl_->verbose) print_verbose(key, trans_a, trans_b, plan.answer, *running, origin, seconds);
  impl_->release(key, std::move(plan));
}

std::size_t AutoGemm::cached_plans() const {
  const std::lock_guard lock(impl_->mutex);
  return impl_->idle.size();
}

AutoGemm& process_gemm() {
  // Opened once; a failure is kept and reported on every call, not just the first.
  struct ProcessGemm {
    std::unique_ptr<AutoGemm> gemm;
    std::string error;
    SourceError::Kind kind = SourceError::Kind::corrupt;
    bool source = false;
  };
  static const ProcessGemm process = [] {
    const std::optional<std::string> path = sfc::setting_text("SFC_TUNING");
    // Online tuning without SFC_TUNING answers from the database it tunes
    // into, so the next process starts where this one stopped. That file may
    // not hold this machine's results yet: then nothing is read from it.
    const auto& online = online_from_environment();
    if (!path && online && std::filesystem::exists(online->db)) {
      try {
        return ProcessGemm{std::make_unique<AutoGemm>(online->db.c_str()), "", {}, false};
      } catch (const Error& e) {
        std::fprintf(stderr, "sfc-tune: SFC_TUNE_DB=%s: %s; tuning without its results\n", online->db.c_str(),
                     e.what());
      }
    }
    // Without SFC_TUNING, the tables installed beside the library
    // (installed_tuning_folder()); one without this machine's is passed over.
    if (!path)
      if (const std::optional<std::string> installed = installed_tuning_folder()) try {
          return ProcessGemm{std::make_unique<AutoGemm>(installed->c_str()), "", {}, false};
        } catch (const Error& e) {
          if (verbose_from_environment())
            std::fprintf(stderr, "sfc_verbose,info,installed_tables=%s,unused=%s\n", installed->c_str(),
                         e.what());
        }
    try {
      return ProcessGemm{std::make_unique<AutoGemm>(path ? path->c_str() : nullptr), "", {}, false};
    } catch (const SourceError& e) {
      return ProcessGemm{nullptr, e.what(), e.kind(), true};
    } catch (const Error& e) {
      return ProcessGemm{nullptr, e.what(), {}, false};
    }
  }();
  if (!process.gemm) {
    if (process.source) throw SourceError(process.kind, "SFC_TUNING: " + process.error);
    throw Error("SFC_TUNING: " + process.error);
  }
  return *process.gemm;
}

void gemm(Layout layout, const GemmShape& shape, DType dtype, const void* a, std::int64_t lda, const void* b,
          std::int64_t ldb, void* c, std::int64_t ldc, int threads) {
  process_gemm().gemm(layout, shape, dtype, a, lda, b, ldb, c, ldc, threads);
}

}  // namespace sfc
