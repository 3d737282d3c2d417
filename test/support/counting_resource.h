// Counts what is taken through it from the heap: while it lives, it is the
// default std::pmr resource, so the pools made then (InPlaceWrites',
// ExtentMap's) take their chunks through it.  A test of a pool checks that
// it stops taking once it holds a round's worth.
#pragma once

#include <cstddef>
#include <memory_resource>

namespace h5j::test {

class CountingResource : public std::pmr::memory_resource {
 public:
  CountingResource() : was_(std::pmr::set_default_resource(this)) {}
  ~CountingResource() override { std::pmr::set_default_resource(was_); }
  CountingResource(const CountingResource&) = delete;
  CountingResource& operator=(const CountingResource&) = delete;
  size_t allocations = 0;

 private:
  void* do_allocate(size_t bytes, size_t align) override {
    ++allocations;
    return was_->allocate(bytes, align);
  }
  void do_deallocate(void* p, size_t bytes, size_t align) override { was_->deallocate(p, bytes, align); }
  bool do_is_equal(const memory_resource& o) const noexcept override { return this == &o; }
  std::pmr::memory_resource* was_;
};

}  // namespace h5j::test
