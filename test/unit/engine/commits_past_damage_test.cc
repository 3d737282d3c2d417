// A point-in-time replay that stops at damage with durable commits after it
// (commits_past_stop.h): a writer refuses and changes nothing, a reader
// reads up to the damage, and a recovery into a copy leaves them out and
// says so.  What a crash leaves is replayed to its stop as before.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "engine_test_util.h"
#include "data_logs.h"
#include "journaled_file.h"
#include "test_util.h"

using namespace h5j;
using namespace h5j::test;

namespace {

// Transaction 1 writes 5000 bytes; transactions 2 to 7 each rewrite the
// first 3000 with their own value, journaled.  Then a crash.
struct SevenCommits : FileInDir {
  std::vector<std::vector<std::byte>> states;  // the file after each transaction

  SevenCommits() {
    auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(f);
    REQUIRE((*f)->write(0, std::vector<std::byte>(5000, std::byte(1)), 0));
    REQUIRE((*f)->commit());
    states.push_back(read_all(**f));
    for (int t = 2; t <= 7; ++t) {
      REQUIRE((*f)->write(0, std::vector<std::byte>(3000, std::byte(t)), 0));
      REQUIRE((*f)->commit());
      states.push_back(read_all(**f));
    }
  }
  Result<std::unique_ptr<JournaledFile>> open(Access access, JournalOptions::PastDamage past) {
    JournalOptions o = opts;
    o.past_damage = past;
    return JournaledFile::open(path, access, o);
  }
};

}  // namespace

TEST_CASE_FIXTURE(SevenCommits, "a damaged record that durable commits follow is damage: a writer refuses, changing "
                                 "nothing") {
  using PastDamage = JournalOptions::PastDamage;
  damage_record(opts.journal_path, RecordType::kWrite, 4);
  const auto file_before = read_file(path), journal_before = read_file(opts.journal_path);
  auto unchanged = [&] {
    CHECK(read_file(path) == file_before);
    CHECK(read_file(opts.journal_path) == journal_before);
  };
  for (PastDamage past : {PastDamage::kRefuseWhenWriting, PastDamage::kRefuse}) {
    auto w = open(Access::kReadWrite, past);
    REQUIRE(!w);
    CHECK(w.status().code() == Code::kCorrupt);
    const std::string m = w.status().message();
    CHECK(m.find("in transaction 4, whose commit had returned, and 3 committed transaction(s) (5 to 7) follow it") !=
          std::string::npos);
    CHECK(m.find("--mode salvage --output COPY") != std::string::npos);
    CHECK(m.find("as of transaction 3") != std::string::npos);
    unchanged();
  }
  SUBCASE("a reader reads up to the damage, for a live writer may be appending") {
    auto r = open(Access::kReadOnly, PastDamage::kRefuseWhenWriting);
    REQUIRE(r);
    CHECK(read_all(**r) == states[2]);
    CHECK((*r)->report().past_stop.txns == 0);  // not looked for
    unchanged();
  }
  SUBCASE("h5recover --check refuses") {
    auto r = open(Access::kReadOnly, PastDamage::kRefuse);
    REQUIRE(!r);
    CHECK(r.status().code() == Code::kCorrupt);
    unchanged();
  }
  SUBCASE("a recovery into a copy stops at the damage and counts what it left out") {
    auto w = open(Access::kReadWrite, PastDamage::kLeaveOut);
    REQUIRE(w);
    const CommitsPastStop& past = (*w)->report().past_stop;
    CHECK(past.stopped_txn == 4);
    CHECK(past.txns == 3);
    CHECK(past.first_txn == 5);
    CHECK(past.last_txn == 7);
    CHECK(past.why == StreamEnd::kBadChecksum);
    // Where the stream ended, not where the look past it did.
    CHECK((*w)->report().end_detail == "record checksum mismatch at offset " + std::to_string(past.at));
    REQUIRE((*w)->close());
    CHECK(read_file(path) == states[2]);
  }
}

// 7's COMMIT names itself, and no transaction began after it: its commit
// call may never have returned, and a crash during its sync can leave 6's
// records torn and 7's whole.
TEST_CASE_FIXTURE(SevenCommits, "a damaged record with one commit after it is a crash's tail: the replay stops there") {
  damage_record(opts.journal_path, RecordType::kWrite, 6);
  auto w = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(w);
  CHECK((*w)->report().last_txn == 5);
  CHECK((*w)->report().past_stop.txns == 1);
  REQUIRE((*w)->close());
  CHECK(read_file(path) == states[4]);
}

// The data log is durable before the COMMIT that names its bytes, so
// committed raw data that fails its CRC is damage wherever it is; with
// durable commits after it, a writer refuses as for a damaged record.
TEST_CASE_FIXTURE(FileInDir, "a transaction's damaged raw data that durable commits follow: a writer refuses") {
  opts.raw_mode = RawMode::kLog;
  {
    auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(f);
    for (int t = 1; t <= 4; ++t) {
      REQUIRE((*f)->write_raw(uint64_t(t) * 1000, std::vector<std::byte>(300, std::byte(0xA0 + t)), 3));
      REQUIRE((*f)->commit());
    }
  }  // a crash
  const std::string dpath = data_log_path_for(opts.journal_path);
  auto log = read_file(dpath);
  std::vector<std::byte> second(300, std::byte(0xA2));
  auto at = std::search(log.begin(), log.end(), second.begin(), second.end());
  REQUIRE(at != log.end());
  *at = std::byte(7);
  write_file(dpath, log);
  auto w = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(!w);
  CHECK(w.status().code() == Code::kCorrupt);
  CHECK(w.status().message().find("transaction 2's raw data in the data log fails its CRC, whose commit had returned, "
                                  "and 2 committed transaction(s) (3 to 4) follow it") != std::string::npos);
  CHECK(read_file(dpath) == log);
}
