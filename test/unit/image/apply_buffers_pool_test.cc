// The pool of apply buffers the files of a process share
// (apply_buffers_pool.h): a set given back is the next one taken, with
// the buffers its last apply left, and applies at once get sets of their
// own.
#include "apply_buffers_pool.h"

#include <doctest/doctest.h>

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
