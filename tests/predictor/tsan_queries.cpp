// Concurrent queries on one libsfcconf handle, built with ThreadSanitizer
// (tests/predictor.cmake): several threads query shapes in different orders,
// so cache hits, misses and slot rewrites race with each other; every answer
// must match the one a fresh handle gives on a single thread. Meanwhile every
// query is counted in a shape record that another thread writes out again and
// again; the file must end up with exactly the queries made (3,001 shapes per
// thread: most of them past the per-thread tables, in the shared overflow).
// Any data race makes ThreadSanitizer fail the run (exit code 66).
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sfc/shape_record.hpp"
#include "sfcconf.h"

namespace {

struct Query {
  std::int64_t m, n, k;
  sfcconf_dtype dtype;
  int threads;
};

bool same(const sfcconf_answer& a, const sfcconf_answer& b) {
  return a.k_layers == b.k_layers && a.k_block_factor == b.k_block_factor && a.tier == b.tier &&
         a.nearest_m == b.nearest_m && a.nearest_n == b.nearest_n && a.nearest_k == b.nearest_k;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s TABLE\n", argv[0]);
    return 2;
  }
  // Tuned, nearby and far shapes, f32 and f64, 2 and 3 threads: every tier.
  std::vector<Query> queries;
  std::mt19937_64 random(7);
  std::uniform_int_distribution<std::int64_t> size(16, 8192);
  for (int i = 0; i < 3000; ++i)
    queries.push_back(
        {size(random), size(random), size(random), i % 5 ? SFCCONF_F32 : SFCCONF_F64, i % 7 ? 2 : 3});
  queries.push_back({1024, 1024, 1024, SFCCONF_F32, 2});

  sfcconf_handle* reference = nullptr;
  sfcconf_handle* shared = nullptr;
  if (sfcconf_open(argv[1], nullptr, &reference) != SFCCONF_OK ||
      sfcconf_open(argv[1], nullptr, &shared) != SFCCONF_OK) {
    std::fprintf(stderr, "cannot open %s: %s\n", argv[1], sfcconf_last_error());
    return 1;
  }
  std::vector<sfcconf_answer> expected(queries.size());
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const Query& q = queries[i];
    if (sfcconf_query(reference, q.m, q.n, q.k, q.dtype, q.threads, &expected[i]) != SFCCONF_OK) {
      std::fprintf(stderr, "query failed: %s\n", sfcconf_last_error());
      return 1;
    }
  }

  const auto record = std::filesystem::temp_directory_path() /
                      ("sfcconf-tsan-" + std::to_string(std::random_device()()) + ".record");
  if (sfcconf_record_open(record.c_str()) != SFCCONF_OK) {
    std::fprintf(stderr, "sfcconf_record_open: %s\n", sfcconf_last_error());
    return 1;
  }
  std::atomic<bool> querying{true};
  std::thread writer([&] {
    while (querying.load())
      if (sfcconf_record_flush() != SFCCONF_OK) std::fprintf(stderr, "flush: %s\n", sfcconf_last_error());
  });

  std::atomic<int> mismatches{0}, errors{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&, t] {
      // Each thread walks the list with its own stride, three times over:
      // the second and third passes hit the cache where the first filled it.
      const std::size_t stride = 1 + 2 * std::size_t(t);
      for (int pass = 0; pass < 3; ++pass)
        for (std::size_t j = 0; j < queries.size(); ++j) {
          const std::size_t i = (j * stride + std::size_t(t)) % queries.size();
          const Query& q = queries[i];
          sfcconf_answer a;
          if (sfcconf_query(shared, q.m, q.n, q.k, q.dtype, q.threads, &a) != SFCCONF_OK)
            ++errors;
          else if (!same(a, expected[i]))
            ++mismatches;
        }
    });
  for (std::thread& w : workers) w.join();
  querying.store(false);
  writer.join();
  const bool closed = sfcconf_record_close() == SFCCONF_OK;
  const std::uint64_t recorded = sfc::ShapeRecord::load(record.string()).total_calls();
  std::filesystem::remove(record);
  std::filesystem::remove(record.string() + ".lock");
  const std::uint64_t made = 4 * 3 * queries.size();
  if (!closed || recorded != made) {
    std::fprintf(stderr, "the record holds %llu calls, %llu were made\n",
                 static_cast<unsigned long long>(recorded), static_cast<unsigned long long>(made));
    return 1;
  }
  sfcconf_close(shared);
  sfcconf_close(reference);
  std::printf("%zu shapes x 4 threads x 3 passes: %d mismatches, %d errors\n", queries.size(),
              mismatches.load(), errors.load());
  return mismatches == 0 && errors == 0 ? 0 : 1;
}
