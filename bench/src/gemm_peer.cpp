#include "sfc/gemm_peer.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>

#include "peers.hpp"
#include "sfc/settings.hpp"

// Paths CMake found at configure time (bench/CMakeLists.txt); empty when not found.
#ifndef SFC_OPENBLAS_LIBRARY_PATH
#define SFC_OPENBLAS_LIBRARY_PATH ""
#endif
#ifndef SFC_BLIS_LIBRARY_PATH
#define SFC_BLIS_LIBRARY_PATH ""
#endif
#ifndef SFC_ONEDNN_LIBRARY_PATH
#define SFC_ONEDNN_LIBRARY_PATH ""
#endif

namespace sfc {
namespace {

using bench_detail::PeerUnavailable;
using bench_detail::SharedLibrary;

struct PeerSpec {
  const char* name;
  const char* environment_variable;
  const char* configured_path;
  const char* soname;
  std::unique_ptr<GemmPeer> (*make)(SharedLibrary);
};

const std::array<PeerSpec, 3> kPeers{{
    {"openblas", "SFC_OPENBLAS_LIBRARY", SFC_OPENBLAS_LIBRARY_PATH, "libopenblas.so.0",
     bench_detail::make_openblas_peer},
    {"blis", "SFC_BLIS_LIBRARY", SFC_BLIS_LIBRARY_PATH, "libblis.so.4", bench_detail::make_blis_peer},
    {"onednn", "SFC_ONEDNN_LIBRARY", SFC_ONEDNN_LIBRARY_PATH, "libdnnl.so.2", bench_detail::make_onednn_peer},
}};

const PeerSpec& find_spec(std::string_view name) {
  for (const PeerSpec& spec : kPeers)
    if (name == spec.name) return spec;
  std::string known;
  for (const PeerSpec& spec : kPeers) known += std::string(known.empty() ? "" : ", ") + spec.name;
  throw Error("unknown peer '" + std::string(name) + "' (known: " + known + ")");
}

// The libraries to try, in the order of the header's search rules.
std::vector<std::string> candidate_paths(const PeerSpec& spec, const std::string& library) {
  if (!library.empty()) return {library};
  if (auto from_environment = sfc::setting_text(spec.environment_variable))
    return {std::move(*from_environment)};
  std::vector<std::string> paths;
  if (*spec.configured_path != '\0') paths.emplace_back(spec.configured_path);
  paths.emplace_back(spec.soname);
  return paths;
}

}  // namespace

const std::vector<std::string>& known_peer_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const PeerSpec& spec : kPeers) all.emplace_back(spec.name);
    return all;
  }();
  return names;
}

std::vector<std::string> parse_peer_list(std::string_view text) {
  std::vector<std::string> names;
  if (text == "none") return names;  // SFC-CA alone
  while (true) {
    const std::string_view item = text.substr(0, text.find(','));
    const std::string name(find_spec(item).name);  // also rejects an empty item
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    if (item.size() == text.size()) return names;
    text.remove_prefix(item.size() + 1);
  }
}

PeerLoad load_peer(std::string_view name, const std::string& library) {
  const PeerSpec& spec = find_spec(name);
  std::string reasons;
  for (const std::string& path : candidate_paths(spec, library)) {
    try {
      return {spec.make(SharedLibrary(path)), {}};
    } catch (const PeerUnavailable& e) {
      reasons += std::string(reasons.empty() ? "" : "; ") + e.what();
    }
  }
  return {nullptr, std::string(spec.name) + " skipped: " + reasons + " (set " + spec.environment_variable +
                       " to its library)"};
}

}  // namespace sfc
