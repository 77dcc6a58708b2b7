// AnswerCache: the read-mostly cache in front of ConfigPredictor::query in
// libsfcconf, so that a program asking again for a shape it already asked for
// pays a hash and a few loads (tens of nanoseconds), not a k-d tree search.
//
// Two-way set associative (two shapes that hash alike can both stay), fixed
// size, lock free: each slot is guarded by a sequence number (a seqlock). A
// reader never writes shared memory, so threads that query at once do not
// bounce cache lines between cores; it retries nothing and simply misses when
// a slot is being written. A writer that finds its slot busy skips caching. Every field is a
// std::atomic, so there is no data race for ThreadSanitizer (or the language) to object to.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "sfc/predictor.hpp"

namespace sfc {

class AnswerCache {
 public:
  static constexpr int key_words = 4;    // m, n, k, (layout, dtype, threads)
  static constexpr int value_words = 5;  // knobs, tier and platform match, distance, nearest m, n, k
  using Words = std::array<std::uint64_t, key_words + value_words>;

  explicit AnswerCache(std::size_t slots = 1024);  // rounded up to a power of two, >= 2

  std::optional<Answer> find(const GemmShape& shape, DType dtype, int threads, Layout layout) const noexcept;
  void insert(const GemmShape& shape, DType dtype, int threads, Layout layout, const Answer& answer) noexcept;

 private:
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> sequence{0};  // odd while written; 0: never filled
    std::array<std::atomic<std::uint64_t>, key_words + value_words> words{};
  };

  static constexpr std::size_t ways = 2;  // slots per bucket, side by side

  std::size_t bucket_of(const Words& key) const noexcept;  // its first slot
  // A consistent copy of the slot, or false (empty, or being written).
  static bool read(const Slot& slot, Words& words) noexcept;

  std::unique_ptr<Slot[]> slots_;
  std::size_t mask_;
};

}  // namespace sfc
