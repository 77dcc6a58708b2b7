// Knobs: the two parameters an SFC-CA GEMM is tuned by (paper, section II-D),
// their limits, and their index in a 64-entry table of configurations.
//
//   K_layers        copies of C over which K is split (2.5D/3D communication
//                   avoiding; a final reduction adds the copies)
//   k_block_factor  rounds each layer's K range is cut into
//
// Every layer that stores, searches or predicts configurations uses this one
// type: the plan validates with check(), tables and stores index by index()
// and go back with Knobs::at().
#pragma once
#include <cassert>
#include <compare>
#include <string>

#include "sfc/error.hpp"

namespace sfc {

inline constexpr int kMaxKLayers = 8;
inline constexpr int kMaxKBlockFactor = 8;
inline constexpr int kConfigCount = kMaxKLayers * kMaxKBlockFactor;

struct Knobs {
  int k_layers = 1;
  int k_block_factor = 1;

  friend auto operator<=>(const Knobs&, const Knobs&) = default;

  constexpr bool valid() const {
    return k_layers >= 1 && k_layers <= kMaxKLayers && k_block_factor >= 1 &&
           k_block_factor <= kMaxKBlockFactor;
  }
  // Position in 0..kConfigCount-1, K_layers major: (1,1) 0, (1,2) 1, ..., (8,8) 63.
  constexpr int index() const {
    assert(valid());  // an index outside 0..63 would read past a table's row
    return (k_layers - 1) * kMaxKBlockFactor + (k_block_factor - 1);
  }
  // The inverse of index().
  static constexpr Knobs at(int index) {
    assert(index >= 0 && index < kConfigCount);
    return {index / kMaxKBlockFactor + 1, index % kMaxKBlockFactor + 1};
  }

  // Throws sfc::Error("k_layers must be in 1..8, got 9") unless valid().
  void check() const {
    if (k_layers < 1 || k_layers > kMaxKLayers)
      throw Error("k_layers must be in 1.." + std::to_string(kMaxKLayers) + ", got " +
                  std::to_string(k_layers));
    if (k_block_factor < 1 || k_block_factor > kMaxKBlockFactor)
      throw Error("k_block_factor must be in 1.." + std::to_string(kMaxKBlockFactor) + ", got " +
                  std::to_string(k_block_factor));
  }
};

// Knobs{k_layers, k_block_factor}.index(), for records that keep the two as fields.
constexpr int config_index(int k_layers, int k_block_factor) {
  return Knobs{k_layers, k_block_factor}.index();
}

static_assert(Knobs::at(Knobs{3, 7}.index()) == Knobs{3, 7});
static_assert(Knobs{kMaxKLayers, kMaxKBlockFactor}.index() == kConfigCount - 1);

}  // namespace sfc
