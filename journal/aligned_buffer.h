// RAII, page-aligned byte buffer (page alignment keeps O_DIRECT an option).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace h5j {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size) : size_(size) {
    void* p = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096);
    if (p == nullptr) throw std::bad_alloc();
    mem_.reset(static_cast<std::byte*>(p));
  }
  std::byte* data() { return mem_.get(); }
  const std::byte* data() const { return mem_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> mem_;
  size_t size_ = 0;
};

}  // namespace h5j
