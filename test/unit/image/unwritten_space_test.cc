// UnwrittenSpace: which space a session allocated and never wrote, and
// which of it a commit declares (unwritten_space.h).
#include <doctest/doctest.h>

#include "unwritten_space.h"

using namespace h5j;

TEST_CASE("unwritten space: gaps above the open size that no write touched") {
  UnwrittenSpace u(1000, 100);
  u.written(0, 1500);     // below 1000 counts for nothing; [1000, 1500) written
  u.written(3000, 100);
  u.written(3100, 50);    // joins [3000, 3150)
  auto gaps = u.declare(10000);
  REQUIRE(gaps.size() == 2);
  CHECK(gaps[0].addr == 1500);
  CHECK(gaps[0].len == 1500);
  CHECK(gaps[1].addr == 3150);
  CHECK(gaps[1].len == 6850);
  CHECK(u.declared(1500, 3000));
  CHECK(u.declared(4000, 5000));
  CHECK(u.declared(3150, 10000));  // a whole range
  CHECK(!u.declared(1400, 1600));  // reaches into written bytes
  CHECK(!u.declared(2900, 3200));  // spans two ranges and a written one
  CHECK(!u.declared(500, 600));    // below the open size
  u.written(4000, 10);
  CHECK(!u.declared(3990, 4020));  // written since the commit
  CHECK(u.declared(5000, 6000));
  u.forget_declared();             // a checkpoint
  CHECK(!u.declared(5000, 6000));
}

TEST_CASE("unwritten space: small gaps and past the committed size are not declared") {
  UnwrittenSpace u(0, 100);
  u.written(0, 10);
  u.written(50, 10);  // a 40-byte gap
  auto gaps = u.declare(200);
  REQUIRE(gaps.size() == 1);  // only [60, 200): the 40-byte gap is too small
  CHECK(gaps[0].addr == 60);
  CHECK(gaps[0].len == 140);
  CHECK(!u.declared(150, 250));  // past the size at the commit
}

TEST_CASE("unwritten space: at most kMaxDeclared ranges, the largest, in address order") {
  UnwrittenSpace u(0, 1);
  const size_t n = UnwrittenSpace::kMaxDeclared + 4;
  for (size_t i = 0; i < n; ++i) u.written(i * 100000, 100000 - (i + 1) * 10);  // gap i is (i + 1) * 10 bytes
  auto gaps = u.declare(n * 100000);
  REQUIRE(gaps.size() == UnwrittenSpace::kMaxDeclared);
  CHECK(gaps.front().len == 50);  // the four smallest (10 to 40) left out
  for (size_t i = 1; i < gaps.size(); ++i) CHECK(gaps[i - 1].addr < gaps[i].addr);
}

TEST_CASE("unwritten space: nothing is unwritten by default (an MPI rank)") {
  UnwrittenSpace u;
  u.written(0, 10);
  CHECK(u.declare(1 << 20).empty());
  CHECK(!u.declared(100, 200));
}

TEST_CASE("unwritten space: a strided write leaves its wide gaps unwritten, and fills its narrow ones") {
  UnwrittenSpace u(0, 100);
  RawPattern wide{0, 64, 4, 1000, 1, 0};  // runs of 64 bytes, 936-byte gaps
  u.written(wide);
  auto gaps = u.declare(4000);
  REQUIRE(gaps.size() == 4);  // three between runs, one after the last
  CHECK(gaps[0].addr == 64);
  CHECK(gaps[0].len == 936);
  UnwrittenSpace v(0, 100);
  RawPattern narrow{0, 8, 1000, 32, 3, 100000};  // 8-byte elements 24 bytes apart, groups far apart
  v.written(narrow);
  gaps = v.declare(300000);
  REQUIRE(gaps.size() == 3);  // between the groups and after the last: the groups count whole
  CHECK(gaps[0].addr == narrow.group_span());
  CHECK(gaps[2].addr == narrow.end());
  UnwrittenSpace w(0, 100);
  w.written(RawPattern{0, 8, 1000, 32, 3, 32000});  // groups adjacent too: one span
  gaps = w.declare(200000);
  REQUIRE(gaps.size() == 1);
  CHECK(gaps[0].addr == RawPattern{0, 8, 1000, 32, 3, 32000}.end());
}
