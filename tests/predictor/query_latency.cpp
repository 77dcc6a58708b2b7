// The libsfcconf latency benchmark (not a pass/fail test: numbers vary with
// the machine's load). Builds a 2,000-shape table for this machine, then
// reports:
//   load    median time of sfcconf_open on it
//   cached  median time of a query for a shape asked before
//   uncached  median time of a query for a shape never asked before
//   cached, recording  the cached query while every query is counted in a
//             shape record (sfcconf_record_open)
// with two threads querying at once, as the library is used in a program.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "../test_predictor_support.hpp"
#include "sfc/platform.hpp"
#include "sfcconf.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr int batch = 64;  // queries per clock reading: the clock costs ~20 ns itself

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
  return v[v.size() / 2];
}

std::int64_t log_uniform(std::mt19937_64& random, double lo, double hi) {
  std::uniform_real_distribution<double> u(std::log2(lo), std::log2(hi));
  return std::int64_t(std::exp2(u(random)));
}

// Nanoseconds per query, one value per batch, while `threads` threads run.
std::vector<double> time_queries(sfcconf_handle* conf, const std::vector<sfc::GemmShape>& shapes,
                                 int threads) {
  std::vector<std::vector<double>> per_thread(static_cast<std::size_t>(threads));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      sfcconf_answer a;
      const std::size_t begin = shapes.size() * std::size_t(t) / std::size_t(threads);
      const std::size_t end = shapes.size() * std::size_t(t + 1) / std::size_t(threads);
      for (std::size_t i = begin; i + batch <= end; i += batch) {
        const auto start = Clock::now();
        for (std::size_t j = i; j < i + batch; ++j)
          sfcconf_query(conf, shapes[j].m, shapes[j].n, shapes[j].k, SFCCONF_F32, 2, &a);
        per_thread[std::size_t(t)].push_back(
            std::chrono::duration<double, std::nano>(Clock::now() - start).count() / batch);
      }
    });
  for (auto& w : workers) w.join();
  std::vector<double> all;
  for (auto& v : per_thread) all.insert(all.end(), v.begin(), v.end());
  return all;
}

}  // namespace

int main() {
  std::mt19937_64 random(1);
  std::vector<sfc::TunedShape> tuned;
  for (int i = 0; i < 2000; ++i)
    tuned.push_back(sfc::test::synthetic_shape(
        {log_uniform(random, 64, 16384), log_uniform(random, 64, 16384), log_uniform(random, 64, 16384)},
        {1 + i % 3, 1 + i % 8}));
  sfc::TuningTable table = sfc::test::synthetic_table(tuned, {200, 60});
  table.platform = sfc::detect_platform(2);
  const auto path = std::filesystem::temp_directory_path() / "sfcconf-latency.sfctable";
  table.save(path.string());

  std::vector<double> loads;
  sfcconf_handle* conf = nullptr;
  for (int i = 0; i < 5; ++i) {
    if (conf) sfcconf_close(conf);
    const auto start = Clock::now();
    if (sfcconf_open(path.c_str(), nullptr, &conf) != SFCCONF_OK) {
      std::fprintf(stderr, "open failed: %s\n", sfcconf_last_error());
      return 1;
    }
    loads.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::filesystem::remove(path);

  // Uncached: 200,000 distinct shapes, none asked twice (the cache misses).
  std::vector<sfc::GemmShape> fresh;
  for (std::int64_t i = 0; fresh.size() < 200000; ++i)
    fresh.push_back({100 + i % 4000, 100 + (i / 4000) % 4000, 2000 + i / 16000000});
  std::shuffle(fresh.begin(), fresh.end(), random);
  const double uncached = median(time_queries(conf, fresh, 2));

  // Cached: 64 shapes asked over and over (each thread its own 32).
  std::vector<sfc::GemmShape> repeated;
  for (int i = 0; i < 200000; ++i) repeated.push_back(fresh[std::size_t(i % 32 + 32 * (i >= 100000))]);
  time_queries(conf, repeated, 2);  // fill the cache
  const double cached = median(time_queries(conf, repeated, 2));

  const auto record = std::filesystem::temp_directory_path() / "sfcconf-latency.record";
  std::filesystem::remove(record);
  if (sfcconf_record_open(record.c_str()) != SFCCONF_OK) {
    std::fprintf(stderr, "sfcconf_record_open failed: %s\n", sfcconf_last_error());
    return 1;
  }
  time_queries(conf, repeated, 2);  // each thread's first query of a shape fills its table
  const double recording = median(time_queries(conf, repeated, 2));
  sfcconf_record_close();
  std::filesystem::remove(record);
  std::filesystem::remove(record.string() + ".lock");
  sfcconf_close(conf);

  std::printf("libsfcconf, 2,000-shape table, 2 threads querying at once:\n");
  std::printf("  load      %8.2f ms (median of 5 opens)\n", median(loads));
  std::printf("  cached    %8.1f ns per query (median)\n", cached);
  std::printf("  uncached  %8.1f ns per query (median)\n", uncached);
  std::printf("  cached, recording %8.1f ns per query (median)\n", recording);
  return 0;
}
