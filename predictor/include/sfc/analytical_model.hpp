// AnalyticalModel: picks (K_layers, k_block_factor) for a shape from two
// numbers measured once per platform -- the per-core compute rate (gamma) and
// the memory bandwidth (beta) -- and the L2 size, without any tuning data.
//
// For each (K_layers, k_block_factor) it estimates the busiest thread's time
// as a roofline: its FLOPs at gamma against its words moved at its share of
// beta, using the traffic analysis of the paper (section II-E): A and B panels
// of one thread's Gilbert patch (half-perimeter x the layer's K depth), its C
// tiles, and the reduction of the K_layers copies of C; against, too, what it
// must fetch again where L2 does not hold one round's working set (the
// paper's condition (1): the round's panels within `l2_fraction` of L2, and
// the C tiles kept between rounds), at `reread_rate` of its bandwidth share.
// The fastest configuration wins (fewer layers, then fewer rounds, on ties),
// among those whose rounds are shallow enough (kRoundSlabL2Fraction), and
// with one round where gemm() on plain fp32 or fp64 operands would copy them
// all for more (a ragged M or N in its blocks).
// Costs about a microsecond.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "sfc/arch_context.hpp"
#include "sfc/gemm.hpp"
#include "sfc/knobs.hpp"
#include "sfc/tuning_table.hpp"

namespace sfc {

// The largest M, N or K a prediction is made for: the engine's.
inline constexpr std::int64_t max_gemm_size = kMaxGemmSize;

// Throws sfc::Error unless every size is in 1..max_gemm_size and threads >= 1:
// what every predictor checks first.
void check_prediction_request(const GemmShape& shape, int threads);

// The share of a thread's bandwidth at which the model prices what L2 fails
// to hold (re-read slabs of A and B, C tiles between rounds) when no tuned
// shapes fit it: demand misses of one core, about half of a prefetched sweep.
inline constexpr double kRereadRate = 0.5;

// The share of the time its compulsory traffic takes (the panels' first
// touch, C once) that a thread adds to its FLOPs rather than hides behind
// them, where the kernels read the caller's operands themselves: the blocked
// entry. The kernels do not prefetch, so each first touch of a cold panel is a
// demand miss; where M x N is small and K long (few tiles, each panel used
// little) that costs what a configuration makes a thread read, and fewer
// bytes per thread (more K layers) win. The row- and column-major entries copy
// the operands into the engine's layout first, in a sweep the prefetchers
// cover, and their kernels read the copies from cache: there the roofline
// (the larger of the two) holds -- but on a thin shape's single column or row
// of tiles, whose big operand they read in place as the blocked entry does.
// Chosen on range hold-outs (docs/predictor.md): shapes inside the tuned box
// cannot tell the stall from the L2 fraction.
inline constexpr double kMemoryStall = 0.5;

// The largest share of L2 that one tile's A and B slabs of a round (what one
// kernel call streams: (bm + bn) x the round's K depth) may take in the
// blocked entry, where a thread's C tiles stay in L2 (so that more rounds cost
// no C traffic from memory): deeper rounds are not chosen there, unless no
// more rounds fit the layer's K blocks. The roofline prices a deep round whose
// slabs fit L2 like a shallow one, yet the tuned tables of two machines run it
// slower, the more the deeper; chosen on range hold-outs. The row- and
// column-major entries, which copy their operands first, run deeper rounds
// better, and a cap there moved nothing beyond the tuned box
// (docs/experiments/2026-12-04-round-depth-cap.md).
inline constexpr double kRoundSlabL2Fraction = 0.3;

// Shapes with M or N below this take one round (k_block_factor 1): a thin C
// has little to re-read per round and its thin operand's panel stays in L2
// whatever the rounds, so rounds only add kernel calls over short K slices.
// The roofline cannot see that cost and answered rounds there
// (docs/experiments/2026-12-04-model-rounds-and-thin-shapes.md#thin-shapes-one-round-measured-2026-12-04-the-shipped-tables).
inline constexpr std::int64_t kOneRoundBelow = 64;

// How many tiles' A and B slabs (one round's depth) L2 must hold for the slab
// that consecutive tiles of the curve share to be read once. An LRU cache
// needs room for one pair: the new tile's slabs take the lines of the old
// tile's unshared slab, touched no later than the shared one's. Which room
// measures better is the machine's, so the fit chooses (ConfigPredictor): no
// one room was best on every table
// (docs/experiments/2026-12-04-model-rounds-and-thin-shapes.md#room-for-a-shared-slab-measured-2026-12-04-the-shipped-tables).
inline constexpr double kSharedSlabRoom = 2.0;
inline constexpr double kTightSharedSlabRoom = 1.0;  // the fit's other choice

// A plausible core of today (AVX-512 fp32, DDR5 bandwidth), for estimates
// where this machine was never calibrated (ranking a shape record, online
// tuning's candidates): it sets the ratio of compute to memory time that
// orders shapes and configurations, not seconds to trust.
inline constexpr Calibration kNominalCalibration{.gamma_gflops_per_core = 100, .beta_gbytes_per_s = 50};

struct ModelPrediction {
  // Predicted seconds for K_layers = 1..8 (index k_layers - 1), each with its
  // fastest k_block_factor; +infinity for K_layers above the shape's K blocks
  // (the engine would clamp them).
  std::array<double, kMaxKLayers> seconds{};
  Knobs knobs;  // the fastest configuration
  // Predicted seconds of every configuration, by Knobs::index(), for ranking
  // them (sfc/config_ranking.hpp): a configuration the engine would clamp
  // takes the time of the one it runs as, and rounds that knobs skips (the
  // round-depth cap, one round where rounds copy or the shape is thin) are
  // priced anyway, times kSkippedRoundsPenalty per extra round.
  std::array<double, kConfigCount> config_seconds{};
};

// What ModelPrediction::config_seconds adds per extra round where the model
// would not choose rounds at all: it ranks them below one round without
// claiming a time for them.
inline constexpr double kSkippedRoundsPenalty = 0.05;

class AnalyticalModel {
 public:
  // `calibration.beta_gbytes_per_s` is the bandwidth all threads reach
  // together (the GEMM's threads share it); gamma is per core, fp32.
  AnalyticalModel(const Calibration& calibration, std::size_t l2_bytes, double l2_fraction = kPanelL2Fraction,
                  double reread_rate = kRereadRate, double memory_stall = kMemoryStall,
                  double round_slab_fraction = kRoundSlabL2Fraction,
                  double shared_slab_room = kSharedSlabRoom);

  // True when gamma, beta and the L2 size are all known; predict() needs it.
  bool calibrated() const;

  double l2_fraction() const { return l2_fraction_; }
  double reread_rate() const { return reread_rate_; }
  double round_slab_fraction() const { return round_slab_fraction_; }
  double shared_slab_room() const { return shared_slab_room_; }
  AnalyticalModel with_l2_fraction(double fraction) const {
    return AnalyticalModel(calibration_, l2_bytes_, fraction, reread_rate_, memory_stall_,
                           round_slab_fraction_, shared_slab_room_);
  }
  AnalyticalModel with_fit(double fraction, double reread_rate, double round_slab_fraction,
                           double shared_slab_room = kSharedSlabRoom) const {
    return AnalyticalModel(calibration_, l2_bytes_, fraction, reread_rate, memory_stall_, round_slab_fraction,
                           shared_slab_room);
  }

  // For a call through `layout`'s entry (the stall counts where the kernels read in place).
  // Throws sfc::Error for non-positive sizes or threads, or when !calibrated().
  ModelPrediction predict(const GemmShape& shape, DType dtype, int threads,
                          Layout layout = Layout::blocked) const;

  // The L2 rule alone (needs only the L2 size; 1 when it is unknown, and for
  // shapes with M or N below kOneRoundBelow): the smallest k_block_factor
  // whose per-thread A and B panels of one round fit.
  int block_factor(const GemmShape& shape, DType dtype, int threads, int k_layers) const;

 private:
  Calibration calibration_;
  std::size_t l2_bytes_;
  double l2_fraction_;
  double reread_rate_;
  double memory_stall_;
  double round_slab_fraction_;
  double shared_slab_room_;
};

}  // namespace sfc
