// Platform: what a tuning result is valid for, and how close another machine
// comes to it.
//
// The identity fields name the hardware that decides which configuration wins
// (CPU model, ISA, cores, threads, caches per instance, NUMA nodes); hash()
// covers those and nothing else, so two machines of one kind share a hash
// whatever compiler or LIBXSMM build ran the tuning. Those two are recorded
// and shown, not identity. Topology and cache sizes are read with hwloc (it
// reads sysfs and honours cgroup cpusets), the cache sizes from CPUID where
// hwloc gives none or nonsense; hwloc's own HWLOC_XMLFILE and
// HWLOC_SYNTHETIC environment variables make a process see another machine.
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sfc {

struct Platform {
  // ---- identity ----
  std::string cpu_model;      // hwloc's CPUModel of the first package ("unknown" when not reported)
  int cores = 0;              // cores this process may run on
  int threads = 0;            // threads the GEMM runs with
  std::size_t l1d_bytes = 0;  // one instance (the L1d of one core)
  std::size_t l2_bytes = 0;   // one instance
  std::size_t l3_bytes = 0;   // one instance (one CCD's, one socket's); 0 = none
  // NUMA nodes; 0 marks a record made before hwloc read the topology (table
  // version < 3, export version < 3, schema < 4), whose L3 size was not read
  // per instance: its l3_bytes is then 0 too, and both count as unknown.
  int numa_nodes = 0;
  std::string isa;  // the ISA LIBXSMM generates code for ("hsw", "cpx", ...)
  // ---- recorded, not identity ----
  std::string libxsmm_version;
  std::string compiler;

  // 16 hex digits (FNV-1a 64 over the identity fields); stable across runs.
  std::string hash() const;
  bool legacy() const { return numa_nodes == 0; }
};

// 16 hex digits of FNV-1a 64 over `fields`, each followed by a separator, so
// ("ab", "c") and ("a", "bc") differ. Platform::hash() is this over its identity.
std::string fingerprint(std::span<const std::string> fields);

// Reads the running machine once per process (threads <= 0: default_threads()).
// The cache sizes are hwloc's where sane (see cache_sizes_sane), else CPUID's
// (choose_cache_sizes), unless HWLOC_XMLFILE names another machine's topology.
// Throws sfc::Error if hwloc cannot read the topology.
Platform detect_platform(int threads = 0);

// The sizes of one instance of each data cache level; 0 = none or unknown.
struct CacheSizes {
  std::size_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;
  bool operator==(const CacheSizes&) const = default;
};

// The caches CPUID describes for the core this thread runs on: leaf 4 on
// Intel (and any vendor that has it), leaf 0x8000001D on AMD and Hygon with
// topology extensions, else AMD's leaves 0x80000005/6. All 0 where CPUID says
// nothing (or the build is not for x86). A hypervisor may show its guest
// whatever it likes here, as it may in sysfs.
CacheSizes cpuid_cache_sizes();

// Whether sizes read from the topology describe a plausible hierarchy: an L1d
// of 4 KiB..4 MiB, an L2 of 64 KiB..256 MiB at least as large as the L1d,
// and an L3 absent (0) or at least as large as the L2 and at most 4 GiB.
// A VM without cache information in sysfs reads all 0: not sane.
bool cache_sizes_sane(const CacheSizes& sizes);

// The sizes detect_platform() uses: `topology`'s (hwloc, from sysfs) where
// sane, else `cpuid`'s where those are sane, else `topology`'s as read.
CacheSizes choose_cache_sizes(const CacheSizes& topology, const CacheSizes& cpuid);

// The caches of the machine this process runs on, whatever topology
// HWLOC_XMLFILE shows it: detect_platform()'s sizes, or CPUID's where
// HWLOC_XMLFILE is set or hwloc fails. Never throws; what cold timing sizes
// its footprint by.
CacheSizes running_machine_cache_sizes() noexcept;

// The same read from another topology: `source` is an XML file as
// `lstopo FILE.xml` writes it, or else hwloc's synthetic description
// ("package:2 l3:1(size=32MiB) l2:8(size=1MiB) l1d:1(size=48KiB) core:1 pu:1").
// The ISA, LIBXSMM version and compiler are this process's. Throws sfc::Error.
Platform platform_from_topology(const std::string& source, int threads);

// How results tuned on one platform carry over to another:
//   exact       the same hardware (threads aside: the predictor answers other
//               thread counts from the model)
//   compatible  the same ISA and every cache within kCacheTolerance; the CPU
//               model, core count or NUMA nodes differ, or the tuned record
//               is a legacy one whose L3 is unknown; or the same CPU model
//               reporting another L3 (a hypervisor's view, whatever its size)
//   foreign     another ISA, or a cache beyond the tolerance (or present on
//               one side only; the L3 only between different CPU models):
//               refused unless forced
enum class PlatformMatch { exact, compatible, foreign };
std::string_view to_string(PlatformMatch match);  // "exact", "compatible", "foreign"

// The largest ratio between two cache sizes that still counts as compatible:
// 1.5 keeps e.g. a 32 KiB and a 48 KiB L1d together, and tells a 1 MiB L2 from
// a 2 MiB one (where the k_block_factor that fits L2 changes).
inline constexpr double kCacheTolerance = 1.5;

struct PlatformComparison {
  PlatformMatch match = PlatformMatch::exact;
  // One phrase per differing identity field: "l2_bytes: tuned 1048576, here 2097152".
  std::vector<std::string> differences;
  std::string describe() const;  // the differences joined by "; " ("" when none)
};

// Compares the platform results were tuned on with the one they would serve.
PlatformComparison compare_platforms(const Platform& tuned, const Platform& here);

}  // namespace sfc
