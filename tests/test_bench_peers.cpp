// Peer libraries: names, loading failures (skipped with a note, never fatal),
// and, where a library is installed, that its ABI is called right.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "sfc/gemm_peer.hpp"
#include "test_bench_support.hpp"

TEST_CASE("bench: peer lists are checked names, in order, each once") {
  CHECK(sfc::parse_peer_list("onednn,openblas") == std::vector<std::string>{"onednn", "openblas"});
  CHECK(sfc::parse_peer_list("blis,blis") == std::vector<std::string>{"blis"});
  CHECK(sfc::parse_peer_list("none").empty());
  CHECK(sfc::known_peer_names() == std::vector<std::string>{"openblas", "blis", "onednn"});
  for (const char* bad : {"", "mkl", "openblas,", ",blis", "openblas,,blis"})
    CHECK_THROWS_AS(sfc::parse_peer_list(bad), sfc::Error);
  CHECK_THROWS_AS(sfc::load_peer("mkl"), sfc::Error);
}

TEST_CASE("bench: a peer whose library cannot be loaded is skipped with a note") {
  const sfc::PeerLoad load = sfc::load_peer("openblas", "/nonexistent/libopenblas.so");
  CHECK(load.peer == nullptr);
  CHECK(load.note.find("openblas skipped") == 0);
  CHECK(load.note.find("/nonexistent/libopenblas.so") != std::string::npos);
  CHECK(load.note.find("SFC_OPENBLAS_LIBRARY") != std::string::npos);
}

TEST_CASE("bench: a library without the peer's symbols is skipped with a note") {
  // libm loads fine but has no cblas_sgemm / dnnl_sgemm.
  for (const char* name : {"openblas", "blis", "onednn"}) {
    const sfc::PeerLoad load = sfc::load_peer(name, "libm.so.6");
    CHECK(load.peer == nullptr);
    CHECK_MESSAGE(load.note.find("has no symbol") != std::string::npos, load.note);
  }
}

TEST_CASE("bench: SFC_<NAME>_LIBRARY overrides where a peer is loaded from") {
  const sfc::test::ScopedEnvironment blis("SFC_BLIS_LIBRARY", "/nonexistent/libblis.so");
  const sfc::PeerLoad load = sfc::load_peer("blis");
  CHECK(load.peer == nullptr);
  CHECK(load.note.find("/nonexistent/libblis.so") != std::string::npos);
}

namespace {

// A 2x3 times 3x2 product in small integers: exact in every dtype, and it
// tells row-major from column-major and a transpose from none.
template <class T>
std::vector<double> small_product(const sfc::GemmPeer& peer, sfc::DType dtype, T (*convert)(float)) {
  const float a[] = {1, 2, 3, 4, 5, 6};     // 2x3, row-major
  const float b[] = {7, 8, 9, 10, 11, 12};  // 3x2, row-major
  std::vector<T> as, bs;
  for (float v : a) as.push_back(convert(v));
  for (float v : b) bs.push_back(convert(v));
  using Out = std::conditional_t<std::is_same_v<T, double>, double, float>;
  std::vector<Out> c(4, Out(-1));
  peer.gemm(dtype, {2, 2, 3}, as.data(), 3, bs.data(), 2, c.data(), 2);
  return {c.begin(), c.end()};
}

float as_float(float v) { return v; }
double as_double(float v) { return v; }
std::uint16_t as_bf16(float v) {  // exact for small integers: truncation loses nothing
  std::uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return std::uint16_t(bits >> 16);
}

}  // namespace

TEST_CASE("bench: installed peers compute C = A * B on row-major matrices") {
  const std::vector<double> expected = {58, 64, 139, 154};
  for (const std::string& name : sfc::known_peer_names()) {
    sfc::PeerLoad load = sfc::load_peer(name);
    if (!load.peer) {
      // Not installed here: nothing to check. But one CMake found must load.
      CHECK_MESSAGE(std::string(SFC_TEST_FOUND_PEERS).find("," + name + ",") == std::string::npos, load.note);
      continue;
    }
    INFO(load.peer->description());
    load.peer->set_threads(1);
    CHECK(load.peer->supports(sfc::DType::f32));
    CHECK(small_product(*load.peer, sfc::DType::f32, as_float) == expected);
    if (load.peer->supports(sfc::DType::f64))
      CHECK(small_product(*load.peer, sfc::DType::f64, as_double) == expected);
    if (load.peer->supports(sfc::DType::bf16))
      CHECK(small_product(*load.peer, sfc::DType::bf16, as_bf16) == expected);
    for (sfc::DType dtype : {sfc::DType::f64, sfc::DType::bf16})
      if (!load.peer->supports(dtype)) {
        float dummy[4] = {};
        CHECK_THROWS_AS(load.peer->gemm(dtype, {1, 1, 1}, dummy, 1, dummy, 1, dummy, 1), sfc::Error);
      }
  }
}
