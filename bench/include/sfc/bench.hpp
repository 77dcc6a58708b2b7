// `sfc-tune bench`: SFC-CA GEMM against peer libraries, shape by shape in one
// process, every implementation timed with the tuner's cold-input method
// (sfc/measure.hpp) and the same warm-up and repetitions.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sfc/gemm.hpp"
#include "sfc/gemm_peer.hpp"
#include "sfc/knobs.hpp"
#include "sfc/measure.hpp"
#include "sfc/roofline.hpp"

namespace sfc {

// Chooses SFC-CA's configuration for a shape: fixed, from the tuning store,
// from a predictor, or searched on the spot (quick_search_picker).
using ConfigPicker = std::function<Knobs(const GemmShape& shape)>;

struct BenchOptions {
  DType dtype = DType::f32;
  int threads = 1;
  // SFC-CA's entry: blocked times plan.execute on blocked operands; row_major
  // and col_major time plan.gemm on plain matrices, packing included. The
  // peers get the same plain matrices and the same call (`call`); with the
  // blocked entry they run C = A * B on plain row-major matrices.
  Layout layout = Layout::blocked;
  int warmup = 2;
  int reps = 10;
  // Each shape's implementations are timed `passes` times in turn (SFC-CA,
  // each peer, SFC-CA, ...), `reps` runs each time; a shape's timing pools
  // its passes. A burst of interference then lands on one pass of one
  // implementation, not on all the runs of whichever was timed during it.
  int passes = 1;
  // Each pass runs at least this many seconds per implementation: a shape's
  // reps grow to min_seconds over the roofline's time for it (the fastest any
  // implementation can be), the same count for every implementation, at most
  // kMaxBenchReps. The minimum of a sub-millisecond shape's few runs moves
  // between grid runs on a noisy machine; more runs pin it down. 0: reps only.
  double min_seconds = 0;
  // The time of a shape and implementation: its fastest cold run (as the
  // tuner ranks) or the mean of its runs (as the paper reports).
  Statistic statistic = Statistic::min;
  // The BLAS arguments on a plain entry (transposes, alpha, beta), for SFC-CA
  // and every peer alike.
  GemmArguments call;
  // More SFC-CA calls on the same plan, timed in turn with the rest and
  // reported as implementations of their own (variant_name()): NT against
  // NN, or beta = 1 against beta = 0, side by side in one run.
  std::vector<GemmArguments> variants;
  // Count peers that say they are not a contender (GemmPeer::not_a_contender:
  // a generic, reference BLIS) in the best-peer ratio too. Off: they are
  // timed and listed, and a note says why they are left out.
  bool count_every_peer = false;
  // Checked before each shape: once set (sfc-tune bench sets it on SIGINT,
  // SIGTERM or SIGHUP), the run ends there and reports the shapes it finished.
  const std::atomic<bool>* stop = nullptr;
};

// A variant's name in reports: "sfc-ca:" and its transposes, then alpha and
// beta where they differ from `reference`'s ("sfc-ca:NN:beta=1").
std::string variant_name(const GemmArguments& variant, const GemmArguments& reference);

struct ShapeMeasurement {
  GemmShape shape;
  Knobs config;  // as the plan ran it (after clamping)
  double roofline_gflops = 0;
  std::vector<Timing> timings;  // one per implementation, in BenchResult order
  // The same runs pass by pass (BenchOptions::passes), [pass][implementation]:
  // `timings` pools them. Each pass is a side-by-side comparison of its own.
  std::vector<std::vector<Timing>> passes = {};
  // Largest |C - C_ref| of SFC-CA and every peer against an fp64 reference of
  // the same call from the same inputs (and the same initial C), relative to
  // the dtype's tolerance: <= 1 means every result is right.
  double max_error_ratio = 0;
  // The implementation with that largest error (BenchResult order).
  std::size_t worst_implementation = 0;
};

struct BenchResult {
  Statistic statistic = Statistic::min;      // BenchOptions::statistic
  std::vector<std::string> implementations;  // "sfc-ca" first, then each peer that ran
  // Per implementation: whether it is a peer that counts in the best-peer
  // ratio (false for SFC-CA, its variants and left-out peers). Empty: every
  // implementation after the first counts.
  std::vector<bool> in_peer_ratio;
  std::vector<ShapeMeasurement> shapes;
  std::vector<std::string> notes;  // peers skipped, results that disagree
  bool interrupted = false;        // BenchOptions::stop ended the run before its last shape
};

inline constexpr int kMaxBenchReps = 1000;

// The timed runs per pass and implementation `options` give `shape`
// (BenchOptions::min_seconds).
int bench_reps(const GemmShape& shape, const BenchOptions& options, double roofline_gflops);

// The name SFC-CA GEMM has in reports.
inline constexpr const char* kSfcImplementation = "sfc-ca";

// Times every shape with SFC-CA (configuration from `picker`) and each peer.
// Peers without the dtype are dropped with a note; a peer that is not a
// contender is kept out of the best-peer ratio with a note (count_every_peer). Throws sfc::Error for a
// bad request (the plan's validation, empty shape list, reps < 1).
BenchResult run_bench(const std::vector<GemmShape>& shapes, const BenchOptions& options,
                      const ConfigPicker& picker, std::vector<std::unique_ptr<GemmPeer>> peers,
                      const Roofline& roofline);

// A picker that searches K_layers, k_block_factor in {1, 2, 4, 8} with the
// tuner (sfc/tuner.hpp: pruned, cold inputs, the benchmark's layout) and keeps the
// fastest. The benchmark then measures the winner afresh, so the search's
// lucky draws do not flatter the reported figure.
ConfigPicker quick_search_picker(const BenchOptions& options);

}  // namespace sfc
