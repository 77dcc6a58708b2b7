// AlignedBuffer: an owning, 64-byte aligned, uninitialised byte buffer.
// Cache-line alignment keeps LIBXSMM's loads aligned and stops two threads'
// tiles from sharing a line. Buffers of huge_page_threshold bytes or more are
// 2 MiB aligned and offered to the kernel as transparent huge pages (where THP
// is set to "madvise", as on Debian, nothing is huge unless asked): streaming
// a cold operand through 4 KiB pages costs a TLB miss every 4 KiB.
#pragma once
#include <sys/mman.h>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

namespace sfc {

class AlignedBuffer {
 public:
  static constexpr std::size_t alignment = 64;
  static constexpr std::size_t huge_page = std::size_t(2) << 20;
  static constexpr std::size_t huge_page_threshold = std::size_t(4) << 20;

  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    const std::size_t align = bytes >= huge_page_threshold ? huge_page : alignment;
    const std::size_t rounded = (bytes + align - 1) / align * align;
    data_ = std::aligned_alloc(align, rounded);
    if (!data_) throw std::bad_alloc();
    if (align == huge_page) madvise(data_, rounded, MADV_HUGEPAGE);  // advice only: failure is harmless
  }
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  template <class T>
  T* as() {
    return static_cast<T*>(data_);
  }
  template <class T>
  const T* as() const {
    return static_cast<const T*>(data_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace sfc
