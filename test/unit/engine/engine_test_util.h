// What the engine's unit tests share: the options they open with, a file in
// a fresh directory, a journal's records, bytes that start as an HDF5 file
// does, a crash after two commits, and the MPI commit protocol run by two
// handles in one process.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "journal_reader.h"
#include "journaled_file.h"
#include "posix_file.h"
#include "ranks_in_one_process.h"
#include "test_util.h"

namespace h5j::test {

inline JournalOptions options(const std::string& journal, IoEngine engine, uint64_t checkpoint) {
  JournalOptions o;
  o.journal_path = journal;
  o.ring = RingOptions{2, 8192, true};
  o.engine = engine;
  o.checkpoint_bytes = checkpoint;
  o.inplace_min_bytes = 0;  // small writes above the protected end go in place, as large ones do
  return o;
}

// A file in a fresh directory, its journal beside it, the tests' options:

// A file in a fresh directory, its journal beside it, the tests' options:
// where most cases start.
struct FileInDir {
  TempDir dir;
  std::string path = dir.path("t.h5");
  JournalOptions opts = options(path + ".jnl", IoEngine::kAuto, 64 << 20);
};

// Every record of the journal at `path`, in order.
inline std::vector<Record> journal_records(const std::string& path) {
  auto journal = posix_filesystem().open(path, OpenMode::kReadOnly, IoEngine::kSync);
  REQUIRE(journal);
  auto reader = JournalReader::open(**journal);
  REQUIRE(reader);
  std::vector<Record> out;
  for (;;) {
    auto r = (*reader)->next();
    REQUIRE(r);
    if (!r->has_value()) return out;
    out.push_back(std::move(**r));
  }
}

// Flips a byte in the payload of transaction `txn`'s first record of
// `type` in the journal at `path`: its CRC then fails.
inline void damage_record(const std::string& path, RecordType type, uint64_t txn) {
  uint64_t lsn = 0;
  for (const Record& r : journal_records(path))
    if (lsn == 0 && r.header.type == type && r.header.txn == txn) lsn = r.header.lsn;
  REQUIRE(lsn != 0);
  auto bytes = read_file(path);
  bytes[lsn + kRecordHeaderSize + 3] ^= std::byte(0x40);
  write_file(path, bytes);
}

// 8 KiB that start as an HDF5 file does, so that the commit holding them
// holds a superblock (first_superblock_only_journaled), then 56 KiB of data.
inline std::vector<std::byte> hdf5_like_file() {
  std::vector<std::byte> bytes(64 << 10);
  const char signature[] = "\x89HDF\r\n\x1a\n";
  std::memcpy(bytes.data(), signature, 8);
  for (size_t i = 9; i < bytes.size(); ++i) bytes[i] = std::byte(i * 13 + 5);
  return bytes;
}

// Step i of a time series: kSeriesStep bytes, different in every step.
inline constexpr size_t kSeriesStep = 20000;
inline std::vector<std::byte> series_step(int i) {
  std::vector<std::byte> step(kSeriesStep);
  for (size_t j = 0; j < step.size(); ++j) step[j] = std::byte(j * 7 + size_t(i) * 13 + 1);
  return step;
}

inline std::vector<std::byte> read_all(JournaledFile& f) {
  std::vector<std::byte> out(f.size());
  REQUIRE(f.read(0, out));
  return out;
}

// Creates `path` with two commits (5000 bytes of `fill`, then 10 bytes of
// fill + 1 at 0) and drops the handle without closing: a crash.
inline void crash_after_two_commits(const std::string& path, const JournalOptions& o, uint8_t fill) {
  auto f = JournaledFile::open(path, Access::kCreateTruncate, o);
  REQUIRE(f);
  REQUIRE((*f)->write(0, std::vector<std::byte>(5000, std::byte(fill)), 0));
  REQUIRE((*f)->commit());
  REQUIRE((*f)->write(0, std::vector<std::byte>(10, std::byte(fill + 1)), 0));
  REQUIRE((*f)->commit());
}

// Rank 0's handle and rank `follower_log`'s on a new file, opened in the
// driver's order: the MPI commit protocol without MPI.
struct MpiPair {
  std::unique_ptr<JournaledFile> owner, follower;
  bool commit() {
    JournaledFile* ranks[] = {owner.get(), follower.get()};
    return bool(commit_in_one_process(ranks, false));
  }
};

inline MpiPair open_mpi_pair(const std::string& path, JournalOptions opts, uint32_t follower_log) {
  opts.role = Role::kMpiOwner;
  auto owner = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(owner);
  opts.role = Role::kMpiFollower;
  opts.data_log = follower_log;
  auto follower = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(follower);
  return {std::move(*owner), std::move(*follower)};
}

}  // namespace h5j::test
