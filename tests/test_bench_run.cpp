// run_bench end to end on tiny shapes, with in-process peers: what it
// measures, in which order, which peers it drops, and the cross-check of
// SFC-CA's result against every peer's.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <memory>

#include "sfc/bench.hpp"
#include "sfc/bench_summary.hpp"
#include "test_bench_support.hpp"

namespace {

// A textbook GEMM (either layout, transposes, alpha, beta); `error` is added
// to C[0] to play a broken library.
class NaivePeer final : public sfc::GemmPeer {
 public:
  NaivePeer(std::string name, bool has_f64, float error = 0, std::string not_a_contender = {})
      : name_(std::move(name)),
        has_f64_(has_f64),
        error_(error),
        not_a_contender_(std::move(not_a_contender)) {}
  std::string_view name() const override { return name_; }
  std::string description() const override { return "naive " + name_; }
  bool supports(sfc::DType dtype) const override {
    return dtype == sfc::DType::f32 || (has_f64_ && dtype == sfc::DType::f64);
  }
  std::string not_a_contender() const override { return not_a_contender_; }
  void set_threads(int threads) override { *threads_ = threads; }
  void gemm(sfc::DType dtype, sfc::Layout layout, const sfc::GemmArguments& call, const sfc::GemmShape& s,
            const void* a, std::int64_t lda, const void* b, std::int64_t ldb, void* c,
            std::int64_t ldc) const override {
    if (dtype == sfc::DType::f32)
      multiply(layout, call, s, static_cast<const float*>(a), lda, static_cast<const float*>(b), ldb,
               static_cast<float*>(c), ldc);
    else
      multiply(layout, call, s, static_cast<const double*>(a), lda, static_cast<const double*>(b), ldb,
               static_cast<double*>(c), ldc);
  }
  // Shared, so a test can read it after run_bench has taken (and destroyed) the peer.
  std::shared_ptr<int> threads_ = std::make_shared<int>(0);

 private:
  template <class T>
  void multiply(sfc::Layout layout, const sfc::GemmArguments& call, const sfc::GemmShape& s, const T* a,
                std::int64_t lda, const T* b, std::int64_t ldb, T* c, std::int64_t ldc) const {
    const auto at = [layout](std::int64_t r, std::int64_t q, std::int64_t ld) {
      return layout == sfc::Layout::row_major ? r * ld + q : r + q * ld;
    };
    const bool ta = call.trans_a == sfc::Transpose::transpose, tb = call.trans_b == sfc::Transpose::transpose;
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) {
        double sum = 0;
        for (std::int64_t p = 0; p < s.k; ++p)
          sum +=
              double(a[ta ? at(p, i, lda) : at(i, p, lda)]) * double(b[tb ? at(j, p, ldb) : at(p, j, ldb)]);
        T& out = c[at(i, j, ldc)];
        out = T(call.alpha * sum + (call.beta == 0 ? 0.0 : call.beta * double(out)));
      }
    c[0] += T(error_);
  }
  std::string name_;
  bool has_f64_;
  float error_;
  std::string not_a_contender_;
};

const std::vector<sfc::GemmShape> kShapes = {{40, 24, 56}, {17, 33, 130}};

sfc::BenchOptions tiny_options(sfc::Layout layout) {
  sfc::BenchOptions o;
  o.threads = 2;
  o.layout = layout;
  o.warmup = 1;
  o.reps = 2;
  return o;
}

const sfc::Roofline kRoofline = sfc::Roofline::from_calibration({100, 10}, sfc::DType::f32, 2, "test");

}  // namespace

TEST_CASE("bench: run_bench times SFC-CA and each peer for every shape, in order") {
  const sfc::test::ScopedEnvironment small_flush("SFC_COLD_BYTES", "1048576");  // keep the test fast
  for (sfc::Layout layout : {sfc::Layout::blocked, sfc::Layout::row_major, sfc::Layout::col_major}) {
    CAPTURE(sfc::to_string(layout));
    std::vector<std::unique_ptr<sfc::GemmPeer>> peers;
    peers.push_back(std::make_unique<NaivePeer>("first", true));
    peers.push_back(std::make_unique<NaivePeer>("second", false));
    const std::shared_ptr<int> first_threads = static_cast<NaivePeer*>(peers[0].get())->threads_;
    std::vector<sfc::GemmShape> asked;
    const auto picker = [&](const sfc::GemmShape& shape) {
      asked.push_back(shape);
      return sfc::Knobs{8, 8};  // clamped by the plan to what K allows
    };
    const sfc::BenchResult r =
        sfc::run_bench(kShapes, tiny_options(layout), picker, std::move(peers), kRoofline);
    CHECK(r.implementations == std::vector<std::string>{"sfc-ca", "first", "second"});
    CHECK(*first_threads == 2);
    REQUIRE(r.shapes.size() == 2);
    CHECK(asked.size() == 2);
    for (std::size_t s = 0; s < 2; ++s) {
      const sfc::ShapeMeasurement& m = r.shapes[s];
      CHECK(m.shape.k == kShapes[s].k);
      CHECK(m.timings.size() == 3);
      for (const sfc::Timing& t : m.timings) CHECK(t.mean > 0);
      CHECK(m.config.k_layers * m.config.k_block_factor <= 3);  // K = 56 or 130: at most 3 K blocks
      CHECK(m.max_error_ratio <= 1);
      CHECK(m.roofline_gflops == doctest::Approx(kRoofline.bound_gflops(m.shape, sfc::DType::f32)));
    }
    CHECK(r.notes.empty());
  }
}

TEST_CASE("bench: a stop request ends the run before the next shape, with the finished ones reported") {
  const sfc::test::ScopedEnvironment small_flush("SFC_COLD_BYTES", "1048576");
  const std::vector<sfc::GemmShape> shapes = {{32, 32, 32}, {40, 24, 56}, {17, 33, 130}};
  for (std::size_t asked_at : {std::size_t(0), std::size_t(1), std::size_t(2)}) {
    CAPTURE(asked_at);
    // The request comes while shape `asked_at` is being measured (its
    // configuration is picked first): that shape is finished, no later one.
    std::atomic<bool> stop{false};
    std::size_t picked = 0;
    sfc::BenchOptions o = tiny_options(sfc::Layout::row_major);
    o.stop = &stop;
    const sfc::BenchResult r = sfc::run_bench(
        shapes, o,
        [&](const sfc::GemmShape&) {
          if (picked++ == asked_at) stop = true;
          return sfc::Knobs{};
        },
        {}, kRoofline);
    const bool last = asked_at + 1 == shapes.size();
    CHECK(r.shapes.size() == asked_at + 1);
    CHECK(picked == asked_at + 1);
    CHECK(r.interrupted == !last);
    if (last) {
      CHECK(r.notes.empty());
    } else {
      REQUIRE(r.notes.size() == 1);
      CHECK(r.notes[0] ==
            "interrupted after " + std::to_string(asked_at + 1) + " of 3 shapes: the figures cover those");
    }
    for (const sfc::ShapeMeasurement& m : r.shapes) CHECK(m.timings.at(0).mean > 0);
  }
}

TEST_CASE("bench: timings without a warm-up carry a note that first calls are in them") {
  const sfc::test::ScopedEnvironment small_flush("SFC_COLD_BYTES", "1048576");
  sfc::BenchOptions o = tiny_options(sfc::Layout::blocked);
  o.warmup = 0;
  const sfc::BenchResult r = sfc::run_bench(
      {{32, 32, 32}}, o, [](const sfc::GemmShape&) { return sfc::Knobs{}; }, {}, kRoofline);
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].find("--warmup 0") != std::string::npos);
}

TEST_CASE("bench: the peers run the same transposes, alpha and beta as SFC-CA, checked against fp64") {
  const sfc::test::ScopedEnvironment small_flush("SFC_COLD_BYTES", "1048576");
  const sfc::Transpose t = sfc::Transpose::transpose, n = sfc::Transpose::none;
  for (sfc::Layout layout : {sfc::Layout::row_major, sfc::Layout::col_major})
    for (const sfc::GemmArguments& call :
         {sfc::GemmArguments{.trans_a = t, .trans_b = n, .alpha = 2, .beta = 0.5},
          sfc::GemmArguments{.trans_a = n, .trans_b = t, .alpha = 1, .beta = 0},
          sfc::GemmArguments{.trans_a = t, .trans_b = t, .alpha = 2, .beta = 0}}) {
      CAPTURE(sfc::to_string(layout));
      CAPTURE(call.alpha);
      CAPTURE(call.beta);
      sfc::BenchOptions o = tiny_options(layout);
      o.call = call;
      std::vector<std::unique_ptr<sfc::GemmPeer>> peers;
      peers.push_back(std::make_unique<NaivePeer>("first", true));
      const sfc::BenchResult r = sfc::run_bench(
          kShapes, o, [](const sfc::GemmShape&) { return sfc::Knobs{}; }, std::move(peers), kRoofline);
      CHECK(r.implementations == std::vector<std::string>{"sfc-ca", "first"});
      REQUIRE(r.shapes.size() == 2);
      for (const sfc::ShapeMeasurement& m : r.shapes) {
        CHECK(m.timings.at(1).mean > 0);
        CHECK(m.max_error_ratio <= 1);
      }
      CHECK(r.notes.empty());
    }
  // A peer that ignores beta (or gets another initial C) is caught by the check.
  sfc::BenchOptions o = tiny_options(sfc::Layout::col_major);
  o.call = {.trans_a = t, .trans_b = n, .alpha = 2, .beta = 0.5};
  std::vector<std::unique_ptr<sfc::GemmPeer>> peers;
  peers.push_back(std::make_unique<NaivePeer>("off", true, 0.5f));
  const sfc::BenchResult r = sfc::run_bench(
      kShapes, o, [](const sfc::GemmShape&) { return sfc::Knobs{}; }, std::move(peers), kRoofline);
  CHECK(r.shapes.at(0).max_error_ratio > 1);
  CHECK(r.shapes.at(0).worst_implementation == 1);
  o.layout = sfc::Layout::blocked;
  CHECK_THROWS_AS(sfc::run_bench(
                      kShapes, o, [](const sfc::GemmShape&) { return sfc::Knobs{}; }, {}, kRoofline),
                  sfc::Error);
}

TEST_CASE("bench: a peer that is not a contender is timed and listed, and left out of the best-peer ratio") {
  const sfc::test::ScopedEnvironment small_flush("SFC_COLD_BYTES", "1048576");
  for (bool count_every_peer : {false, true}) {
    CAPTURE(count_every_peer);
    std::vector<std::unique_ptr<sfc::GemmPeer>> peers;
    peers.push_back(std::make_unique<NaivePeer>("reference", true, 0.0f, "reference is a reference build"));
    peers.push_back(std::make_unique<NaivePeer>("real", true));
    sfc::BenchOptions o = tiny_options(sfc::Layout::row_major);
    o.count_every_peer = count_every_peer;
    sfc::BenchResult r = sfc::run_bench(
        kShapes, o, [](const sfc::GemmShape&) { return sfc::Knobs{}; }, std::move(peers), kRoofline);
    CHECK(r.implementations == std::vector<std::string>{"sfc-ca", "reference", "real"});
    CHECK(r.in_peer_ratio == std::vector<bool>{false, count_every_peer, true});
    if (count_every_peer) {
      CHECK(r.notes.empty());
    } else {
      REQUIRE(r.notes.size() == 1);
      CHECK(r.notes[0].find("reference is a reference build") == 0);
      // Make the left-out peer the fastest by far: the ratio still names the other.
      for (sfc::ShapeMeasurement& m : r.shapes) {
        m.timings[1].min = m.timings[1].mean = 1e-12;
        for (auto& pass : m.passes) pass[1].min = pass[1].mean = 1e-12;
      }
      const sfc::BenchSummary s = sfc::summarize(r);
      REQUIRE(s.best_peer.has_value());
      CHECK(*s.best_peer == 2);
    }
  }
}

TEST_CASE("bench: variants of the call are timed beside it, as implementations of their own") {
  const sfc::test::ScopedEnvironment small_flush("SFC_COLD_BYTES", "1048576");
  sfc::BenchOptions o = tiny_options(sfc::Layout::row_major);
  o.passes = 2;
  const sfc::Transpose t = sfc::Transpose::transpose, n = sfc::Transpose::none;
  o.variants = {{.trans_a = n, .trans_b = t}, {.trans_a = t, .trans_b = t}, {.beta = 1}};
  std::vector<std::unique_ptr<sfc::GemmPeer>> peers;
  peers.push_back(std::make_unique<NaivePeer>("first", true));
  const sfc::BenchResult r = sfc::run_bench(
      kShapes, o,
      [](const sfc::GemmShape&) {
        return sfc::Knobs{2, 1};
      },
      std::move(peers), kRoofline);
  CHECK(r.implementations ==
        std::vector<std::string>{"sfc-ca", "sfc-ca:NT", "sfc-ca:TT", "sfc-ca:NN:beta=1", "first"});
  REQUIRE(r.shapes.size() == 2);
  for (const sfc::ShapeMeasurement& m : r.shapes) {
    REQUIRE(m.timings.size() == 5);
    for (const sfc::Timing& timing : m.timings) CHECK(timing.reps == 2 * o.reps);  // both passes pooled
    CHECK(m.max_error_ratio <= 1);
  }
  CHECK(r.notes.empty());
  o.layout = sfc::Layout::blocked;  // the blocked entry has no BLAS arguments
  CHECK_THROWS_AS(sfc::run_bench(
                      kShapes, o, [](const sfc::GemmShape&) { return sfc::Knobs{}; }, {}, kRoofline),
                  sfc::Error);
}

TEST_CASE("bench: passes time every implementation again and pool the runs") {
  const sfc::test::ScopedEnvironment small_flush("SFC_COLD_BYTES", "1048576");
  for (sfc::Layout layout : {sfc::Layout::blocked, sfc::Layout::row_major}) {
    std::vector<std::unique_ptr<sfc::GemmPeer>> peers;
    peers.push_back(std::make_unique<NaivePeer>("naive", true));
    sfc::BenchOptions options = tiny_options(layout);
    options.passes = 3;
    const sfc::BenchResult r = sfc::run_bench(
        {{32, 48, 64}}, options, [](const sfc::GemmShape&) { return sfc::Knobs{}; }, std::move(peers),
        kRoofline);
    REQUIRE(r.shapes.size() == 1);
    REQUIRE(r.shapes[0].timings.size() == 2);
    for (const sfc::Timing& t : r.shapes[0].timings) {
      CHECK(t.reps == 6);
      CHECK(t.min > 0);
      CHECK(t.min <= t.mean);
    }
    // Each pass kept apart too: the pooled fastest run is the fastest pass's.
    REQUIRE(r.shapes[0].passes.size() == 3);
    for (std::size_t i = 0; i < 2; ++i) {
      double fastest = 1e300;
      for (const std::vector<sfc::Timing>& pass : r.shapes[0].passes) {
        REQUIRE(pass.size() == 2);
        CHECK(pass[i].reps == 2);
        fastest = std::min(fastest, pass[i].min);
      }
      CHECK(r.shapes[0].timings[i].min == fastest);
    }
    CHECK(sfc::summarize(r).pass_ratios_vs_best_peer.size() == 3);
    CHECK(r.shapes[0].max_error_ratio <= 1);
  }
}

TEST_CASE("bench: a minimum time per pass gives small shapes more runs, the same for everyone") {
  sfc::BenchOptions options = tiny_options(sfc::Layout::blocked);
  options.reps = 3;
  const sfc::GemmShape small{64, 64, 64}, large{4096, 4096, 4096};
  CHECK(sfc::bench_reps(small, options, 100) == 3);  // min_seconds 0: reps as asked
  options.min_seconds = 0.01;
  // 64^3 at a 100 GFLOP/s roofline: 5.2 us a run, so 0.01 s needs 1908 runs: capped.
  CHECK(sfc::bench_reps(small, options, 100) == sfc::kMaxBenchReps);
  CHECK(sfc::bench_reps({64, 64, 1024}, options, 100) == 120);  // 84 us a run
  CHECK(sfc::bench_reps(large, options, 100) == 3);             // 1.4 s a run: reps
  CHECK(sfc::bench_reps(small, options, 0) == 3);               // no roofline: reps

  const sfc::test::ScopedEnvironment small_flush("SFC_COLD_BYTES", "1048576");
  std::vector<std::unique_ptr<sfc::GemmPeer>> peers;
  peers.push_back(std::make_unique<NaivePeer>("naive", true));
  options.passes = 2;
  options.min_seconds = 1e-3;
  const sfc::Roofline roofline{.gflops_per_core = 1, .bandwidth_gbs = 1000, .threads = 1, .source = "test"};
  const sfc::GemmShape shape{32, 32, 32};  // 65.5 us at 1 GFLOP/s: 16 runs per pass
  const sfc::BenchResult r = sfc::run_bench(
      {shape}, options, [](const sfc::GemmShape&) { return sfc::Knobs{}; }, std::move(peers), roofline);
  REQUIRE(r.shapes[0].timings.size() == 2);
  for (const sfc::Timing& t : r.shapes[0].timings) CHECK(t.reps == 2 * 16);

  options.min_seconds = -1;
  CHECK_THROWS_AS(sfc::run_bench(
                      {shape}, options, [](const sfc::GemmShape&) { return sfc::Knobs{}; }, {}, roofline),
                  sfc::Error);
}

TEST_CASE("bench: a peer without the dtype is dropped with a note") {
  const sfc::test::ScopedEnvironment small_flush("SFC_COLD_BYTES", "1048576");
  std::vector<std::unique_ptr<sfc::GemmPeer>> peers;
  peers.push_back(std::make_unique<NaivePeer>("doubles", true));
  peers.push_back(std::make_unique<NaivePeer>("floats-only", false));
  sfc::BenchOptions options = tiny_options(sfc::Layout::blocked);
  options.dtype = sfc::DType::f64;
  const sfc::BenchResult r = sfc::run_bench(
      {{32, 32, 32}}, options, [](const sfc::GemmShape&) { return sfc::Knobs{}; }, std::move(peers),
      kRoofline);
  CHECK(r.implementations == std::vector<std::string>{"sfc-ca", "doubles"});
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0] == "floats-only skipped: it has no f64 GEMM");
}

TEST_CASE("bench: a result that differs from the fp64 reference is flagged, with whose it is") {
  const sfc::test::ScopedEnvironment small_flush("SFC_COLD_BYTES", "1048576");
  std::vector<std::unique_ptr<sfc::GemmPeer>> peers;
  peers.push_back(std::make_unique<NaivePeer>("wrong", false, 0.5f));
  const sfc::BenchResult r = sfc::run_bench(
      {{32, 32, 64}}, tiny_options(sfc::Layout::blocked),
      [](const sfc::GemmShape&) {
        return sfc::Knobs{2, 1};
      },
      std::move(peers), kRoofline);
  CHECK(r.shapes[0].max_error_ratio > 1);
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].find("wrong's result") == 0);
  CHECK(r.notes[0].find("differs from the fp64 reference") != std::string::npos);
  CHECK(r.shapes[0].worst_implementation == 1);
}

TEST_CASE("bench: bad requests are sfc::Error before anything runs") {
  const auto picker = [](const sfc::GemmShape&) { return sfc::Knobs{}; };
  sfc::BenchOptions o = tiny_options(sfc::Layout::blocked);
  CHECK_THROWS_AS(sfc::run_bench({}, o, picker, {}, kRoofline), sfc::Error);
  o.reps = 0;
  CHECK_THROWS_AS(sfc::run_bench(kShapes, o, picker, {}, kRoofline), sfc::Error);
  o = tiny_options(sfc::Layout::blocked);
  o.passes = 0;
  CHECK_THROWS_AS(sfc::run_bench(kShapes, o, picker, {}, kRoofline), sfc::Error);
  o = tiny_options(sfc::Layout::blocked);
  CHECK_THROWS_AS(sfc::run_bench({{0, 4, 4}}, o, picker, {}, kRoofline), sfc::Error);
}

TEST_CASE("bench: the quick search returns a configuration the plan runs as is") {
  const sfc::test::ScopedEnvironment small_flush("SFC_COLD_BYTES", "1048576");
  const sfc::ConfigPicker pick = sfc::quick_search_picker(tiny_options(sfc::Layout::blocked));
  const sfc::Knobs c = pick({64, 64, 256});  // 4 K blocks of 64
  CHECK(c.k_layers >= 1);
  CHECK(c.k_block_factor >= 1);
  CHECK(c.k_layers * c.k_block_factor <= 4);
}

TEST_CASE("bench: on a large product the check samples rows and columns, and still catches a wrong entry") {
  const sfc::test::ScopedEnvironment small_flush("SFC_COLD_BYTES", "1048576");
  const sfc::GemmShape shape{1100, 64, 1000};  // 7e7 multiply-adds: above the full check's limit
  for (float error : {0.0f, 0.5f}) {
    CAPTURE(error);
    std::vector<std::unique_ptr<sfc::GemmPeer>> peers;
    peers.push_back(std::make_unique<NaivePeer>("naive", false, error));
    sfc::BenchOptions o = tiny_options(sfc::Layout::row_major);
    o.warmup = 0;
    o.reps = 1;
    o.call = {.trans_a = sfc::Transpose::transpose, .beta = 0.5};
    const sfc::BenchResult r = sfc::run_bench(
        {shape}, o, [](const sfc::GemmShape&) { return sfc::Knobs{}; }, std::move(peers), kRoofline);
    REQUIRE(r.shapes.size() == 1);
    if (error == 0) {
      CHECK(r.shapes[0].max_error_ratio <= 1);
    } else {
      CHECK(r.shapes[0].max_error_ratio > 1);  // C[0] is in the first sampled row
      CHECK(r.shapes[0].worst_implementation == 1);
    }
  }
}
