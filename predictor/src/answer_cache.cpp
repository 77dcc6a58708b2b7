// The seqlock protocol of AnswerCache, without standalone fences (see H.-J.
// Boehm, "Can seqlocks get along with programming language memory models?",
// MSPC 2012): a reader's data loads are acquire loads, so its second load of
// the sequence number cannot move before them; a writer's data stores are
// release stores, so they cannot become visible before its odd sequence
// number. On x86 both compile to plain moves, and ThreadSanitizer, which
// does not model fences, understands every step.
#include "sfc/answer_cache.hpp"

#include <algorithm>
#include <bit>

namespace sfc {
namespace {

using Words = AnswerCache::Words;

Words key_of(const GemmShape& s, DType dtype, int threads, Layout layout) {
  return {std::uint64_t(s.m), std::uint64_t(s.n), std::uint64_t(s.k),
          std::uint64_t(layout) << 40 | std::uint64_t(dtype) << 32 | std::uint32_t(threads)};
}

void pack(const Answer& a, Words& w) {
  w[4] = std::uint64_t(a.knobs.k_layers) | std::uint64_t(a.knobs.k_block_factor) << 8 |
         std::uint64_t(a.tier) << 16 | std::uint64_t(a.platform) << 24 |
         std::uint64_t(a.borrowed_from ? 1 + int(*a.borrowed_from) : 0) << 32;
  w[5] = std::bit_cast<std::uint64_t>(a.distance);
  w[6] = std::uint64_t(a.nearest.m);
  w[7] = std::uint64_t(a.nearest.n);
  w[8] = std::uint64_t(a.nearest.k);
}

Answer unpack(const Words& w) {
  Answer a;
  a.knobs = {int(w[4] & 0xff), int(w[4] >> 8 & 0xff)};
  a.tier = Tier(w[4] >> 16 & 0xff);
  a.platform = PlatformMatch(w[4] >> 24 & 0xff);
  if (const auto borrowed = w[4] >> 32 & 0xff) a.borrowed_from = Layout(borrowed - 1);
  a.distance = std::bit_cast<double>(w[5]);
  a.nearest = {std::int64_t(w[6]), std::int64_t(w[7]), std::int64_t(w[8])};
  return a;
}

}  // namespace

AnswerCache::AnswerCache(std::size_t slots)
    : slots_(std::make_unique<Slot[]>(std::bit_ceil(std::max<std::size_t>(slots, ways)))),
      mask_(std::bit_ceil(std::max<std::size_t>(slots, ways)) - 1) {}

std::size_t AnswerCache::bucket_of(const Words& key) const noexcept {
  // A multiplicative hash of the key words; the top bits are the best mixed.
  std::uint64_t h = 0;
  for (int i = 0; i < key_words; ++i) h = (h ^ key[i]) * 0x9e3779b97f4a7c15ull;
  return std::size_t(h >> 32) & mask_ & ~std::size_t(ways - 1);
}

bool AnswerCache::read(const Slot& s, Words& w) noexcept {
  const std::uint64_t before = s.sequence.load(std::memory_order_acquire);
  if (before == 0 || before % 2) return false;
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = s.words[i].load(std::memory_order_acquire);
  return s.sequence.load(std::memory_order_relaxed) == before;
}

std::optional<Answer> AnswerCache::find(const GemmShape& shape, DType dtype, int threads,
                                        Layout layout) const noexcept {
  const Words key = key_of(shape, dtype, threads, layout);
  const std::size_t bucket = bucket_of(key);
  for (std::size_t way = 0; way < ways; ++way) {
    Words w;
    if (read(slots_[bucket + way], w) && std::equal(key.begin(), key.begin() + key_words, w.begin()))
      return unpack(w);
  }
  return std::nullopt;
}

void AnswerCache::insert(const GemmShape& shape, DType dtype, int threads, Layout layout,
                         const Answer& answer) noexcept {
  Words w = key_of(shape, dtype, threads, layout);
  pack(answer, w);
  // An empty way, or the one holding this key; else evict the way that the
  // key's second hash picks, so two hot keys of one bucket can both stay.
  const std::size_t bucket = bucket_of(w);
  std::size_t way = std::size_t(w[0] ^ w[1] ^ w[2]) % ways;
  for (std::size_t candidate = 0; candidate < ways; ++candidate) {
    Words held;
    if (!read(slots_[bucket + candidate], held) ||
        std::equal(w.begin(), w.begin() + key_words, held.begin())) {
      way = candidate;
      break;
    }
  }
  Slot& s = slots_[bucket + way];
  std::uint64_t sequence = s.sequence.load(std::memory_order_relaxed);
  if (sequence % 2 || !s.sequence.compare_exchange_strong(sequence, sequence + 1, std::memory_order_relaxed))
    return;  // another thread is writing this slot: leave it to them
  for (std::size_t i = 0; i < w.size(); ++i) s.words[i].store(w[i], std::memory_order_release);
  s.sequence.store(sequence + 2, std::memory_order_release);
}

}  // namespace sfc
