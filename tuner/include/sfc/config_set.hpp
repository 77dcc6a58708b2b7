// ConfigSet: which (K_layers, k_block_factor) pairs a tuning run searches,
// one bit per Knobs::index(). All 64 by default; --k-layers and
// --k-block-factors narrow it ("1:4", "1,2,4", "8").
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "sfc/knobs.hpp"

namespace sfc {

class ConfigSet {
 public:
  static ConfigSet all() { return ConfigSet(~std::uint64_t{0}); }
  // Lists of values in 1..8 (see ShapeGrid for the list syntax; LO:HI steps by 1).
  static ConfigSet parse(std::string_view k_layers, std::string_view k_block_factors);

  bool contains(Knobs knobs) const { return (bits_ >> knobs.index()) & 1; }
  int size() const;
  // The configurations in index order (K_layers outermost).
  std::vector<Knobs> configs() const;
  std::uint64_t bits() const { return bits_; }

 private:
  explicit ConfigSet(std::uint64_t bits) : bits_(bits) {}
  std::uint64_t bits_;
};

}  // namespace sfc
