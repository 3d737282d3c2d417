// The commit of one flush (commit_in_one_flush.cc): which syncs a commit
// makes, the INPLACE records it writes, and recovery leaving out a last
// commit whose in-place bytes never reached the file.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "counting_resource.h"
#include "crc32c.h"
#include "engine_test_util.h"
#include "in_place_writes.h"
#include "journal_reader.h"
#include "posix_file.h"
#include "forwarding_file.h"
#include "write_ahead_file.h"
#include "syncs_seen.h"

using namespace h5j;
using namespace h5j::test;

namespace {

struct Writer : FileWithSyncsSeen {
  using FileWithSyncsSeen::FileWithSyncsSeen;
  // Commit 1 (the first, which syncs the file whole), then commit 2 with
  // `step` in place after it; the syncs commit 2 made.
  std::vector<std::string> two_commits(const std::vector<std::byte>& step) {
    auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(f);
    REQUIRE((*f)->write(0, std::vector<std::byte>(8192, std::byte(1)), 0));
    REQUIRE((*f)->commit());
    syncs.calls.clear();
    REQUIRE((*f)->write(8192, step, 0));
    REQUIRE((*f)->commit());
    return syncs.calls;  // the handle is dropped unclosed: a crash
  }
  std::vector<Record> in_place_records() {
    std::vector<Record> out;
    for (const Record& r : journal_records(opts.journal_path))
      if (r.header.type == RecordType::kInPlace) out.push_back(r);
    return out;
  }
};

std::vector<std::byte> step_bytes() {
  std::vector<std::byte> step(20000);
  for (size_t i = 0; i < step.size(); ++i) step[i] = std::byte(i * 7 + 3);
  return step;
}

}  // namespace

TEST_CASE("a commit with bytes in place writes the journal back, and one fdatasync of the file flushes both") {
  Writer w;
  auto step = step_bytes();
  CHECK(w.two_commits(step) == std::vector<std::string>{"write back journal", "fdatasync file"});
  auto records = w.in_place_records();
  REQUIRE(records.size() == 1);
  CHECK(records[0].header.txn == 2);
  CHECK(records[0].write.address == 8192);
  CHECK(records[0].write.length == step.size());
  CHECK(records[0].data_crc == mask_crc(crc32c(step.data(), step.size())));
}

TEST_CASE("where one flush does not cover both files, the file is synced before the journal") {
  Writer w(/*shares=*/false);
  CHECK(w.two_commits(step_bytes()) == std::vector<std::string>{"fdatasync file", "fdatasync journal"});
  CHECK(w.in_place_records().empty());
}

TEST_CASE("a commit with nothing in place syncs the journal alone") {
  Writer w;
  w.opts.inplace_min_bytes = 1 << 20;  // the step is journaled
  CHECK(w.two_commits(step_bytes()) == std::vector<std::string>{"fdatasync journal"});
}

TEST_CASE("a last commit whose bytes in place never reached the file is left out") {
  Writer w;
  auto step = step_bytes();
  w.two_commits(step);
  std::vector<std::byte> commit1(8192, std::byte(1));
  auto recovered = [&](Access access) {
    auto f = JournaledFile::open(w.path, access, w.opts);
    REQUIRE_MESSAGE(f, f.status().message());
    auto bytes = read_all(**f);
    StreamEnd end = (*f)->report().end;
    uint64_t last = (*f)->report().last_txn;
    if (access != Access::kReadOnly) REQUIRE((*f)->close());
    return std::tuple(bytes, end, last);
  };
  SUBCASE("the bytes are there: the last commit") {
    auto [bytes, end, last] = recovered(Access::kReadOnly);
    CHECK(last == 2);
    CHECK(bytes.size() == 8192 + step.size());
  }
  SUBCASE("one byte differs: the commit before") {
    ::chmod(w.path.c_str(), 0644);  // the crashed writer's write protection
    auto bytes = read_file(w.path);
    bytes[8192 + 1000] ^= std::byte(1);
    write_file(w.path, bytes);
    auto [got, end, last] = recovered(Access::kReadOnly);
    CHECK(last == 1);
    CHECK(end == StreamEnd::kInPlaceMissing);
    CHECK(got == commit1);
    // A recovery that writes gives the same, and leaves the journal behind it.
    auto [again, end2, last2] = recovered(Access::kReadWrite);
    CHECK(again == commit1);
    CHECK(read_file(w.path) == commit1);
  }
  SUBCASE("the file's growth never reached the disk: the commit before, not a file cut short") {
    REQUIRE(::truncate(w.path.c_str(), 8192) == 0);
    auto [got, end, last] = recovered(Access::kReadOnly);
    CHECK(last == 1);
    CHECK(got == commit1);
  }
}

TEST_CASE("in-place writes: an ascending run keeps one CRC; an overwrite is read back") {
  InPlaceWrites w;
  std::vector<std::byte> a(100, std::byte(1)), b(50, std::byte(2));
  w.wrote(1000, a);
  w.wrote(1100, b);  // continues the run
  w.wrote(5000, a);  // a run of its own
  auto e = w.extents();
  REQUIRE(e.size() == 2);
  std::vector<std::byte> ab = a;
  ab.insert(ab.end(), b.begin(), b.end());
  CHECK(e[0].addr == 1000);
  CHECK(e[0].len == 150);
  CHECK(e[0].exact);
  CHECK(e[0].crc == crc32c(ab.data(), ab.size()));
  w.wrote(1050, b);  // over the first run: one extent over the union, read back
  w.wrote(900, b);   // touches nothing: a run of its own before it
  e = w.extents();
  REQUIRE(e.size() == 3);
  CHECK(e[0].addr == 900);
  CHECK(e[1].addr == 1000);
  CHECK(e[1].len == 150);
  CHECK_FALSE(e[1].exact);
  w.wrote(940, a);  // across two extents: merged
  e = w.extents();
  REQUIRE(e.size() == 2);
  CHECK(e[0].addr == 900);
  CHECK(e[0].len == 250);
  CHECK_FALSE(e[0].exact);
  w.forget();
  CHECK(w.extents().empty());
}

// A large write goes into the file a piece at a time, each piece's
// writeback started before its CRC is taken, so that the disk writes the
// first pieces while the later ones are copied and their CRCs computed
// (write_ahead_file.h).  Each writeback starts while the extent holds only
// the pieces before it, the pieces end on multiples of the piece's size
// (no page in two of them), and their CRCs chain into the write's one.
TEST_CASE_FIXTURE(FileInDir, "in-place writes: a large write starts writeback a piece at a time, each before its CRC") {
  struct WritebackSeen : ForwardingFile {
    using ForwardingFile::ForwardingFile;
    const WriteAheadFile* above = nullptr;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;  // (offset, length) of each start
    std::vector<uint64_t> extent_bytes_at_start;
    void start_writeback(uint64_t o, uint64_t n) override {
      ranges.emplace_back(o, n);
      auto e = above->in_place().extents();
      extent_bytes_at_start.push_back(e.empty() ? 0 : e[0].len);
      ForwardingFile::start_writeback(o, n);
    }
  };
  auto file = posix_filesystem().open(path, OpenMode::kCreateTruncate, IoEngine::kSync);
  REQUIRE(file);
  auto seen = std::make_unique<WritebackSeen>(std::move(*file));
  WritebackSeen& below = *seen;
  ImageLayers image(20, false);
  UnwrittenSpace unwritten;
  WriteAheadFile base(std::move(seen), image, unwritten);
  below.above = &base;
  base.track_in_place(true);
  constexpr uint64_t piece = WriteAheadFile::kWritebackPiece, at = 4016;  // where W4's first step goes
  std::vector<std::byte> step(2 * piece);
  for (size_t i = 0; i < step.size(); ++i) step[i] = std::byte(i * 7);
  REQUIRE(base.write_starting_writeback(at, step));
  using Range = std::pair<uint64_t, uint64_t>;
  CHECK(below.ranges == std::vector<Range>{{at, piece - at}, {piece, piece}, {2 * piece, at}});
  CHECK(below.extent_bytes_at_start == std::vector<uint64_t>{0, piece - at, 2 * piece - at});
  auto e = base.in_place().extents();
  REQUIRE(e.size() == 1);
  CHECK(e[0].addr == at);
  CHECK(e[0].len == step.size());
  CHECK(e[0].exact);
  CHECK(e[0].crc == crc32c(step.data(), step.size()));
  std::vector<std::byte> back(step.size());
  auto n = base.read_at(at, back);
  REQUIRE(n);
  CHECK(*n == step.size());
  CHECK(back == step);
}

TEST_CASE("in-place writes: past the byte budget nothing is kept, and the commit syncs the file first") {
  InPlaceWrites w;
  std::vector<std::byte> mib(1 << 20, std::byte(5));
  uint64_t at = 0;
  for (; at < InPlaceWrites::kMaxBytes; at += mib.size()) w.wrote(at, mib);
  CHECK_FALSE(w.too_many());
  CHECK(w.extents().size() == 1);
  w.wrote(at, mib);
  CHECK(w.too_many());
  CHECK(w.extents().empty());
  w.forget();
  CHECK_FALSE(w.too_many());
  for (uint64_t i = 0; i < InPlaceWrites::kMaxExtents; ++i) w.wrote(i * 100, std::span(mib).first(10));
  CHECK_FALSE(w.too_many());
  w.wrote(InPlaceWrites::kMaxExtents * 100, std::span(mib).first(10));
  CHECK(w.too_many());
}

// A heap node per write, outliving HDF5's chunk buffer freed at the commit,
// kept that buffer's space from merging back into the heap's top: W4's
// 4 MiB steps grew the heap twice where sec2 grew it once.
TEST_CASE("in-place writes take nothing from the heap once a commit's worth was written") {
  CountingResource heap;
  InPlaceWrites w;
  std::vector<std::byte> step(4096, std::byte(3));
  auto one_commit = [&](uint64_t base) {
    size_t before = heap.allocations;
    for (uint64_t i = 0; i < 8; ++i) w.wrote(base + i * 8192, step);  // 8 runs of their own
    size_t taken = heap.allocations - before;
    CHECK(w.extents().size() == 8);
    w.forget();
    return taken;
  };
  CHECK(one_commit(0) > 0);  // the pool's first nodes
  for (uint64_t c = 1; c < 50; ++c) CHECK(one_commit(c << 20) == 0);
}

TEST_CASE("a commit of more than the byte budget in place syncs the file before the journal") {
  Writer w;
  std::vector<std::byte> big(InPlaceWrites::kMaxBytes + 4096, std::byte(9));
  CHECK(w.two_commits(big) == std::vector<std::string>{"fdatasync file", "fdatasync journal"});
}
