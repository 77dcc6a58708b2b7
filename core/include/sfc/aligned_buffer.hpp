// AlignedBuffer: an owning, 64-byte aligned, uninitialised byte buffer.
// Cache-line alignment keeps LIBXSMM's loads aligned and stops two threads'
// tiles from sharing a line.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

namespace sfc {

class AlignedBuffer {
 public:
  static constexpr std::size_t alignment = 64;

  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    data_ = std::aligned_alloc(alignment, rounded);
    if (!data_) throw std::bad_alloc();
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

  void* data() const { return data_; }
  template <class T>
  T* as() const { return static_cast<T*>(data_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace sfc
