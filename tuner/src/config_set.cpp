#include "sfc/config_set.hpp"

#include <bit>

#include "value_list.hpp"

namespace sfc {

ConfigSet ConfigSet::parse(std::string_view k_layers, std::string_view k_block_factors) {
  std::uint64_t bits = 0;
  for (std::int64_t kl : parse_value_list(k_layers, "--k-layers", {1, kMaxKLayers}, "+1"))
    for (std::int64_t kbf :
         parse_value_list(k_block_factors, "--k-block-factors", {1, kMaxKBlockFactor}, "+1"))
      bits |= std::uint64_t{1} << config_index(static_cast<int>(kl), static_cast<int>(kbf));
  return ConfigSet(bits);
}

int ConfigSet::size() const { return std::popcount(bits_); }

std::vector<std::pair<int, int>> ConfigSet::pairs() const {
  std::vector<std::pair<int, int>> out;
  for (int kl = 1; kl <= kMaxKLayers; ++kl)
    for (int kbf = 1; kbf <= kMaxKBlockFactor; ++kbf)
      if (contains(kl, kbf)) out.emplace_back(kl, kbf);
  return out;
}

}  // namespace sfc
