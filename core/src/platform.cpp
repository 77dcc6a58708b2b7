// The platform fingerprint, read with hwloc, and how two fingerprints match.
// Nothing that varies between runs on one machine (clock, load, time) and
// nothing about the software (compiler, LIBXSMM build) is identity.
#include "sfc/platform.hpp"

#include <hwloc.h>
#include <libxsmm.h>
#include <omp.h>
#include <sys/stat.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "sfc/error.hpp"
#include "sfc/gemm.hpp"
#include "sfc/settings.hpp"

namespace sfc {

namespace {

// hwloc_topology_t with its destroy, so every throw below releases it.
class Topology {
 public:
  Topology() {
    if (hwloc_topology_init(&topology_) != 0) throw Error("hwloc: cannot initialise a topology");
  }
  ~Topology() { hwloc_topology_destroy(topology_); }
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
  hwloc_topology_t get() const { return topology_; }

 private:
  hwloc_topology_t topology_ = nullptr;
};

// The size of the cache of `type` that covers `pu` (one instance), 0 if none.
std::size_t cache_above(hwloc_obj_t pu, hwloc_obj_type_t type) {
  for (hwloc_obj_t obj = pu; obj; obj = obj->parent)
    if (obj->type == type && obj->attr) return static_cast<std::size_t>(obj->attr->cache.size);
  return 0;
}

std::string cpu_model_of(hwloc_topology_t topology) {
  const hwloc_obj_t package = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PACKAGE, 0);
  for (hwloc_obj_t obj : {package, hwloc_get_root_obj(topology)}) {
    if (!obj) continue;
    if (const char* model = hwloc_obj_get_info_by_name(obj, "CPUModel"); model && *model) {
      std::string text = model;
      // Some firmware pads the model string with spaces.
      text.erase(text.find_last_not_of(' ') + 1);
      return text;
    }
  }
  return "unknown";
}

// The hardware fields of a loaded topology.
Platform read_topology(hwloc_topology_t topology) {
  Platform p;
  p.cpu_model = cpu_model_of(topology);
  const int cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  p.cores = cores > 0 ? cores : std::max(1, hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU));
  p.numa_nodes = std::max(1, hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE));
  // The caches above the first processing unit: on a hybrid CPU, those of the
  // cores the first threads run on.
  if (const hwloc_obj_t pu = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PU, 0)) {
    p.l1d_bytes = cache_above(pu, HWLOC_OBJ_L1CACHE);
    p.l2_bytes = cache_above(pu, HWLOC_OBJ_L2CACHE);
    p.l3_bytes = cache_above(pu, HWLOC_OBJ_L3CACHE);
  }
  return p;
}

// What this build runs with: the ISA LIBXSMM generates kernels for, and the
// software recorded beside the identity.
void add_software(Platform& p, int threads) {
  libxsmm_init();  // idempotent; makes the detected target ISA available
  p.threads = threads > 0 ? threads : default_threads();
  p.isa = libxsmm_get_target_arch();
  p.libxsmm_version = LIBXSMM_VERSION;
#if defined(__clang__)
  p.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  p.compiler = "gcc " __VERSION__;
#else
  p.compiler = "unknown";
#endif
}

// A topology file hwloc is to read (HWLOC_XMLFILE, or a source ending .xml):
// a regular file of a sane size, checked first, as hwloc would block on a pipe
// and read a device (/dev/zero) without end. Throws sfc::Error naming `what`.
void check_topology_file(const std::string& path, const std::string& what) {
  constexpr long long kMaxTopologyBytes = 64LL << 20;  // far above any machine's lstopo XML
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw Error(what + ": cannot read " + path + ": " + std::strerror(errno) +
                "; name a topology XML file (lstopo --of xml) or unset it");
  if (!S_ISREG(info.st_mode))
    throw Error(what + ": " + path +
                " is not a regular file; name a topology XML file (lstopo --of xml) or unset it");
  if (info.st_size > kMaxTopologyBytes)
    throw Error(what + ": " + path + " is larger than the " + std::to_string(kMaxTopologyBytes >> 20) +
                " MiB a topology file may have");
}

// Loads `topology` from `source` ("" = this machine, honouring hwloc's environment).
Platform load(const std::string& source) {
  if (const auto environment = sfc::setting_text("HWLOC_XMLFILE"); source.empty() && environment)
    check_topology_file(*environment, "HWLOC_XMLFILE");
  Topology topology;
  const bool xml = source.size() > 4 && source.ends_with(".xml");
  if (xml) check_topology_file(source, "topology " + source);
  if (xml && hwloc_topology_set_xml(topology.get(), source.c_str()) != 0)
    throw Error("hwloc cannot read the topology file " + source);
  if (!xml && !source.empty() && hwloc_topology_set_synthetic(topology.get(), source.c_str()) != 0)
    throw Error("hwloc cannot parse the synthetic topology '" + source + "'");
  if (hwloc_topology_load(topology.get()) != 0)
    throw Error("hwloc cannot load the topology of " +
                (source.empty() ? std::string("this machine") : source));
  return read_topology(topology.get());
}

std::string size_text(std::size_t bytes) { return std::to_string(bytes); }

#if defined(__x86_64__) || defined(__i386__)
struct CpuidRegisters {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidRegisters cpuid(unsigned leaf, unsigned subleaf = 0) {
  CpuidRegisters r;
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  return r;
}

// Walks a deterministic cache-parameters leaf (4, or AMD's 0x8000001D, which
// has leaf 4's layout): one subleaf per cache until a type of 0.
CacheSizes deterministic_caches(unsigned leaf) {
  CacheSizes sizes;
  constexpr unsigned kMaxSubleaves = 16;  // far above any CPU's cache count; guards a looping hypervisor
  for (unsigned subleaf = 0; subleaf < kMaxSubleaves; ++subleaf) {
    const CpuidRegisters r = cpuid(leaf, subleaf);
    const unsigned type = r.eax & 0x1f;  // 1 data, 2 instruction, 3 unified
    if (type == 0) break;
    if (type == 2) continue;
    const unsigned level = (r.eax >> 5) & 0x7;
    const std::size_t ways = ((r.ebx >> 22) & 0x3ff) + 1, partitions = ((r.ebx >> 12) & 0x3ff) + 1,
                      line = (r.ebx & 0xfff) + 1, sets = std::size_t(r.ecx) + 1;
    const std::size_t bytes = ways * partitions * line * sets;
    if (level == 1) sizes.l1d_bytes = bytes;
    if (level == 2) sizes.l2_bytes = bytes;
    if (level == 3) sizes.l3_bytes = bytes;
  }
  return sizes;
}
#endif

// Whether two cache sizes of one level are within the tolerance (both absent counts).
bool caches_close(std::size_t a, std::size_t b) {
  if (a == 0 || b == 0) return a == b;
  const double ratio = double(std::max(a, b)) / double(std::min(a, b));
  return ratio <= kCacheTolerance;
}

}  // namespace

std::string fingerprint(std::span<const std::string> fields) {
  std::uint64_t h = 14695981039346656037ull;
  const auto mix = [&h](unsigned char ch) {
    h ^= ch;
    h *= 1099511628211ull;
  };
  for (const std::string& field : fields) {
    for (unsigned char ch : field) mix(ch);
    mix(0x1f);  // field separator
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

std::string Platform::hash() const {
  const std::string fields[] = {
      cpu_model,           std::to_string(cores), std::to_string(threads),    size_text(l1d_bytes),
      size_text(l2_bytes), size_text(l3_bytes),   std::to_string(numa_nodes), isa};
  return fingerprint(fields);
}

CacheSizes cpuid_cache_sizes() {
#if defined(__x86_64__) || defined(__i386__)
  const CpuidRegisters vendor_leaf = cpuid(0);
  char vendor[13] = {};
  std::memcpy(vendor, &vendor_leaf.ebx, 4);
  std::memcpy(vendor + 4, &vendor_leaf.edx, 4);
  std::memcpy(vendor + 8, &vendor_leaf.ecx, 4);
  const std::string_view name(vendor);
  const bool amd = name == "AuthenticAMD" || name == "HygonGenuine";
  const unsigned max_extended = cpuid(0x80000000).eax;
  if (amd) {
    const bool topology_extensions = max_extended >= 0x80000001 && (cpuid(0x80000001).ecx >> 22 & 1);
    if (topology_extensions && max_extended >= 0x8000001D) {
      const CacheSizes sizes = deterministic_caches(0x8000001D);
      if (sizes.l1d_bytes) return sizes;
    }
    // The legacy leaves: L1d KiB in 0x80000005 ECX[31:24]; L2 KiB in
    // 0x80000006 ECX[31:16], L3 in EDX[31:18] in units of 512 KiB.
    CacheSizes sizes;
    if (max_extended >= 0x80000005) sizes.l1d_bytes = std::size_t(cpuid(0x80000005).ecx >> 24) << 10;
    if (max_extended >= 0x80000006) {
      const CpuidRegisters r = cpuid(0x80000006);
      sizes.l2_bytes = std::size_t(r.ecx >> 16) << 10;
      sizes.l3_bytes = std::size_t(r.edx >> 18) << 19;
    }
    return sizes;
  }
  if (vendor_leaf.eax >= 4) return deterministic_caches(4);
#endif
  return {};
}

bool cache_sizes_sane(const CacheSizes& s) {
  constexpr std::size_t KiB = 1024, MiB = KiB * KiB;
  const bool l1d = s.l1d_bytes >= 4 * KiB && s.l1d_bytes <= 4 * MiB;
  const bool l2 = s.l2_bytes >= 64 * KiB && s.l2_bytes <= 256 * MiB && s.l2_bytes >= s.l1d_bytes;
  const bool l3 = s.l3_bytes == 0 || (s.l3_bytes >= s.l2_bytes && s.l3_bytes <= 4096 * MiB);
  return l1d && l2 && l3;
}

CacheSizes choose_cache_sizes(const CacheSizes& topology, const CacheSizes& cpuid) {
  if (cache_sizes_sane(topology)) return topology;
  return cache_sizes_sane(cpuid) ? cpuid : topology;
}

Platform detect_platform(int threads) {
  // Reading the topology takes milliseconds; the hardware does not change while we run.
  static const Platform hardware = [] {
    Platform p = load("");
    // CPUID describes this machine, not the one HWLOC_XMLFILE may name.
    if (sfc::setting_text("HWLOC_XMLFILE")) return p;
    const CacheSizes chosen = choose_cache_sizes({p.l1d_bytes, p.l2_bytes, p.l3_bytes}, cpuid_cache_sizes());
    p.l1d_bytes = chosen.l1d_bytes;
    p.l2_bytes = chosen.l2_bytes;
    p.l3_bytes = chosen.l3_bytes;
    return p;
  }();
  Platform p = hardware;
  add_software(p, threads);
  return p;
}

CacheSizes running_machine_cache_sizes() noexcept {
  static const CacheSizes sizes = [] {
    if (!sfc::setting_text("HWLOC_XMLFILE")) try {
        const Platform p = detect_platform(1);
        return CacheSizes{p.l1d_bytes, p.l2_bytes, p.l3_bytes};
      } catch (const std::exception&) {
        // hwloc could not read this machine: CPUID still can.
      }
    return cpuid_cache_sizes();
  }();
  return sizes;
}

Platform platform_from_topology(const std::string& source, int threads) {
  if (source.empty()) throw Error("platform_from_topology: no topology given");
  Platform p = load(source);
  add_software(p, threads);
  return p;
}

std::string_view to_string(PlatformMatch match) {
  switch (match) {
    case PlatformMatch::exact: return "exact";
    case PlatformMatch::compatible: return "compatible";
    case PlatformMatch::foreign: return "foreign";
  }
  return "?";
}

std::string PlatformComparison::describe() const {
  std::string text;
  for (const std::string& d : differences) text += (text.empty() ? "" : "; ") + d;
  return text;
}

PlatformComparison compare_platforms(const Platform& tuned, const Platform& here) {
  PlatformComparison c;
  bool foreign = false;
  const auto differ = [&](const char* name, const std::string& a, const std::string& b, bool breaks) {
    if (a == b) return;
    c.differences.push_back(std::string(name) + ": tuned " + a + ", here " + b);
    foreign = foreign || breaks;
  };
  const auto cache = [&](const char* name, std::size_t a, std::size_t b, bool breaks = true) {
    differ(name, size_text(a), size_text(b), breaks && !caches_close(a, b));
  };
  differ("isa", tuned.isa, here.isa, true);
  cache("l1d_bytes", tuned.l1d_bytes, here.l1d_bytes);
  cache("l2_bytes", tuned.l2_bytes, here.l2_bytes);
  // A legacy record's L3 and NUMA nodes are unknown: nothing to compare.
  const bool unknown = tuned.legacy() || here.legacy();
  if (!unknown) {
    // The same CPU model has the same L3: where two of them report different
    // ones, it is what a hypervisor shows its guest (the socket's or one CCD's;
    // the same Zen 5 guest type read 508 MiB on one host and 32 MiB on
    // another), and nothing the predictor computes reads the L3. Such twins
    // are compatible, the difference said; another model's L3 still counts,
    // and so does any L3 where no model was read (two empty names say nothing).
    const bool same_model = !tuned.cpu_model.empty() && tuned.cpu_model == here.cpu_model;
    cache("l3_bytes", tuned.l3_bytes, here.l3_bytes, !same_model);
    differ("numa_nodes", std::to_string(tuned.numa_nodes), std::to_string(here.numa_nodes), false);
  }
  differ("cpu_model", tuned.cpu_model, here.cpu_model, false);
  differ("cores", std::to_string(tuned.cores), std::to_string(here.cores), false);
  c.match = foreign                             ? PlatformMatch::foreign
            : c.differences.empty() && !unknown ? PlatformMatch::exact
                                                : PlatformMatch::compatible;
  if (unknown && c.match == PlatformMatch::compatible && c.differences.empty())
    c.differences.push_back("l3_bytes unknown (a record made before hwloc read the topology)");
  return c;
}

}  // namespace sfc
