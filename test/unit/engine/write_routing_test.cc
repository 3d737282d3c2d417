// Where writes go (write_routing.cc): the write-ahead rule's protected end,
// and writes in place into space declared unwritten.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "engine_test_util.h"
#include "journal_reader.h"
#include "posix_file.h"
#include "journaled_file.h"
#include "syncs_seen.h"
#include "test_util.h"

using namespace h5j;
using namespace h5j::test;

TEST_CASE_FIXTURE(FileInDir, "above the protected end, a short write is journaled and a long one goes in place") {
  opts.inplace_min_bytes = 4096;
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  REQUIRE((*f)->write(0, std::vector<std::byte>(4095, std::byte(1)), 0));     // short: journaled
  CHECK(test::file_size(path) == 0);
  REQUIRE((*f)->write(8192, std::vector<std::byte>(4096, std::byte(2)), 0));  // long: in place
  CHECK(test::file_size(path) == 8192 + 4096);
  REQUIRE((*f)->commit());
  std::vector<std::byte> back(4095);
  REQUIRE((*f)->read(0, back));
  CHECK(back == std::vector<std::byte>(4095, std::byte(1)));
  f = Status(Code::kIoError, "crashed");
  auto r = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(r);
  REQUIRE((*r)->close());
  auto bytes = test::read_file(path);
  REQUIRE(bytes.size() == 8192 + 4096);
  CHECK(bytes[0] == std::byte(1));
  CHECK(bytes[4094] == std::byte(1));
  CHECK(bytes[4095] == std::byte(0));
  CHECK(bytes[8192] == std::byte(2));
}

// HDF5 rewriting a dataset whole in one H5Dwrite hands the driver one write
// of every byte, all under the last commit.  Past the format's largest
// record (kMaxPayload, 1 GiB) one WRITE record could not take it.
TEST_CASE_FIXTURE(FileInDir, "a rewrite longer than a record is journaled in records of one transaction") {
  const size_t n = JournaledFile::kMaxRecordBytes + 5000;
  opts.checkpoint_bytes = uint64_t(1) << 30;  // the records stay for recovery to replay
  std::vector<std::byte> rewrite(n);
  for (size_t i = 0; i < n; ++i) rewrite[i] = std::byte(i * 7 + 3);
  {
    auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(f);
    REQUIRE((*f)->write(0, std::vector<std::byte>(n, std::byte(1)), 0));  // new space: in place
    REQUIRE((*f)->commit());
    REQUIRE((*f)->write(0, rewrite, 0));  // under the commit: journaled
    REQUIRE((*f)->commit());
  }  // a crash
  uint64_t covered = 0, records = 0;
  for (const Record& r : journal_records(opts.journal_path)) {
    if (r.header.type != RecordType::kWrite || r.write.length < 4096) continue;  // HDF5-sized metadata aside
    CHECK(r.write.address == covered);
    CHECK(r.write.length <= JournaledFile::kMaxRecordBytes);
    covered += r.write.length;
    ++records;
  }
  CHECK(covered == n);
  CHECK(records == 2);
  auto recovered = JournaledFile::open(path, Access::kReadOnly, opts);
  REQUIRE_MESSAGE(recovered, recovered.status().message());
  CHECK(read_all(**recovered) == rewrite);
}

TEST_CASE_FIXTURE(FileInDir, "a write in place into space declared unwritten after a checkpoint recovers") {
  opts.checkpoint_bytes = 256 << 10;
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  REQUIRE((*f)->set_size(8 << 20));  // HDF5 allocates 8 MiB, writes 1 MiB of it
  REQUIRE((*f)->write_raw(0, std::vector<std::byte>(1 << 20, std::byte(1)), 0));
  REQUIRE((*f)->commit());
  REQUIRE((*f)->write(0, std::vector<std::byte>(300 << 10, std::byte(2)), 0));  // journaled: a checkpoint is due
  REQUIRE((*f)->commit());  // declares [1 MiB, 8 MiB) unwritten, then checkpoints
  CHECK((*f)->stats().checkpoints == 1);
  REQUIRE((*f)->write(0, std::vector<std::byte>(100, std::byte(4)), 0));
  REQUIRE((*f)->commit());  // declares it again, in the new generation
  std::vector<std::byte> part(1 << 20, std::byte(3));
  for (uint64_t at = 1 << 20; at < (8u << 20); at += 1 << 20) REQUIRE((*f)->write_raw(at, part, 0));
  REQUIRE((*f)->commit());
  f.value().reset();  // a crash
  auto recovered = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE_MESSAGE(recovered, recovered.status().message());
  std::vector<std::byte> back(1 << 20);
  REQUIRE((*recovered)->read(5 << 20, back));
  CHECK(back == part);
}

// --- live readers (live_readers.h) ----------------------------------------------

TEST_CASE_FIXTURE(FileInDir, "with durable=false a short write in new space goes in place: journaling it saves no sync") {
  opts.inplace_min_bytes = 128 << 10;
  for (bool durable : {true, false}) {
    opts.ring.durable = durable;
    auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(f);
    REQUIRE((*f)->write(0, std::vector<std::byte>(64 << 10, std::byte(1)), 0));
    CHECK(test::file_size(path) == (durable ? 0 : 64 << 10));
    REQUIRE((*f)->commit());
    REQUIRE((*f)->close());
    CHECK(test::read_file(path) == std::vector<std::byte>(64 << 10, std::byte(1)));
  }
}

// The COMMIT records the file's own size, which recovery compares with the
// file's (a file cut short behind the journal's back is refused).  The
// engine keeps it from its own writes and cuts, without asking the file.
TEST_CASE_FIXTURE(FileInDir, "each COMMIT records the file's size as the writes and cuts before it left it") {
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  auto last_recorded = [&] {
    uint64_t recorded = UINT64_MAX;
    for (const Record& r : journal_records(opts.journal_path))
      if (r.header.type == RecordType::kCommit) recorded = r.commit.file_size;
    return recorded;
  };
  REQUIRE((*f)->write(0, std::vector<std::byte>(10000, std::byte(1)), 0));
  REQUIRE((*f)->commit());
  CHECK(last_recorded() == test::file_size(path));
  REQUIRE((*f)->write(50000, std::vector<std::byte>(30000, std::byte(2)), 0));  // grows it in place
  REQUIRE((*f)->commit());
  CHECK(test::file_size(path) == 80000);
  CHECK(last_recorded() == 80000);
  REQUIRE((*f)->write(100000, std::vector<std::byte>(30000, std::byte(3)), 0));
  REQUIRE((*f)->set_size(110000));  // above the protected end (80000): cut for real
  REQUIRE((*f)->commit());
  CHECK(test::file_size(path) == 110000);
  CHECK(last_recorded() == 110000);
  REQUIRE((*f)->set_size(50000));  // below it: zeros in the journal, the file keeps its size
  REQUIRE((*f)->commit());
  CHECK(test::file_size(path) == 110000);
  CHECK(last_recorded() == 110000);
}

// HDF5 writing a compound dataset a member at a time rewrites the same new
// bytes once per member: they go to the disk once, at the commit.
TEST_CASE_FIXTURE(FileWithSyncsSeen, "large writes in place start their writeback until the transaction rewrites one") {
  const size_t mib = 1 << 20;
  const std::vector<std::byte> piece(mib, std::byte(7));
  auto started = [&] { return std::exchange(syncs.started, {}); };
  // Writeback goes a piece at a time (write_ahead_file.h): the pieces of [from, to).
  auto pieces = [](uint64_t from, uint64_t to) {
    std::vector<std::string> out;
    for (uint64_t p = from; p < to; p += WriteAheadFile::kWritebackPiece)
      out.push_back("file " + std::to_string(p) + "+" + std::to_string(WriteAheadFile::kWritebackPiece));
    return out;
  };
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  REQUIRE((*f)->write(0, std::vector<std::byte>(4096, std::byte(1)), 0));
  REQUIRE((*f)->commit());
  started();
  const uint64_t at = 1 << 20;
  REQUIRE((*f)->write(at, piece, 0));
  REQUIRE((*f)->write(at + mib, piece, 0));
  CHECK(started() == pieces(at, at + 2 * mib));
  REQUIRE((*f)->write(at, piece, 0));            // the second pass
  REQUIRE((*f)->write(at + 2 * mib, piece, 0));  // new bytes, but the pass goes on
  CHECK(started().empty());
  REQUIRE((*f)->commit());
  started();
  REQUIRE((*f)->write(at + 3 * mib, piece, 0));  // the next transaction starts again
  CHECK(started() == pieces(at + 3 * mib, at + 4 * mib));
  REQUIRE((*f)->close());
}

// HDF5's sieve buffer, done by the engine for a vector of small pieces: a
// sieve span holds at most 1 MiB and bridges gaps of at most 64 KiB, so the
// pieces' gaps are written (as read: zeros in new space) only inside a span.
TEST_CASE_FIXTURE(FileWithSyncsSeen, "a strided vector goes in sieve spans of at most 1 MiB that bridge no wide gap") {
  opts.ring.durable = false;  // every byte in place, none journaled
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  const uint64_t stride = 32, element = 8;
  auto elements = [&](uint64_t from, uint64_t count, std::vector<RawPiece>& out, std::vector<std::byte>& bytes) {
    for (uint64_t i = 0; i < count; ++i)
      out.push_back({from + i * stride, std::span(&bytes[out.size() * element], element)});
  };
  const uint64_t first = 49152;                 // 1.5 MiB of span: two sieve spans
  const uint64_t second_at = first * stride + (128 << 10);  // past a 128 KiB gap
  const uint64_t second = 2048;                 // 64 KiB of span
  std::vector<std::byte> bytes((first + second) * element);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = std::byte(i % 251 + 1);
  std::vector<RawPiece> pieces;
  elements(0, first, pieces, bytes);
  elements(second_at, second, pieces, bytes);
  syncs.bytes_written.clear();
  REQUIRE((*f)->write_raw(pieces, 0));
  // The first run's spans: its elements ending within 1 MiB, then the rest;
  // the 24 bytes between them, and the 128 KiB gap, are not written.
  const uint64_t first_span = (first - 1) * stride + element, second_span = (second - 1) * stride + element;
  CHECK(syncs.bytes_written["file"] == first_span - (stride - element) + second_span);
  REQUIRE((*f)->commit());
  REQUIRE((*f)->close());
  auto back = test::read_file(path);
  REQUIRE(back.size() == second_at + second_span);
  std::vector<std::byte> expected(back.size());
  for (const RawPiece& p : pieces) std::memcpy(&expected[p.addr], p.bytes.data(), p.bytes.size());
  CHECK(back == expected);
}

// Metadata rewritten whole, as HDF5 writes a dirty block at each flush,
// journals only the runs that changed (last_writes.h).
namespace {

std::vector<std::byte> metadata_block(int seed) {
  std::vector<std::byte> b(4096);
  for (size_t i = 0; i < b.size(); ++i) b[i] = std::byte(i * 7 + size_t(seed));
  return b;
}

// The bytes the journal's WRITE records hold: all of them, or the last
// transaction's.
uint64_t journaled(const std::string& journal, bool last_only) {
  auto records = journal_records(journal);
  uint64_t last = 0, bytes = 0;
  for (const Record& r : records) last = std::max(last, r.header.txn);
  for (const Record& r : records)
    if (r.header.type == RecordType::kWrite && (!last_only || r.header.txn == last)) bytes += r.write.length;
  return bytes;
}

// The file reads `block` at 0, and after a crash too.
void check_recovers(Result<std::unique_ptr<JournaledFile>>& f, const std::string& path, const JournalOptions& opts,
                    const std::vector<std::byte>& block) {
  std::vector<std::byte> back(block.size());
  REQUIRE((*f)->read(0, back));
  CHECK(back == block);
  f = Status(Code::kIoError, "crashed");
  auto r = JournaledFile::open(path, Access::kReadOnly, opts);
  REQUIRE_MESSAGE(r, r.status().message());
  REQUIRE((*r)->read(0, back));
  CHECK(back == block);
}

}  // namespace

TEST_CASE_FIXTURE(FileInDir, "a metadata rewrite journals only the runs it changed, and recovers whole") {
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  auto block = metadata_block(1);
  REQUIRE((*f)->write(0, block, 1));  // new space: in place, and no copy kept
  REQUIRE((*f)->commit());
  for (int step = 0; step < 3; ++step) {
    block[5] = std::byte(step);           // an entry count
    block[2000 + step * 16] ^= std::byte(0xff);  // a new entry
    REQUIRE((*f)->write(0, block, 1));  // the first rewrite whole, then its changes
    REQUIRE((*f)->commit());
  }
  REQUIRE((*f)->write(0, block, 1));  // the same bytes again: nothing to journal
  REQUIRE((*f)->commit());
  CHECK(journaled(opts.journal_path, /*last_only=*/false) == block.size() + 2 * (8 + 8));
  check_recovers(f, path, opts, block);
}

// A copy must not outlive a change of the image by other means: compared
// with it, the metadata write below would journal nothing, and the bytes
// the raw write or the cut changed would stay.
TEST_CASE_FIXTURE(FileInDir, "a raw write or a cut over a metadata block drops its copy") {
  for (bool cut : {false, true}) {
    CAPTURE(cut);
    auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(f);
    auto block = metadata_block(1);
    REQUIRE((*f)->write(0, block, 1));
    REQUIRE((*f)->commit());
    REQUIRE((*f)->write(0, block, 1));  // a rewrite: its copy is kept
    REQUIRE((*f)->commit());
    if (cut) {
      REQUIRE((*f)->set_size(2048));
      REQUIRE((*f)->set_size(4096));  // [2048, 4096) reads as zeros
    } else {
      REQUIRE((*f)->write_raw(100, std::vector<std::byte>(100, std::byte(0xee)), 0));
    }
    REQUIRE((*f)->commit());
    REQUIRE((*f)->write(0, block, 1));  // HDF5's block again, as it was
    REQUIRE((*f)->commit());
    CHECK(journaled(opts.journal_path, /*last_only=*/true) >= (cut ? 2048 : 100));
    check_recovers(f, path, opts, block);
  }
}
