// Raw data in the data logs, through the engine: recovery verified by CRC,
// salvage from a damaged index, data logs of ranks with gaps in the
// numbering.
#include <doctest/doctest.h>

#include <vector>
#include <algorithm>

#include "engine_test_util.h"
#include "journaled_file.h"
#include "test_util.h"

using namespace h5j;
using namespace h5j::test;

namespace {

// Two committed transactions of raw data in the data log (5000 bytes of 1 at
// 0, then 3000 bytes of 2 at 1000), and a crash.
void crash_with_raw_data(const std::string& path, const JournalOptions& o) {
  auto f = JournaledFile::open(path, Access::kCreateTruncate, o);
  REQUIRE(f);
  REQUIRE((*f)->write_raw(0, std::vector<std::byte>(5000, std::byte(1)), 3));
  REQUIRE((*f)->commit());
  REQUIRE((*f)->write_raw(1000, std::vector<std::byte>(3000, std::byte(2)), 3));
  REQUIRE((*f)->commit());
}

std::vector<std::byte> expected_after(int txns) {
  std::vector<std::byte> v(5000, std::byte(1));
  if (txns == 2) std::fill(v.begin() + 1000, v.begin() + 4000, std::byte(2));
  return v;
}

}  // namespace

TEST_CASE("raw data in the data log is recovered, verified against its CRC, and materialized at close") {
  TempDir dir;
  std::string path = dir.path("raw.h5"), jpath = path + ".jnl", dpath = data_log_path_for(jpath);
  auto opts = options(jpath, IoEngine::kAuto, 64 << 20);
  opts.raw_mode = RawMode::kLog;
  crash_with_raw_data(path, opts);
  CHECK(test::file_size(path) == 0);  // nothing went in place
  REQUIRE(posix_filesystem().exists(dpath));
  // Changes the data log's byte at `at` (an iterator into `log`, a copy of
  // the data log) to 7 and writes it back.
  auto damage = [&](std::vector<std::byte>& log, std::vector<std::byte>::iterator at) {
    REQUIRE(at != log.end());
    *at = std::byte(7);
    test::write_file(dpath, log);
  };
  auto last_of_value_2 = [](std::vector<std::byte>& log) {
    auto it = std::find(log.rbegin(), log.rend(), std::byte(2));
    return it == log.rend() ? log.end() : std::prev(it.base());
  };
  // An open in `mode` refused as corrupt, naming `why`, the file untouched.
  auto refused = [&](RecoveryMode mode, const std::string& why) {
    opts.recovery_mode = mode;
    auto rw = JournaledFile::open(path, Access::kReadWrite, opts);
    REQUIRE(!rw);
    CHECK(rw.status().code() == Code::kCorrupt);
    CHECK(rw.status().message().find(why) != std::string::npos);
    CHECK(test::file_size(path) == 0);
    return rw.status().message();
  };

  SUBCASE("intact: both transactions, then a plain file") {
    auto ro = JournaledFile::open(path, Access::kReadOnly, opts);
    REQUIRE(ro);
    CHECK(read_all(**ro) == expected_after(2));
    REQUIRE((*ro)->close());
    ro = Status(Code::kIoError, "closed");
    auto rw = JournaledFile::open(path, Access::kReadWrite, opts);
    REQUIRE(rw);
    CHECK((*rw)->report().replayed_txns == 2);
    REQUIRE((*rw)->close());
    CHECK(test::read_file(path) == expected_after(2));
    CHECK(!posix_filesystem().exists(dpath));
  }
  SUBCASE("the second transaction's bytes damaged: it is refused, the first kept") {
    // The second extent's bytes are the last 3000 bytes of value 2 in the log.
    auto log = test::read_file(dpath);
    damage(log, last_of_value_2(log));
    auto rw = JournaledFile::open(path, Access::kReadWrite, opts);
    REQUIRE(rw);
    CHECK((*rw)->report().replayed_txns == 1);
    CHECK((*rw)->report().end == StreamEnd::kDataMismatch);
    CHECK(read_all(**rw) == expected_after(1));
    REQUIRE((*rw)->close());
    CHECK(test::read_file(path) == expected_after(1));
  }
  SUBCASE("strict recovery refuses a damaged data log and changes nothing") {
    auto log = test::read_file(dpath);
    damage(log, last_of_value_2(log));
    refused(RecoveryMode::kStrict, "fails its CRC");
  }
  SUBCASE("tolerate-tail refuses a committed transaction's damaged data when later ones follow") {
    // The first transaction's bytes (a run of value 1) damaged; the second
    // committed after it.  Damage followed by valid records is no torn tail.
    auto log = test::read_file(dpath);
    std::vector<std::byte> ones(100, std::byte(1));
    damage(log, std::search(log.begin(), log.end(), ones.begin(), ones.end()));
    auto journal_before = test::read_file(jpath);
    std::string why = refused(RecoveryMode::kTolerateTail, "transaction 1's raw data in the data log fails its CRC");
    CHECK(why.find("tolerate-tail") != std::string::npos);
    // Nothing lost: the file (above), journal and data log are untouched.
    CHECK(test::read_file(jpath) == journal_before);
    CHECK(test::read_file(dpath) == log);
  }
  SUBCASE("tolerate-tail refuses damaged data under the last committed transaction too") {
    // The data log is durable before COMMIT: committed data cannot be torn.
    auto log = test::read_file(dpath);
    damage(log, last_of_value_2(log));
    refused(RecoveryMode::kTolerateTail, "transaction 2's raw data in the data log fails its CRC");
  }
  SUBCASE("a missing data log is named, and nothing changes") {
    REQUIRE(posix_filesystem().remove(dpath));
    auto rw = JournaledFile::open(path, Access::kReadWrite, opts);
    REQUIRE(!rw);
    CHECK(rw.status().code() == Code::kMissing);
    CHECK(rw.status().message().find(".jnl.data") != std::string::npos);
    CHECK(test::file_size(path) == 0);
    CHECK(posix_filesystem().exists(jpath));
  }
}

TEST_CASE("salvage rebuilds a transaction's raw data from the data log when its index records are damaged") {
  TempDir dir;
  std::string path = dir.path("raw.h5"), jpath = path + ".jnl";
  auto opts = options(jpath, IoEngine::kAuto, 64 << 20);
  opts.raw_mode = RawMode::kLog;
  {
    auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(f);
    REQUIRE((*f)->write_raw(0, std::vector<std::byte>(5000, std::byte(1)), 3));
    REQUIRE((*f)->commit());
    REQUIRE((*f)->write_raw(1000, std::vector<std::byte>(3000, std::byte(2)), 3));
    REQUIRE((*f)->commit());
    REQUIRE((*f)->write_raw(100, std::vector<std::byte>(500, std::byte(3)), 3));
    REQUIRE((*f)->commit());
  }  // crash
  damage_record(jpath, RecordType::kData, 2);
  std::vector<std::byte> first(5000, std::byte(1)), all = first;
  std::fill(all.begin() + 1000, all.begin() + 4000, std::byte(2));
  std::fill(all.begin() + 100, all.begin() + 600, std::byte(3));

  SUBCASE("point-in-time stops before the damage") {
    auto rw = JournaledFile::open(path, Access::kReadWrite, opts);
    REQUIRE(rw);
    CHECK((*rw)->report().replayed_txns == 1);
    CHECK(read_all(**rw) == first);
  }
  SUBCASE("salvage applies the first and third transactions and the second's data, in order") {
    opts.recovery_mode = RecoveryMode::kSalvage;
    auto rw = JournaledFile::open(path, Access::kReadWrite, opts);
    REQUIRE(rw);
    CHECK((*rw)->report().replayed_txns == 2);
    CHECK((*rw)->report().rebuilt_txns == 1);
    CHECK(read_all(**rw) == all);
    REQUIRE((*rw)->close());
    CHECK(test::read_file(path) == all);
  }
}

TEST_CASE("recovery removes every data log, also when a rank's is missing from the numbering") {
  TempDir dir;
  std::string path = dir.path("gap.h5"), jpath = path + ".jnl";
  MpiPair mpi = open_mpi_pair(path, options(jpath, IoEngine::kSync, 64 << 20), 3);
  std::vector<std::byte> meta(3000, std::byte(7));
  REQUIRE(mpi.owner->write(0, meta, 1));
  REQUIRE(mpi.commit());
  mpi = {};  // both crash
  REQUIRE(!posix_filesystem().exists(data_log_path_for(jpath, 1)));
  REQUIRE(posix_filesystem().exists(data_log_path_for(jpath, 3)));

  auto recovered = JournaledFile::open(path, Access::kReadWrite, options(jpath, IoEngine::kSync, 64 << 20));
  REQUIRE(recovered);
  CHECK((*recovered)->report().replayed_txns == 1);
  REQUIRE((*recovered)->close());
  CHECK(test::read_file(path) == meta);
  CHECK(!posix_filesystem().exists(jpath));
  CHECK(existing_data_logs(posix_filesystem(), jpath)->empty());
}

TEST_CASE("salvage rebuilds raw data from a rank's data log beyond a gap in the numbering") {
  TempDir dir;
  std::string path = dir.path("gap.h5"), jpath = path + ".jnl";
  auto opts = options(jpath, IoEngine::kSync, 64 << 20);
  opts.raw_mode = RawMode::kLog;
  {
    MpiPair mpi = open_mpi_pair(path, opts, 2);
    auto commit = [&](uint64_t addr, size_t n, std::byte b) {
      REQUIRE(mpi.follower->write_raw(addr, std::vector<std::byte>(n, b), 3));
      REQUIRE(mpi.owner->set_size(5000));
      REQUIRE(mpi.commit());
    };
    commit(0, 5000, std::byte(1));
    commit(1000, 3000, std::byte(2));
    commit(100, 500, std::byte(3));
  }  // both crash
  REQUIRE(!posix_filesystem().exists(data_log_path_for(jpath, 1)));
  damage_record(jpath, RecordType::kData, 2);
  std::vector<std::byte> all(5000, std::byte(1));
  std::fill(all.begin() + 1000, all.begin() + 4000, std::byte(2));
  std::fill(all.begin() + 100, all.begin() + 600, std::byte(3));

  opts.recovery_mode = RecoveryMode::kSalvage;
  auto rw = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(rw);
  CHECK((*rw)->report().rebuilt_txns == 1);
  CHECK(read_all(**rw) == all);
}
