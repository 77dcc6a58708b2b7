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

float as_float(float v) { return v; }
double as_double(float v) { return v; }
std::uint16_t as_bf16(float v) {  // exact for small integers: truncation loses nothing
  std::uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return std::uint16_t(bits >> 16);
}

// Element (r, c) of a plain matrix in `layout` with leading dimension ld.
std::size_t at(sfc::Layout layout, std::int64_t r, std::int64_t c, std::int64_t ld) {
  return layout == sfc::Layout::row_major ? std::size_t(r * ld + c) : std::size_t(r + c * ld);
}

// C = alpha op(A) op(B) + beta C through the peer, on small integers (exact
// in every dtype: every product and sum is an integer or a half below 2^8),
// with padded leading dimensions, against a naive reference of the same call.
// M, N, K differ, so a swapped size or operand, an ignored transpose or the
// wrong order all change the result. Returns the largest difference.
template <class T>
double call_error(const sfc::GemmPeer& peer, sfc::DType dtype, T (*convert)(float), sfc::Layout layout,
                  const sfc::GemmArguments& call) {
  using Out = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const std::int64_t m = 3, n = 4, k = 5;
  const bool ta = call.trans_a == sfc::Transpose::transpose, tb = call.trans_b == sfc::Transpose::transpose;
  // Stored shapes: op(A) = A^T means A is K x M.
  const std::int64_t a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
  const bool row = layout == sfc::Layout::row_major;
  const std::int64_t lda = (row ? a_cols : a_rows) + 2, ldb = (row ? b_cols : b_rows) + 1,
                     ldc = (row ? n : m) + 3;
  std::vector<T> a(std::size_t(lda * (row ? a_rows : a_cols)), convert(99)),
      b(std::size_t(ldb * (row ? b_rows : b_cols)), convert(99));
  std::vector<Out> c(std::size_t(ldc * (row ? m : n)), Out(-7));
  std::vector<double> a_value(a.size()), b_value(b.size());
  for (std::int64_t r = 0; r < a_rows; ++r)
    for (std::int64_t q = 0; q < a_cols; ++q) {
      const float v = float((r * 3 + q * 5) % 7 - 3);
      a[at(layout, r, q, lda)] = convert(v);
      a_value[at(layout, r, q, lda)] = v;
    }
  for (std::int64_t r = 0; r < b_rows; ++r)
    for (std::int64_t q = 0; q < b_cols; ++q) {
      const float v = float((r * 2 + q * 3) % 5 - 2);
      b[at(layout, r, q, ldb)] = convert(v);
      b_value[at(layout, r, q, ldb)] = v;
    }
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) c[at(layout, i, j, ldc)] = Out(i - j);
  const std::vector<Out> initial = c;
  peer.gemm(dtype, layout, call, {m, n, k}, a.data(), lda, b.data(), ldb, c.data(), ldc);

  double worst = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (std::int64_t p = 0; p < k; ++p)
        sum += a_value[ta ? at(layout, p, i, lda) : at(layout, i, p, lda)] *
               b_value[tb ? at(layout, j, p, ldb) : at(layout, p, j, ldb)];
      const double expected = call.alpha * sum + call.beta * double(initial[at(layout, i, j, ldc)]);
      worst = std::max(worst, std::abs(double(c[at(layout, i, j, ldc)]) - expected));
    }
  // Entries outside C (the padding) are left alone.
  for (std::size_t e = 0; e < c.size(); ++e)
    if (c[e] != initial[e]) {
      const std::int64_t major = std::int64_t(e) / ldc, minor = std::int64_t(e) % ldc;
      if (minor >= (row ? n : m) || major >= (row ? m : n)) worst = std::max(worst, 1e9);
    }
  return worst;
}

template <class T>
void check_every_call(const sfc::GemmPeer& peer, sfc::DType dtype, T (*convert)(float)) {
  const sfc::Transpose none = sfc::Transpose::none, trans = sfc::Transpose::transpose;
  for (sfc::Layout layout : {sfc::Layout::row_major, sfc::Layout::col_major})
    for (sfc::Transpose ta : {none, trans})
      for (sfc::Transpose tb : {none, trans})
        for (double alpha : {1.0, 2.0})
          for (double beta : {0.0, 0.5}) {
            const sfc::GemmArguments call{.trans_a = ta, .trans_b = tb, .alpha = alpha, .beta = beta};
            CAPTURE(sfc::to_string(dtype));
            CAPTURE(sfc::to_string(layout));
            CAPTURE(ta == trans);
            CAPTURE(tb == trans);
            CAPTURE(alpha);
            CAPTURE(beta);
            CHECK(call_error(peer, dtype, convert, layout, call) == 0);
          }
}

}  // namespace

TEST_CASE("bench: installed peers run C = alpha op(A) op(B) + beta C in both layouts, as SFC-CA does") {
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
    check_every_call(*load.peer, sfc::DType::f32, as_float);
    if (load.peer->supports(sfc::DType::f64)) check_every_call(*load.peer, sfc::DType::f64, as_double);
    if (load.peer->supports(sfc::DType::bf16)) check_every_call(*load.peer, sfc::DType::bf16, as_bf16);
    float dummy[4] = {};
    for (sfc::DType dtype : {sfc::DType::f64, sfc::DType::bf16})
      if (!load.peer->supports(dtype))
        CHECK_THROWS_AS(
            load.peer->gemm(dtype, sfc::Layout::row_major, {}, {1, 1, 1}, dummy, 1, dummy, 1, dummy, 1),
            sfc::Error);
    CHECK_THROWS_AS(
        load.peer->gemm(sfc::DType::f32, sfc::Layout::blocked, {}, {1, 1, 1}, dummy, 1, dummy, 1, dummy, 1),
        sfc::Error);
  }
}

TEST_CASE("bench: a generic (reference) BLIS build says it is not a contender, an optimised peer counts") {
  for (const std::string& name : sfc::known_peer_names()) {
    sfc::PeerLoad load = sfc::load_peer(name);
    if (!load.peer) continue;
    INFO(load.peer->description());
    const bool generic = load.peer->description().find("sub-configuration generic") != std::string::npos;
    CHECK(load.peer->not_a_contender().empty() == !generic);
    if (generic) CHECK(load.peer->not_a_contender().find("'generic'") != std::string::npos);
  }
}
