// Cache sizes from CPUID, and the order in which detect_platform() takes the
// topology's sizes or CPUID's.
#include <doctest/doctest.h>

#include "sfc/platform.hpp"

using sfc::CacheSizes;

namespace {
constexpr std::size_t KiB = 1024, MiB = KiB * KiB;
}  // namespace

TEST_CASE("platform: CPUID reads a plausible cache hierarchy on this CPU") {
#if defined(__x86_64__) || defined(__i386__)
  const CacheSizes c = sfc::cpuid_cache_sizes();
  CHECK(c.l1d_bytes >= 16 * KiB);
  CHECK(c.l2_bytes >= 256 * KiB);
  CHECK(c.l2_bytes >= c.l1d_bytes);
  CHECK((c.l3_bytes == 0 || c.l3_bytes >= c.l2_bytes));
  CHECK(sfc::cache_sizes_sane(c));
#else
  CHECK(sfc::cpuid_cache_sizes() == CacheSizes{});
#endif
}

TEST_CASE("platform: the topology's cache sizes come first where sane, CPUID's where it has none") {
  const CacheSizes sysfs{48 * KiB, 1 * MiB, 32 * MiB};
  const CacheSizes cpuid{32 * KiB, 2 * MiB, 96 * MiB};
  CHECK(sfc::choose_cache_sizes(sysfs, cpuid) == sysfs);
  // A VM without cache information in sysfs: hwloc reads none.
  CHECK(sfc::choose_cache_sizes(CacheSizes{}, cpuid) == cpuid);
  // Nonsense from the topology: an L2 below the L1d, an L3 below the L2.
  CHECK(sfc::choose_cache_sizes({1 * MiB, 48 * KiB, 32 * MiB}, cpuid) == cpuid);
  CHECK(sfc::choose_cache_sizes({48 * KiB, 2 * MiB, 1 * MiB}, cpuid) == cpuid);
  // No L3 at all is a sane hierarchy.
  const CacheSizes no_l3{48 * KiB, 1 * MiB, 0};
  CHECK(sfc::choose_cache_sizes(no_l3, cpuid) == no_l3);
  // Neither sane: the topology's sizes stay, as read.
  CHECK(sfc::choose_cache_sizes(CacheSizes{}, CacheSizes{}) == CacheSizes{});
  CHECK_FALSE(sfc::cache_sizes_sane(CacheSizes{}));
  CHECK_FALSE(sfc::cache_sizes_sane({48 * KiB, 1 * MiB, 8192 * MiB}));
}

TEST_CASE("platform: the running machine's caches form a sane hierarchy (hwloc's or CPUID's)") {
  const sfc::Platform p = sfc::detect_platform(1);
  CHECK(sfc::cache_sizes_sane({p.l1d_bytes, p.l2_bytes, p.l3_bytes}));
}
