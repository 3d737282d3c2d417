// LastWrites: copies of the last metadata writes, and the runs a rewrite
// changes (last_writes.h).
#include <doctest/doctest.h>

#include <vector>

#include "last_writes.h"

using namespace h5j;

namespace {

std::vector<std::byte> block(size_t n, int seed) {
  std::vector<std::byte> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = std::byte(i * 7 + size_t(seed));
  return b;
}

// Every block below is a rewrite: the last commit held the file this far.
constexpr uint64_t kCommitted = uint64_t(1) << 40;

}  // namespace

TEST_CASE("last writes: a block in new space is not kept, and its first rewrite is") {
  LastWrites w;
  auto b = block(4096, 1);
  std::vector<LastWrites::Run> runs;
  w.keep(8192, b, /*committed_size=*/8192);  // at the committed size: new space
  CHECK(!w.changed_runs(8192, b, runs));
  CHECK(w.bytes() == 0);
  w.keep(8192, b, /*committed_size=*/8192 + 4096);  // the next commit held it
  CHECK(w.changed_runs(8192, b, runs));
  CHECK(w.bytes() == 4096);
  w.keep(4096, block(8192, 2), /*committed_size=*/8192);  // a rewrite over it: replaces it
  CHECK(!w.changed_runs(8192, b, runs));
  CHECK(w.bytes() == 8192);
}

TEST_CASE("last writes: a rewrite's changed runs, in whole words, joined across short gaps") {
  LastWrites w;
  auto old = block(4100, 1);
  std::vector<LastWrites::Run> runs;
  CHECK(!w.changed_runs(4096, old, runs));  // no copy yet
  w.keep(4096, old, kCommitted);
  CHECK(w.changed_runs(4096, old, runs));
  CHECK(runs.empty());  // the same bytes: nothing to journal

  auto now = old;
  now[5] ^= std::byte(1);      // word [0, 8)
  now[60] ^= std::byte(1);     // word [56, 64): 48 bytes after the first, joined
  now[1000] ^= std::byte(1);   // word [1000, 1008): apart
  now[4099] ^= std::byte(1);   // the last, partial word [4096, 4100)
  REQUIRE(w.changed_runs(4096, now, runs));
  REQUIRE(runs.size() == 3);
  CHECK(runs[0].offset == 0);
  CHECK(runs[0].length == 64);
  CHECK(runs[1].offset == 1000);
  CHECK(runs[1].length == 8);
  CHECK(runs[2].offset == 4096);
  CHECK(runs[2].length == 4);
}

TEST_CASE("last writes: a copy is found only at its exact range") {
  LastWrites w;
  w.keep(1000, block(100, 1), kCommitted);
  std::vector<LastWrites::Run> runs;
  CHECK(!w.changed_runs(1000, block(99, 1), runs));
  CHECK(!w.changed_runs(1008, block(92, 1), runs));
  CHECK(w.changed_runs(1000, block(100, 2), runs));
}

TEST_CASE("last writes: a write or a forget drops the copies it overlaps") {
  LastWrites w;
  std::vector<LastWrites::Run> runs;
  w.keep(0, block(100, 1), kCommitted);
  w.keep(100, block(100, 1), kCommitted);
  w.keep(200, block(100, 1), kCommitted);
  w.keep(50, block(100, 2), kCommitted);  // overlaps the first two
  CHECK(!w.changed_runs(0, block(100, 1), runs));
  CHECK(!w.changed_runs(100, block(100, 1), runs));
  CHECK(w.changed_runs(50, block(100, 2), runs));
  CHECK(w.changed_runs(200, block(100, 1), runs));
  CHECK(w.bytes() == 200);
  w.forget(299, 300);  // the last byte of [200, 300)
  CHECK(!w.changed_runs(200, block(100, 1), runs));
  w.forget(0, 50);     // touches nothing kept
  CHECK(w.changed_runs(50, block(100, 2), runs));
  w.forget(149, 1000);
  CHECK(!w.changed_runs(50, block(100, 2), runs));
  CHECK(w.bytes() == 0);
}

TEST_CASE("last writes: at most kMaxCopy a block and kMaxBytes in all") {
  LastWrites w;
  std::vector<LastWrites::Run> runs;
  w.keep(0, block(LastWrites::kMaxCopy + 1, 1), kCommitted);
  CHECK(!w.changed_runs(0, block(LastWrites::kMaxCopy + 1, 1), runs));
  const size_t n = LastWrites::kMaxBytes / LastWrites::kMaxCopy;
  for (size_t i = 0; i < n; ++i) w.keep(i * LastWrites::kMaxCopy, block(LastWrites::kMaxCopy, 1), kCommitted);
  CHECK(w.bytes() == LastWrites::kMaxBytes);
  w.keep(n * LastWrites::kMaxCopy, block(8, 1), kCommitted);  // past the bound: the others go
  CHECK(w.bytes() == 8);
  CHECK(!w.changed_runs(0, block(LastWrites::kMaxCopy, 1), runs));
  CHECK(w.changed_runs(n * LastWrites::kMaxCopy, block(8, 1), runs));
}

// W3's root group: its local heap, one 88 KiB block, rewritten at each
// flush with the names added since.  Kept whole, a rewrite journals the
// new names, not the block.
TEST_CASE("last writes: a group's local heap of 88 KiB is kept, and a rewrite journals the names it adds") {
  LastWrites w;
  std::vector<LastWrites::Run> runs;
  auto heap = block(88 << 10, 3);
  w.keep(1 << 20, heap, kCommitted);
  for (size_t i = 60000; i < 60040; ++i) heap[i] = std::byte(0xee);  // 5 names of 8 bytes
  REQUIRE(w.changed_runs(1 << 20, heap, runs));
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].offset == 60000);
  CHECK(runs[0].length == 40);
}

TEST_CASE("last writes: held serves a range within one copy, as last written, and nothing else") {
  LastWrites w;
  auto a = block(4096, 1), b = block(4096, 2);
  w.keep(4096, a, kCommitted);
  w.keep(8192, b, kCommitted);  // adjacent, a copy of its own
  auto inside = w.held(4096 + 100, 200);
  REQUIRE(inside.size() == 200);
  CHECK(std::equal(inside.begin(), inside.end(), a.begin() + 100));
  CHECK(w.held(8192, 4096).size() == 4096);
  CHECK(w.held(4096 + 4000, 200).empty());  // across two copies
  CHECK(w.held(0, 100).empty());            // below every copy
  CHECK(w.held(12288, 8).empty());          // past the last
  auto again = block(4096, 3);
  w.keep(4096, again, kCommitted);  // a rewrite: held follows it
  auto now = w.held(4096, 16);
  CHECK(std::equal(now.begin(), now.end(), again.begin()));
  w.forget(8192 + 10, 8192 + 11);  // a raw write into the second block
  CHECK(w.held(8192, 8).empty());
}
