// The overlay (ExtentMap) against a reference byte array under random
// overlapping writes, erasures and reads.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "counting_resource.h"
#include "extent_map.h"

using h5j::ExtentMap;

TEST_CASE("overlay agrees with a reference array under random overlapping writes") {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    constexpr uint64_t kSpace = 5000;
    // The "journal": every write appends its bytes; the overlay maps file
    // ranges to offsets in it.  0 in the reference means "never written".
    std::vector<uint8_t> log;
    std::vector<int> reference(kSpace, -1);
    ExtentMap map;
    uint64_t write_end = 0;  // of the last write
    for (int op = 0; op < 400; ++op) {
      uint64_t addr = rng() % kSpace;
      if (rng() % 4 == 0 && write_end < kSpace) addr = write_end;  // continues it, its source too
      uint64_t len = std::min<uint64_t>(rng() % 300 + 1, kSpace - addr);
      if (rng() % 4 == 0 && !map.empty()) {  // rewrites an extent whole, as HDF5 does a metadata block
        std::vector<ExtentMap::Extent> extents;
        map.for_each([&](const ExtentMap::Extent& e) { extents.push_back(e); });
        const ExtentMap::Extent& e = extents[rng() % extents.size()];
        addr = e.addr;
        len = e.len;
      }
      if (rng() % 20 == 0) {
        map.erase(addr, len);
        for (uint64_t i = addr; i < addr + len; ++i) reference[i] = -1;
        continue;
      }
      uint64_t src = log.size();
      write_end = addr + len;
      for (uint64_t i = 0; i < len; ++i) {
        uint8_t b = uint8_t(rng());
        log.push_back(b);
        reference[addr + i] = b;
      }
      map.insert(addr, len, src);
      if (op % 10 == 0) {
        uint64_t ra = rng() % kSpace, rl = std::min<uint64_t>(rng() % 1000 + 1, kSpace - ra);
        uint64_t pos = ra;
        map.for_each_piece(ra, rl, [&](uint64_t a, uint64_t n, std::optional<uint64_t> s) {
          REQUIRE(a == pos);
          for (uint64_t i = 0; i < n; ++i) {
            int want = reference[a + i];
            if (s) CHECK(int(log[*s + i]) == want);
            else CHECK(want == -1);
          }
          pos += n;
        });
        CHECK(pos == ra + rl);
      }
    }
    // Extents are disjoint, sorted, and cover exactly the written bytes.
    uint64_t last_end = 0, covered = 0;
    map.for_each([&](const ExtentMap::Extent& e) {
      CHECK(e.addr >= last_end);
      last_end = e.addr + e.len;
      covered += e.len;
    });
    uint64_t written = 0;
    for (int r : reference) written += r >= 0;
    CHECK(covered == written);
  }
}

TEST_CASE("sequential writes with sequential sources merge into one extent") {
  ExtentMap map;
  for (uint64_t i = 0; i < 100; ++i) map.insert(i * 10, 10, 1000 + i * 10);
  CHECK(map.extent_count() == 1);
  map.for_each([](const ExtentMap::Extent& e) { CHECK((e.addr == 0 && e.len == 1000)); });
  map.insert(500, 10, 99999);
  CHECK(map.extent_count() == 3);
}

TEST_CASE("an extent rewritten whole takes the new source, and joins the neighbours it continues") {
  ExtentMap map;
  map.insert(0, 10, 100);
  map.insert(10, 10, 500);
  map.insert(20, 10, 900);
  REQUIRE(map.extent_count() == 3);
  map.insert(10, 10, 7);
  CHECK(map.extent_count() == 3);
  map.for_each_piece(10, 10, [](uint64_t, uint64_t n, std::optional<uint64_t> s) {
    CHECK(n == 10);
    CHECK(s == std::optional<uint64_t>(7));
  });
  map.insert(10, 10, 110);  // continues [0, 10)'s source
  CHECK(map.extent_count() == 2);
  map.insert(20, 10, 120);  // and now [20, 30)'s does too
  CHECK(map.extent_count() == 1);
  map.for_each([](const ExtentMap::Extent& e) { CHECK((e.addr == 0 && e.len == 30 && e.src == 100)); });
}

// UnwrittenSpace keeps the written ranges as a set: every source
// kZeroSource, so a write that overlaps or continues the range before it
// extends that range (ExtentMap::insert_in_place).
TEST_CASE("a set of ranges agrees with a reference array under random overlapping inserts") {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    constexpr uint64_t kSpace = 5000;
    std::vector<bool> reference(kSpace, false);
    ExtentMap set;
    for (int op = 0; op < 300; ++op) {
      uint64_t addr = rng() % kSpace;
      uint64_t len = std::min<uint64_t>(rng() % 200 + 1, kSpace - addr);
      set.insert(addr, len, ExtentMap::kZeroSource);
      for (uint64_t i = addr; i < addr + len; ++i) reference[i] = true;
    }
    std::vector<bool> seen(kSpace, false);
    uint64_t last_end = 0;
    size_t extents = 0;
    set.for_each([&](const ExtentMap::Extent& e) {
      if (extents > 0) CHECK(e.addr > last_end);  // disjoint, and adjacent ones joined
      CHECK(e.src == ExtentMap::kZeroSource);
      for (uint64_t i = e.addr; i < e.addr + e.len; ++i) seen[i] = true;
      last_end = e.addr + e.len;
      ++extents;
    });
    CHECK(seen == reference);
    size_t runs = 0;
    for (uint64_t i = 0; i < kSpace; ++i) runs += reference[i] && (i == 0 || !reference[i - 1]);
    CHECK(extents == runs);
  }
}

// HDF5 frees and takes again a buffer of one size at each H5Dwrite (h5bench's
// CI pattern: two type-conversion buffers of 1 MiB).  A node taken from the
// heap while it writes lands in the hole the buffer would have reused; the
// next buffer then comes from the heap's top, which glibc gives back at the
// free, and 2 MiB are touched afresh at every write (25,000 page faults in
// a run where sec2 takes 6,000).  The overlay's nodes come from its pool.
TEST_CASE("an overlay takes nothing from the heap once it held a round's extents") {
  h5j::test::CountingResource heap;
  ExtentMap map;
  auto round = [&](uint64_t src) {
    size_t before = heap.allocations;
    for (uint64_t i = 0; i < 16; ++i) map.insert(i * 8192, 4096, src + i * 5000);  // 16 extents of their own
    for (uint64_t i = 0; i < 16; i += 2) map.insert(i * 8192, 4096, src + 99'000 + i);  // rewritten whole
    map.insert(100'000, 8192, src);  // one split in three
    map.insert(102'000, 100, src + 7);
    map.erase(0, 200'000);
    return heap.allocations - before;
  };
  CHECK(round(0) > 0);  // the pool's first chunks
  for (uint64_t r = 1; r < 50; ++r) CHECK(round(r << 20) == 0);
}
