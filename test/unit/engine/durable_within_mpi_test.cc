// durable_within under MPI (followers_durable.h; design.md §9a, "Under
// MPI"): rank 0 and one follower in one process.  A follower's step is
// named in rank 0's COMMIT and synced by the follower's own background;
// the job counts a commit durable only once every rank's sync covered it;
// recovery checks the follower's bytes; the wait is collective; and a
// follower's failed sync stops the job at its next commit.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cstring>
#include <vector>

#include "engine_test_util.h"
#include "journal_reader.h"
#include "ranks_in_one_process.h"
#include "syncs_seen.h"

using namespace h5j;
using namespace h5j::test;

namespace {

constexpr uint64_t kMeta = 4096;

// A time series written by the follower, its end recorded by rank 0 in
// the file's first bytes, as HDF5's superblock does.  The syscalls of
// every rank are seen, so each rank's background syncs inline, every
// third commit (BackgroundSync::kInlineEvery).
struct Job {
  FileInDir where;
  SyncsSeen owner_sys;
  OneDevice owner_fs{owner_sys, false};
  std::unique_ptr<JournaledFile> owner, follower;
  int steps = 0;
  std::vector<std::vector<std::byte>> states;  // the file after each commit

  explicit Job(Syscalls& follower_sys, uint64_t checkpoint_bytes = 0) : follower_fs(follower_sys, false) {
    JournalOptions o = where.opts;
    if (checkpoint_bytes != 0) o.checkpoint_bytes = checkpoint_bytes;
    o.engine = IoEngine::kSync;
    o.inplace_min_bytes = 0;
    o.durable_within = std::chrono::milliseconds(100);
    o.ranks = 2;
    o.role = Role::kMpiOwner;
    o.fs = &owner_fs;
    auto r0 = JournaledFile::open(where.path, Access::kCreateTruncate, o);
    REQUIRE(r0);
    owner = std::move(*r0);
    o.role = Role::kMpiFollower;
    o.data_log = 1;
    o.fs = &follower_fs;
    auto r1 = JournaledFile::open(where.path, Access::kReadWrite, o);
    REQUIRE(r1);
    follower = std::move(*r1);
  }
  JournaledFile* ranks[2];
  std::span<JournaledFile* const> both() {
    ranks[0] = owner.get();
    ranks[1] = follower.get();
    return ranks;
  }
  // Writes the next step and commits it; the file as it should read after
  // the commit goes to `attempted`, and, if the commit succeeds, to `states`.
  Status commit_step() {
    uint64_t end = kMeta + uint64_t(steps + 1) * kSeriesStep;
    Status w = follower->write_raw(kMeta + uint64_t(steps) * kSeriesStep, series_step(steps), 6);
    REQUIRE_MESSAGE(w, w.message());
    std::vector<std::byte> head(8);
    std::memcpy(head.data(), &end, 8);
    REQUIRE(owner->write(0, head, 1));
    REQUIRE(owner->set_size(end));
    REQUIRE(follower->set_size(end));
    ++steps;
    attempted = read_all(*owner);
    Status s = commit_in_one_process(both(), false);
    if (s) states.push_back(attempted);
    return s;
  }
  std::vector<std::byte> attempted;
  uint64_t durable() const { return owner->stats().durable_commits; }
  // The INPLACE records of transaction `txn`: (address, length).
  std::vector<std::pair<uint64_t, uint64_t>> in_place_of(uint64_t txn) {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (const Record& r : journal_records(where.opts.journal_path))
      if (r.header.type == RecordType::kInPlace && r.header.txn == txn) out.emplace_back(r.write.address, r.write.length);
    return out;
  }
  // Both ranks die; the file as recovery by a serial open finds it.
  std::vector<std::byte> crash_and_recover() {
    owner.reset();
    follower.reset();
    JournalOptions o = where.opts;
    o.engine = IoEngine::kSync;
    auto r = JournaledFile::open(where.path, Access::kReadWrite, o);
    REQUIRE_MESSAGE(r, r.status().message());
    auto bytes = read_all(**r);
    REQUIRE((*r)->close());
    return bytes;
  }

 private:
  OneDevice follower_fs;
};

}  // namespace

TEST_CASE("durable_within under MPI: a follower's step is named in rank 0's COMMIT and left to its own sync, and "
          "the job counts it durable only once every rank's sync covered it") {
  SyncsSeen follower_sys;
  Job job(follower_sys);
  REQUIRE(job.commit_step());  // the first commit binds the file: durable on every rank
  CHECK(job.durable() == 1);
  CHECK(job.in_place_of(1).empty());

  follower_sys.calls.clear();
  job.owner_sys.calls.clear();
  REQUIRE(job.commit_step());
  CHECK(follower_sys.calls.empty());
  CHECK(job.owner_sys.calls.empty());
  CHECK(job.durable() == 1);
  // The follower's step, named by rank 0's COMMIT.
  CHECK(job.in_place_of(2) == std::vector<std::pair<uint64_t, uint64_t>>{{kMeta + kSeriesStep, kSeriesStep}});

  // The third commit: each rank's background syncs inline, the follower's
  // at its step 1, so every rank's sync covers commit 3.
  REQUIRE(job.commit_step());
  CHECK(follower_sys.calls == std::vector<std::string>{"fdatasync file"});
  CHECK(job.owner_sys.calls == std::vector<std::string>{"fdatasync file", "fdatasync journal"});
  CHECK(job.durable() == 3);

  follower_sys.calls.clear();
  job.owner_sys.calls.clear();
  REQUIRE(job.commit_step());
  CHECK(job.durable() == 3);
  CHECK(job.in_place_of(4) == std::vector<std::pair<uint64_t, uint64_t>>{{kMeta + 3 * kSeriesStep, kSeriesStep}});  // its own step only
  // The collective wait: the follower's file, then rank 0's file and journal.
  REQUIRE(wait_durable_in_one_process(job.both()));
  CHECK(follower_sys.calls == std::vector<std::string>{"fdatasync file"});
  CHECK(job.owner_sys.calls == std::vector<std::string>{"fdatasync file", "fdatasync journal"});
  CHECK(job.durable() == 4);
}

TEST_CASE("durable_within under MPI: rank 0's own sync does not make a commit durable for the job before the "
          "follower's does") {
  SyncsSeen follower_sys;
  Job job(follower_sys);
  REQUIRE(job.commit_step());
  REQUIRE(job.commit_step());
  // Rank 0 alone waits (as H5Fwait_journal_durable outside MPI would):
  // the follower's step 2 is not its to vouch for.
  job.owner_sys.calls.clear();
  REQUIRE(job.owner->wait_durable());
  CHECK(job.owner_sys.calls == std::vector<std::string>{"fdatasync file", "fdatasync journal"});
  CHECK(job.durable() == 1);
}

TEST_CASE("durable_within under MPI: recovery checks a follower's step, and stops before the first commit whose "
          "bytes the file lacks") {
  SyncsSeen follower_sys;
  Job job(follower_sys);
  for (int i = 0; i < 5; ++i) REQUIRE(job.commit_step());
  REQUIRE(job.durable() == 3);
  std::vector<std::vector<std::byte>> states = job.states;
  SUBCASE("every byte reached the disk: the last commit") { CHECK(job.crash_and_recover() == states[4]); }
  SUBCASE("the follower's step 4 did not: commit 3") {
    job.owner.reset();
    job.follower.reset();
    ::chmod(job.where.path.c_str(), 0644);  // the crashed writer's write protection
    auto bytes = read_file(job.where.path);
    bytes[kMeta + 3 * kSeriesStep + 100] ^= std::byte(1);
    write_file(job.where.path, bytes);
    CHECK(job.crash_and_recover() == states[2]);
  }
}

TEST_CASE("durable_within under MPI: a follower's background sync that fails stops the job at its next commit, "
          "with the errno, and nothing committed is lost") {
  FailingFileSync follower_sys;
  follower_sys.fail_from = 2;  // the first commit's sync works; the background's, at the third, fails
  Job job(follower_sys);
  for (int i = 0; i < 3; ++i) REQUIRE(job.commit_step());
  std::vector<std::byte> committed = job.states.back();
  Status s = job.commit_step();
  CHECK(!s);
  CHECK(s.sys_errno() == EIO);
  CHECK(s.message().find(std::strerror(EIO)) != std::string::npos);
  CHECK(s.message().rfind("commit failed: ", 0) == 0);  // before its COMMIT, as a serial commit says
  // Fail-stop, on every rank.
  CHECK(!job.follower->write_raw(kMeta + 4 * kSeriesStep, series_step(4), 6));
  CHECK(!job.owner->write(0, series_step(4), 1));
  CHECK(job.crash_and_recover() == committed);
}

TEST_CASE("under MPI a failure after the COMMIT says that the commit is made, and recovery finds it") {
  // Every commit finds a checkpoint due.  The follower's file syncs: the
  // first commit's and its checkpoint share's; commit 2, left to the
  // background, and a checkpoint that waits for every commit to be durable,
  // so commit 3 durable on every rank (its sync at step 1), and then its
  // checkpoint share's, after the COMMIT: the fourth sync, which fails.
  FailingFileSync follower_sys;
  follower_sys.fail_from = 4;
  Job job(follower_sys, /*checkpoint_bytes=*/1);
  Status s;
  while (job.steps < 10 && (s = job.commit_step())) {
  }
  REQUIRE(!s);
  INFO(s.message());
  CHECK(s.sys_errno() == EIO);
  CHECK(s.message().rfind("commit " + std::to_string(job.steps) + " of this session is made; the checkpoint after it failed: ", 0) == 0);
  // Said once, though every rank stopped on the follower's error.
  CHECK(s.message().find(" stays at its last commit") == s.message().rfind(" stays at its last commit"));
  CHECK(!job.owner->write(0, series_step(9), 1));  // fail-stop, on every rank
  CHECK(!job.follower->write_raw(kMeta, series_step(9), 6));
  CHECK(job.crash_and_recover() == job.attempted);
}
