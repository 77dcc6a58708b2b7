// A small program the recording tests run as a child process (tests/test_record.cpp):
//
//   sfc_record_driver conf CALLS M N K [M N K ...]   libsfcconf queries (row-major, f32, 2 threads),
//                                                      CALLS per shape, from two threads at once,
//                                                      writing the record every 500 queries
//   sfc_record_driver gemm CALLS M N K [M N K ...]   sfc::gemm calls (row-major, f32, B transposed),
//                                                      CALLS per shape, each result checked
//   sfc_record_driver gemm2 CALLS M N K [...]        the same from two threads at once, each GEMM
//                                                      on one thread (so both call every shape together)
//   sfc_record_driver spread CALLS M N K [...]       one thread per shape, all at once, each calling only
//                                                      its shape on one thread (so each tunes and stores
//                                                      its own shape while the others do)
//
// Recording is what SFC_RECORD (and SFC_VERBOSE, SFC_TUNE...) in the environment ask for.
// Exit 0 when every call succeeded (and every gemm result is within the
// tolerance), 1 otherwise, 2 for bad arguments.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sfc/auto_gemm.hpp"
#include "sfcconf.h"

namespace {

struct Shape {
  long long m, n, k;
};

int run_queries(long long calls, const std::vector<Shape>& shapes) {
  sfcconf_handle* conf = nullptr;
  if (sfcconf_open(nullptr, nullptr, &conf) != SFCCONF_OK) {
    std::fprintf(stderr, "sfcconf_open: %s\n", sfcconf_last_error());
    return 1;
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      sfcconf_answer a;
      // Thread t makes every other call, so each shape gets exactly CALLS.
      for (long long i = t; i < calls; i += 2) {
        for (const Shape& s : shapes)
          if (sfcconf_query_layout(conf, s.m, s.n, s.k, SFCCONF_F32, 2, SFCCONF_ROW_MAJOR, &a) != SFCCONF_OK)
            ++failures;
        // Many writes during the run, so two processes merge into the file at once.
        if (t == 0 && i % 500 == 0 && sfcconf_record_flush() != SFCCONF_OK) {
          std::fprintf(stderr, "sfcconf_record_flush: %s\n", sfcconf_last_error());
          ++failures;
        }
      }
    });
  for (auto& t : threads) t.join();
  sfcconf_close(conf);
  return failures == 0 ? 0 : 1;
}

// C = A * B^T on row-major matrices, checked against a double-precision loop.
int run_gemms(long long calls, const std::vector<Shape>& shapes, int threads = 0) {
  std::mt19937 random(7);
  std::uniform_real_distribution<float> value(-1, 1);
  for (const Shape& s : shapes) {
    std::vector<float> a(std::size_t(s.m * s.k)), b(std::size_t(s.n * s.k)), c(std::size_t(s.m * s.n));
    for (float& x : a) x = value(random);
    for (float& x : b) x = value(random);
    std::vector<double> reference(c.size());
    for (long long i = 0; i < s.m; ++i)
      for (long long j = 0; j < s.n; ++j) {
        double sum = 0;
        for (long long p = 0; p < s.k; ++p)
          sum += double(a[std::size_t(i * s.k + p)]) * b[std::size_t(j * s.k + p)];
        reference[std::size_t(i * s.n + j)] = sum;
      }
    for (long long call = 0; call < calls; ++call) {
      std::fill(c.begin(), c.end(), 0.f);
      sfc::process_gemm().gemm(sfc::Layout::row_major, sfc::Transpose::none, sfc::Transpose::transpose,
                               {s.m, s.n, s.k}, sfc::DType::f32, 1.0, a.data(), s.k, b.data(), s.k, 0.0,
                               c.data(), s.n, threads);
      // The fp32 bound of the other tests: K * 2^-24 relative to |A||B| (here <= K).
      double worst = 0;
      for (std::size_t i = 0; i < c.size(); ++i) worst = std::max(worst, std::fabs(c[i] - reference[i]));
      if (worst > 4.0 * double(s.k) * double(s.k) * std::ldexp(1.0, -24)) {
        std::fprintf(stderr, "%lldx%lldx%lld call %lld: error %g\n", s.m, s.n, s.k, call, worst);
        return 1;
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6 || (argc - 3) % 3 != 0) {
    std::fprintf(stderr, "usage: %s conf|gemm CALLS M N K [M N K ...]\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  const long long calls = std::atoll(argv[2]);
  std::vector<Shape> shapes;
  for (int i = 3; i + 2 < argc; i += 3)
    shapes.push_back({std::atoll(argv[i]), std::atoll(argv[i + 1]), std::atoll(argv[i + 2])});
  try {
    if (mode == "conf") return run_queries(calls, shapes);
    if (mode == "gemm") return run_gemms(calls, shapes);
    if (mode == "gemm2") {
      std::atomic<int> failures{0};
      std::thread other([&] {
        try {
          failures += run_gemms(calls, shapes, 1);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "error: %s\n", e.what());
          ++failures;
        }
      });
      failures += run_gemms(calls, shapes, 1);
      other.join();
      return failures == 0 ? 0 : 1;
    }
    if (mode == "spread") {
      std::atomic<int> failures{0};
      std::vector<std::thread> threads;
      for (const Shape& shape : shapes)
        threads.emplace_back([&, shape] {
          try {
            failures += run_gemms(calls, {shape}, 1);
          } catch (const std::exception& e) {
            std::fprintf(stderr, "error: %s\n", e.what());
            ++failures;
          }
        });
      for (std::thread& t : threads) t.join();
      return failures == 0 ? 0 : 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "unknown mode '%s'\n", mode.c_str());
  return 2;
}
