#include "sfc/config_set.hpp"

#include <bit>

#include "value_list.hpp"

namespace sfc {

ConfigSet ConfigSet::parse(std::string_view k_layers, std::string_view k_block_factors) {
  std::uint64_t bits = 0;
  for (std::int64_t kl : parse_value_list(k_layers, "--k-layers", {1, kMaxKLayers}, "+1"))
    for (std::int64_t kbf :
         parse_value_list(k_block_factors, "--k-block-factors", {1, kMaxKBlockFactor}, "+1"))
      bits |= std::uint64_t{1} << Knobs{static_cast<int>(kl), static_cast<int>(kbf)}.index();
  return ConfigSet(bits);
}

int ConfigSet::size() const { return std::popcount(bits_); }

std::vector<Knobs> ConfigSet::configs() const {
  std::vector<Knobs> out;
  for (int i = 0; i < kConfigCount; ++i)
    if ((bits_ >> i) & 1) out.push_back(Knobs::at(i));
  return out;
}

}  // namespace sfc
