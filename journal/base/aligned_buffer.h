// RAII, page-aligned byte buffer (page alignment keeps O_DIRECT an option),
// from a Syscalls so that allocation failures can be injected, and freed
// with std::free, so that it owes that Syscalls nothing once made (it may
// outlive it: syscalls.h).  Its pages are what the caller asks for (Pages,
// huge_pages.h): a buffer that asks for huge pages starts on one, so that
// the advice covers all of it.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <utility>

#include "huge_pages.h"
#include "syscalls.h"

namespace h5j {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // Allocates `size` bytes; check valid().
  AlignedBuffer(size_t size, Syscalls& sys, Pages pages = Pages::kSystem) : size_(size) {
    mem_ = static_cast<std::byte*>(sys.alloc_buffer(size, pages == Pages::kHuge ? kHugePage : 4096));
    if (mem_ == nullptr) return;
    if (pages == Pages::kHuge) advise_huge_pages(mem_, size);
    if (pages == Pages::kSmall) advise_small_pages(mem_, size);
  }
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : mem_(std::exchange(o.mem_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      mem_ = std::exchange(o.mem_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { release(); }

  bool valid() const { return mem_ != nullptr; }
  std::byte* data() { return mem_; }
  const std::byte* data() const { return mem_; }
  size_t size() const { return size_; }

 private:
  void release() {
    std::free(mem_);
    mem_ = nullptr;
  }
  std::byte* mem_ = nullptr;
  size_t size_ = 0;
};

}  // namespace h5j
