// Commits packed in the journal, their blocks sealed when a sync says so
// (journal_writer.h, CommitSeals; format.h, FILE LAYOUT): where the writer
// puts each record, and the reader finds every one of them.
#include <doctest/doctest.h>

#include "coding.h"
#include "crc32c.h"
#include "journal_reader.h"
#include "journal_writer.h"
#include "posix_file.h"
#include "test_util.h"

using namespace h5j;
using h5j::test::read_file;
using h5j::test::TempDir;
using h5j::test::write_file;

namespace {

// The sync's answers, set by the test.
struct Seals : CommitSeals {
  bool fresh_block = false, end_block = false;
  int placed = 0;  // first records placed after a COMMIT
  bool next_record_on_fresh_block() override {
    ++placed;
    return std::exchange(fresh_block, false);
  }
  bool end_commit_block() override { return end_block; }
  void sealed_last_commit() override { ++told_sealed; }
  int told_sealed = 0;
};

// A journal of durable=100ms's kind: block size 4096, commits only written.
struct PackedJournal {
  TempDir dir;
  std::string path = dir.path("p.jnl");
  Result<std::unique_ptr<File>> file = posix_filesystem().open(path, OpenMode::kCreateTruncate, IoEngine::kSync);
  Result<std::unique_ptr<JournalWriter>> w = Status(Code::kInvalid, "not started");
  Seals seals;
  PackedJournal() {
    REQUIRE(file);
    JournalHeader h;
    h.generation = 1;
    w = JournalWriter::start(**file, h, RingOptions{2, 64 << 10, true}, true);
    REQUIRE(w);
    (*w)->stop_zeros_ahead();
    (*w)->pack_commits(&seals);
  }
  // Transaction with one 40-byte WRITE; where its BEGIN landed.
  uint64_t commit_one(uint64_t address) {
    REQUIRE((*w)->begin());
    std::vector<std::byte> data(40, std::byte(address));
    auto at = (*w)->append_write(address, 0, data);
    REQUIRE(at);
    REQUIRE((*w)->commit({address + 40, 0, 0}, JournalWriter::CommitSync::kWritten));
    return *at - kRecordHeaderSize - kWritePayloadHeader - record_span(kBeginPayloadSize);
  }
  // Every committed transaction the reader finds: (txn, its BEGIN's offset).
  std::vector<std::pair<uint64_t, uint64_t>> committed() {
    auto f = posix_filesystem().open(path, OpenMode::kReadOnly, IoEngine::kSync);
    REQUIRE(f);
    auto r = JournalReader::open(**f);
    REQUIRE(r);
    std::vector<std::pair<uint64_t, uint64_t>> out;
    auto s = scan_committed(**r, [&](const CommittedTxn& t) {
      out.emplace_back(t.txn, 0);
      return Status::ok();
    });
    REQUIRE(s);
    CHECK(clean_end(s->end));
    // The BEGINs, in order, for where each transaction started.
    auto again = JournalReader::open(**f);
    REQUIRE(again);
    size_t k = 0;
    REQUIRE(for_each_record(**again, [&](const Record& rec) {
      if (rec.header.type == RecordType::kBegin && k < out.size()) out[k++].second = rec.header.lsn;
    }));
    return out;
  }
};

}  // namespace

TEST_CASE("packed commits follow one another, and a sealed one ends its block") {
  PackedJournal j;
  uint64_t first = j.commit_one(0);
  CHECK(first == kFirstRecordOffset);
  uint64_t second = j.commit_one(100);
  CHECK(second > first);
  CHECK(second < first + kBlockSize);  // packed: in the first one's block
  CHECK_FALSE((*j.w)->last_commit_sealed());
  j.seals.end_block = true;  // a sync waits for a COMMIT that ends its block
  uint64_t third = j.commit_one(200);
  CHECK((*j.w)->last_commit_sealed());
  j.seals.end_block = false;
  uint64_t fourth = j.commit_one(300);
  CHECK(fourth == align_up(third, kBlockSize) + (third % kBlockSize == 0 ? kBlockSize : 0));
  j.seals.fresh_block = true;  // the sync sealed the fourth: the fifth starts on a fresh block
  uint64_t fifth = j.commit_one(400);
  CHECK(fifth % kBlockSize == 0);
  CHECK(fifth > fourth);
  CHECK(j.committed() ==
        std::vector<std::pair<uint64_t, uint64_t>>{{1, first}, {2, second}, {3, third}, {4, fourth}, {5, fifth}});
}

TEST_CASE("a transaction's BEGIN waits for its first record, so the sync can seal the COMMIT before it") {
  PackedJournal j;
  j.commit_one(0);
  REQUIRE((*j.w)->begin());  // an in-place write opened the transaction: nothing placed yet
  CHECK_FALSE((*j.w)->records_follow_commit());
  CHECK(j.seals.placed == 1);
  j.seals.fresh_block = true;  // the sync took commit 1 meanwhile
  std::vector<std::byte> data(40, std::byte(7));
  auto at = (*j.w)->append_write(500, 0, data);
  REQUIRE(at);
  CHECK((*j.w)->records_follow_commit());
  CHECK(j.seals.placed == 2);
  CHECK(*at == kFirstRecordOffset + kBlockSize + record_span(kBeginPayloadSize) + kRecordHeaderSize + kWritePayloadHeader);
  REQUIRE((*j.w)->commit({540, 0, 0}, JournalWriter::CommitSync::kWritten));
  CHECK(j.committed().size() == 2);
}

TEST_CASE("sealing the last commit fills its block: later records never touch it") {
  PackedJournal j;
  j.commit_one(0);
  REQUIRE((*j.w)->begin());
  std::vector<std::byte> data(40, std::byte(9));
  REQUIRE((*j.w)->append_write(600, 0, data));  // records now follow the unsealed COMMIT
  const uint64_t before = read_file(j.path).size();
  REQUIRE((*j.w)->seal_last_commit());
  CHECK(j.seals.told_sealed == 1);  // the sync may publish it now
  CHECK((*j.w)->last_commit_sealed());
  CHECK(read_file(j.path).size() == kFirstRecordOffset + kBlockSize);  // written to the block's end
  CHECK(before < kFirstRecordOffset + kBlockSize);
  const auto block = read_file(j.path);
  REQUIRE((*j.w)->append_write(700, 0, data));
  REQUIRE((*j.w)->commit({740, 0, 0}, JournalWriter::CommitSync::kWritten));
  const auto after = read_file(j.path);
  CHECK(std::equal(block.begin(), block.end(), after.begin()));  // the first block as it was
  CHECK(j.committed().size() == 2);
}

TEST_CASE("the reader takes only a BEGIN at a sealed block's boundary, and only past nothing of this generation") {
  PackedJournal j;
  j.commit_one(0);
  j.seals.fresh_block = true;
  uint64_t second = j.commit_one(100);
  REQUIRE(second == kFirstRecordOffset + kBlockSize);
  SUBCASE("an older record right after the COMMIT is passed over") {
    // The gap holds whatever the journal held there before: here a copy
    // of the first BEGIN, whose LSN is not its offset (stale).
    auto bytes = read_file(j.path);
    const uint64_t end = kFirstRecordOffset + record_span(kBeginPayloadSize) +
                         record_span(kWritePayloadHeader + 40) + record_span(kCommitPayloadSize);
    const size_t begin_span = record_span(kBeginPayloadSize);
    std::copy_n(bytes.begin() + ptrdiff_t(kFirstRecordOffset), begin_span, bytes.begin() + ptrdiff_t(end));
    write_file(j.path, bytes);
    CHECK(j.committed().size() == 2);
  }
  SUBCASE("a record other than BEGIN at the boundary ends the stream") {
    auto bytes = read_file(j.path);
    // The WRITE after the BEGIN, moved to the boundary: never taken there.
    const uint64_t write_at = second + record_span(kBeginPayloadSize);
    std::fill(bytes.begin() + ptrdiff_t(second), bytes.begin() + ptrdiff_t(write_at), std::byte(0));
    write_file(j.path, bytes);
    CHECK(j.committed().size() == 1);
  }
}

TEST_CASE("a journal of version 7 keeps its rule: after a COMMIT, the next block") {
  PackedJournal j;
  j.commit_one(0);
  j.commit_one(100);  // packed after the first
  REQUIRE(j.committed().size() == 2);
  // The same bytes under a header of version 7: its reader looks for the
  // record after a COMMIT on the next block only.
  auto bytes = read_file(j.path);
  std::byte* slot = bytes.data() + kHeaderSlotOffset[1];  // generation 1's
  put_u32(slot + header_slot::kVersion.at, 7);
  put_u32(slot + kHeaderSlotSize - 4, mask_crc(crc32c(slot, kHeaderSlotSize - 4)));
  write_file(j.path, bytes);
  CHECK(j.committed().size() == 1);
}
