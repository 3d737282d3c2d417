// The pool of apply buffers the files of a process share
// (apply_buffers_pool.h): a set given back is the next one taken, with
// the buffers its last apply left, and applies at once get sets of their
// own.
#include "apply_buffers_pool.h"

#include <doctest/doctest.h>

#include <memory>

#include "test_util.h"

using namespace h5j;

TEST_CASE("a set of apply buffers given back is the next one taken, its buffers kept") {
  ApplyBuffersPool pool;
  const ApplyBuffers* first = nullptr;
  {
    auto lease = pool.take();
    first = lease.get();
    lease->run = AlignedBuffer(4096, real_syscalls());  // as an apply leaves it
  }
  auto again = pool.take();
  CHECK(again.get() == first);
  CHECK(again->run.valid());
}

TEST_CASE("applies at once take sets of their own, and both come back") {
  ApplyBuffersPool pool;
  const ApplyBuffers *a = nullptr, *b = nullptr;
  {
    auto one = pool.take();
    auto two = pool.take();
    a = one.get();
    b = two.get();
    CHECK(a != b);
  }
  auto x = pool.take();
  auto y = pool.take();
  CHECK(((x.get() == a && y.get() == b) || (x.get() == b && y.get() == a)));
}

// The driver's pool lives for the process, and a file's applies allocate
// its buffers through that file's seam (File::allocate_buffer): a test's
// file system, a fault-injecting one, ends with its run while the pool
// keeps what its files allocated.  So a buffer owes its seam nothing once
// made (syscalls.h): under ASan, freeing one through the seam that made it
// was a use after free here.
TEST_CASE("buffers kept in the pool outlive the seam that allocated them") {
  ApplyBuffersPool pool;
  {
    auto seam = std::make_unique<Syscalls>();  // a test's file system's, gone after its run
    auto lease = pool.take();
    lease->run = AlignedBuffer(64 << 10, *seam);
    REQUIRE(lease->run.valid());
  }
  auto again = pool.take();
  REQUIRE(again->run.valid());
  again->run.data()[0] = std::byte(1);
  again->run = AlignedBuffer(4096, real_syscalls());  // the old one freed without its seam
  CHECK(again->run.valid());
}
