// An MPI follower (rank_steps.cc, journal_follower.h): the MPI commit
// protocol without MPI, an owner and a follower handle on one file, as
// rank 0 and rank 1 would hold them.
#include <doctest/doctest.h>

#include <vector>

#include "engine_test_util.h"
#include "journaled_file.h"
#include "test_util.h"

using namespace h5j;
using namespace h5j::test;

TEST_CASE("an MPI follower sees the owner's records at once, and its own raw data commits through the owner") {
  TempDir dir;
  std::string path = dir.path("mpi.h5"), jpath = path + ".jnl";
  auto opts = options(jpath, IoEngine::kSync, 64 << 20);
  opts.inplace_min_bytes = 64 << 10;
  MpiPair mpi = open_mpi_pair(path, opts, 1);
  CHECK(posix_filesystem().exists(data_log_path_for(jpath, 0)));
  CHECK(posix_filesystem().exists(data_log_path_for(jpath, 1)));

  // Metadata by the owner, journaled: the follower reads it before any commit.
  std::vector<std::byte> meta(3000, std::byte(7));
  REQUIRE(mpi.owner->write(0, meta, 1));
  std::vector<std::byte> seen(3000);
  REQUIRE(mpi.follower->read(0, seen));
  CHECK(seen == meta);
  // Raw data by the follower in new space goes in place; the owner reads it.
  std::vector<std::byte> raw(100000, std::byte(5));
  REQUIRE(mpi.follower->write_raw(8192, raw, 6));
  std::vector<std::byte> back(100000);
  REQUIRE(mpi.owner->read(8192, back));
  CHECK(back == raw);

  auto commit = [&]() {
    REQUIRE(mpi.owner->set_size(8192 + 100000));
    REQUIRE(mpi.commit());
  };
  commit();
  // An overwrite of committed raw data by the follower: into its data log,
  // visible to itself at once and to the owner once committed.
  std::vector<std::byte> over(500, std::byte(9));
  REQUIRE(mpi.follower->write_raw(8192 + 1000, over, 6));
  REQUIRE(mpi.follower->read(8192 + 1000, std::span(seen.data(), 500)));
  CHECK(std::equal(over.begin(), over.end(), seen.begin()));
  commit();
  REQUIRE(mpi.owner->read(8192 + 1000, std::span(back.data(), 500)));
  CHECK(std::equal(over.begin(), over.end(), back.begin()));
  // An uncommitted overwrite, then a crash of both.
  std::vector<std::byte> lost(500, std::byte(1));
  REQUIRE(mpi.follower->write_raw(8192 + 1000, lost, 6));
  mpi = {};  // both crash

  auto recovered = JournaledFile::open(path, Access::kReadWrite, options(jpath, IoEngine::kSync, 64 << 20));
  REQUIRE(recovered);
  CHECK((*recovered)->report().replayed_txns == 2);
  std::vector<std::byte> expected(8192 + 100000, std::byte(0));
  std::copy(meta.begin(), meta.end(), expected.begin());
  std::copy(raw.begin(), raw.end(), expected.begin() + 8192);
  std::copy(over.begin(), over.end(), expected.begin() + 8192 + 1000);
  CHECK(read_all(**recovered) == expected);
  REQUIRE((*recovered)->close());
  CHECK(test::read_file(path) == expected);
  CHECK(!posix_filesystem().exists(data_log_path_for(jpath, 1)));
}
