// BufferPool (buffer_pool.h): a buffer given back is the one the next take
// of its size and pages gets, and the pool keeps at most kMaxIdle.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "buffer_pool.h"

using namespace h5j;

namespace {

AlignedBuffer buffer(size_t size) {
  AlignedBuffer b(size, real_syscalls(), Pages::kSmall);
  REQUIRE(b.valid());
  return b;
}

}  // namespace

TEST_CASE("a buffer given back is taken again, only at its own size and pages") {
  BufferPool pool;
  CHECK_FALSE(pool.take(1 << 16, Pages::kSmall));  // nothing kept yet
  AlignedBuffer b = buffer(1 << 16);
  const std::byte* mem = b.data();
  b.data()[100] = std::byte(7);
  pool.give_back(std::move(b), Pages::kSmall);
  CHECK(pool.idle() == 1);
  CHECK_FALSE(pool.take(1 << 17, Pages::kSmall));   // another size
  CHECK_FALSE(pool.take(1 << 16, Pages::kSystem));  // other pages
  auto again = pool.take(1 << 16, Pages::kSmall);
  REQUIRE(again);
  CHECK(again->data() == mem);
  CHECK(again->data()[100] == std::byte(7));  // as its last user left it
  CHECK(pool.idle() == 0);
}

TEST_CASE("a pool keeps at most kMaxIdle buffers, the latest given back") {
  BufferPool pool;
  std::vector<const std::byte*> given;
  for (size_t i = 0; i < BufferPool::kMaxIdle + 2; ++i) {
    AlignedBuffer b = buffer(4096);
    given.push_back(b.data());
    pool.give_back(std::move(b), Pages::kSmall);
  }
  CHECK(pool.idle() == BufferPool::kMaxIdle);
  std::vector<const std::byte*> taken;
  while (auto b = pool.take(4096, Pages::kSmall)) taken.push_back(b->data());
  REQUIRE(taken.size() == BufferPool::kMaxIdle);
  for (const std::byte* t : taken) CHECK(std::find(given.end() - BufferPool::kMaxIdle, given.end(), t) != given.end());
}
