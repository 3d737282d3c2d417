// Early write-back (early_write_back.cc): a durable serial writer's
// appended, journaled steps reach the file before the checkpoint; never
// under a live reader's snapshot, never below the generation's base size,
// and a crash after them recovers the last commit.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine_test_util.h"
#include "journaled_file.h"
#include "superblock_guard.h"
#include "syncs_seen.h"
#include "test_util.h"

using namespace h5j;
using namespace h5j::test;

namespace {

constexpr size_t kStep = 8 << 10;

// A file of 64 KiB written and closed, opened again; then steps of 8 KiB
// appended and journaled (below inplace_min_bytes), a commit after each:
// the series W4 writes.  checkpoint_bytes 1 MiB: an early write-back every
// 64 KiB of journal, no checkpoint within the steps.  (A file created
// empty has its first superblock written back at once: the last cases.)
struct Series : FileInDir {
  std::unique_ptr<JournaledFile> writer;
  std::vector<std::byte> model;

  Series() {
    opts.checkpoint_bytes = 1 << 20;
    opts.inplace_min_bytes = 128 << 10;
    auto w = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(w);
    writer = std::move(*w);
    append(64 << 10);
    REQUIRE(writer->close());
    w = JournaledFile::open(path, Access::kReadWrite, opts);
    REQUIRE(w);
    writer = std::move(*w);
  }
  void append(size_t bytes) {
    std::vector<std::byte> step(bytes, std::byte(model.size() / kStep % 251 + 1));
    REQUIRE(writer->write(model.size(), step, 0));
    model.insert(model.end(), step.begin(), step.end());
    REQUIRE(writer->commit());
  }
  // The file's own bytes at [addr, addr + n), as a plain reader sees them.
  std::vector<std::byte> on_disk(uint64_t addr, size_t n) {
    auto bytes = read_file(path);
    if (bytes.size() < addr + n) return {};
    return {bytes.begin() + ptrdiff_t(addr), bytes.begin() + ptrdiff_t(addr + n)};
  }
  std::vector<std::byte> modelled(uint64_t addr, size_t n) {
    return {model.begin() + ptrdiff_t(addr), model.begin() + ptrdiff_t(addr + n)};
  }
};

}  // namespace

TEST_CASE_FIXTURE(Series, "appended steps reach the file before the checkpoint, and a crash recovers the last commit") {
  uint64_t base = model.size();
  uint64_t checkpoints = writer->stats().checkpoints;
  for (int i = 0; i < 20; ++i) append(kStep);
  CHECK(writer->stats().checkpoints == checkpoints);
  CHECK(writer->stats().early_write_backs >= 2);
  CHECK(on_disk(base, 8 * kStep) == modelled(base, 8 * kStep));  // written back, no checkpoint yet
  writer.reset();  // a crash
  auto f = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(f);
  CHECK((*f)->report().journal_found);
  CHECK(read_all(**f) == model);
}

TEST_CASE_FIXTURE(Series, "nothing is written back while a live reader holds a snapshot") {
  auto r = JournaledFile::open(path, Access::kReadOnly, opts);
  REQUIRE(r);
  for (int i = 0; i < 20; ++i) append(kStep);
  CHECK(writer->stats().early_write_backs == 0);
  CHECK(read_all(**r) == modelled(0, 64 << 10));  // the reader's commit, whole
  r = Status(Code::kIoError, "closed");
  // Asked again once the generation has grown by another 64 KiB, not at the
  // next commit: each ask holds readers off.
  append(kStep);
  CHECK(writer->stats().early_write_backs == 0);
  for (int i = 0; i < 8; ++i) append(kStep);
  CHECK(writer->stats().early_write_backs == 1);
  REQUIRE(writer->close());
  CHECK(read_file(path) == model);
}

TEST_CASE_FIXTURE(Series, "committed bytes below the generation's base size wait for the checkpoint") {
  std::vector<std::byte> patch(kStep, std::byte(0xee));
  for (int i = 0; i < 20; ++i) {
    REQUIRE(writer->write(0, patch, 0));  // journaled: committed bytes, a fingerprint sample among them
    std::copy(patch.begin(), patch.end(), model.begin());
    append(kStep);
  }
  CHECK(writer->stats().early_write_backs >= 2);
  CHECK(on_disk(0, kStep) != modelled(0, kStep));
  REQUIRE(writer->close());
  CHECK(read_file(path) == model);
}

namespace {

// A commit of 16 KiB that start as an HDF5 file does, into a file created
// empty; the syncs it made.
struct FirstSuperblock : FileWithSyncsSeen {
  std::vector<std::byte> head = std::vector<std::byte>(16 << 10, std::byte(3));
  std::unique_ptr<JournaledFile> writer;

  explicit FirstSuperblock(bool durable = true) {
    opts.ring.durable = durable;
    opts.inplace_min_bytes = 1 << 20;  // journaled, as HDF5's metadata is
    std::memcpy(head.data(), "\x89HDF\r\n\x1a\n", 8);
    head[kSuperblockVersionOffset] = std::byte(2);
    auto w = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(w);
    writer = std::move(*w);
    REQUIRE(writer->write(0, head, 0));
    REQUIRE(writer->commit());
  }
};

}  // namespace

TEST_CASE_FIXTURE(FirstSuperblock, "a file created empty gets its first superblock, guarded, with no sync of its own") {
  CHECK(syncs.calls == std::vector<std::string>{"fsync directory", "fsync file", "fdatasync journal"});
  CHECK(writer->stats().checkpoints == 0);
  CHECK(writer->stats().early_write_backs == 1);
  auto disk = read_file(path);
  REQUIRE(disk.size() == head.size());
  CHECK(is_guarded_head(disk, /*log_form=*/false));
  CHECK(std::equal(disk.begin() + 9, disk.end(), head.begin() + 9));
  writer.reset();  // a crash: the journal replays over it
  auto f = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(f);
  CHECK((*f)->report().journal_found);
  CHECK(read_all(**f) == head);
}

// Without durability new space goes in place, HDF5's first superblock with
// it: the file holds it from the first commit, and nothing is written again.
TEST_CASE("without durability the first superblock goes in place, with no checkpoint and no flush") {
  FirstSuperblock w(/*durable=*/false);
  CHECK(w.syncs.calls.empty());
  CHECK(w.writer->stats().checkpoints == 0);
  CHECK(w.writer->stats().early_write_backs == 0);
  auto disk = read_file(w.path);
  REQUIRE(disk.size() == w.head.size());
  CHECK(is_guarded_head(disk, /*log_form=*/false));
  CHECK(std::equal(disk.begin() + 9, disk.end(), w.head.begin() + 9));
  w.writer.reset();  // a crash
  auto f = JournaledFile::open(w.path, Access::kReadWrite, w.opts);
  REQUIRE(f);
  CHECK(read_all(**f) == w.head);
}

// A superblock first committed over bytes an earlier commit holds goes to
// the journal alone (the write-ahead rule): that commit is a checkpoint.
TEST_CASE("without durability a first superblock the journal alone holds is a checkpoint, which costs no flush") {
  FileWithSyncsSeen f;
  f.opts.ring.durable = false;
  auto w = JournaledFile::open(f.path, Access::kCreateTruncate, f.opts);
  REQUIRE(w);
  std::vector<std::byte> head(16 << 10, std::byte(3));
  REQUIRE((*w)->write(0, std::vector<std::byte>(head.size(), std::byte(0)), 0));
  REQUIRE((*w)->commit());  // no superblock yet
  CHECK((*w)->stats().checkpoints == 0);
  std::memcpy(head.data(), "\x89HDF\r\n\x1a\n", 8);
  head[kSuperblockVersionOffset] = std::byte(2);
  REQUIRE((*w)->write(0, head, 0));
  REQUIRE((*w)->commit());
  CHECK(f.syncs.calls.empty());
  CHECK((*w)->stats().checkpoints == 1);
  CHECK(is_guarded_head(read_file(f.path), /*log_form=*/false));
}
