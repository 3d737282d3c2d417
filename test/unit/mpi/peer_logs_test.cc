// PeerLogs (peer_logs.h): what one rank sees of the other ranks' data logs
// before a commit: their records of the open transaction, as they append
// them, read once each, and none of another generation's.
#include <doctest/doctest.h>

#include <vector>

#include "data_logs.h"
#include "peer_logs.h"
#include "posix_file.h"
#include "test_util.h"

using namespace h5j;
using h5j::test::TempDir;

namespace {

constexpr unsigned kBucketShift = 20;

struct TwoRanks {
  TempDir dir;
  std::string journal = dir.path("f.h5.jnl");
  JournalHeader header;
  DataLogSet rank0{posix_filesystem(), journal, 0, IoEngine::kSync, false};
  DataLogSet rank1{posix_filesystem(), journal, 1, IoEngine::kSync, false};
  PeerLogs seen_by_rank0{0, 2, kBucketShift};

  TwoRanks() {
    header.generation = 4;
    header.salt = 9;
    header.target_name = "f.h5";
    REQUIRE(rank1.start(header, true, RingOptions{2, 8192, true}));
  }
  // Rank 1 appends `n` bytes of `value` at `addr` in transaction `txn`, and
  // puts them where the other ranks read them (not durably).
  void rank1_writes(uint64_t txn, uint64_t addr, size_t n, int value) {
    std::vector<std::byte> bytes(n, std::byte(value));
    std::span<const std::byte> one[] = {bytes};
    REQUIRE(rank1.writer().append_extent(txn, 1, RawPattern::contiguous(addr, n), one));
    REQUIRE(rank1.writer().publish());
  }
  std::vector<std::byte> read(uint64_t addr, size_t n) {
    std::vector<std::byte> out(n, std::byte(0xEE));
    REQUIRE(seen_by_rank0.lay_onto(addr, out, rank0));
    return out;
  }
};

}  // namespace

TEST_CASE_FIXTURE(TwoRanks, "a rank sees another's records of the open transaction as they are appended") {
  REQUIRE(seen_by_rank0.refresh(rank0, header.generation, 7));
  CHECK(seen_by_rank0.empty());
  rank1_writes(6, 0, 1000, 1);  // committed before: in the raw layer already, not the peers'
  rank1_writes(7, 4096, 3000, 2);
  REQUIRE(seen_by_rank0.refresh(rank0, header.generation, 7));
  CHECK_FALSE(seen_by_rank0.empty());
  CHECK(read(0, 1000) == std::vector<std::byte>(1000, std::byte(0xEE)));
  CHECK(read(4096, 3000) == std::vector<std::byte>(3000, std::byte(2)));

  rank1_writes(7, 5096, 100, 3);  // overlaps the end of the last one
  REQUIRE(seen_by_rank0.refresh(rank0, header.generation, 7));
  std::vector<std::byte> expected(3000, std::byte(2));
  std::fill(expected.begin() + 1000, expected.begin() + 1100, std::byte(3));
  CHECK(read(4096, 3000) == expected);

  seen_by_rank0.clear();  // a commit: the extents are in the raw layer now
  CHECK(seen_by_rank0.empty());
}

TEST_CASE_FIXTURE(TwoRanks, "a rank that has not written in this generation shows nothing of an older one") {
  rank1_writes(7, 0, 1000, 1);
  REQUIRE(seen_by_rank0.refresh(rank0, header.generation + 1, 7));
  CHECK(seen_by_rank0.empty());
  TwoRanks none_yet;  // rank 1 has a log, but rank 3 of four has none
  PeerLogs four{0, 4, kBucketShift};
  REQUIRE(four.refresh(none_yet.rank0, none_yet.header.generation, 1));
  CHECK(four.empty());
}
