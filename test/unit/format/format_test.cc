// Record codec and reader: round trips, CRC, torn, garbage and zero-filled tails.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <vector>
#include <random>

#include "crc32c.h"
#include "journal_reader.h"
#include "journal_writer.h"
#include "test_util.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

using namespace h5j;
using h5j::test::TempDir;

TEST_CASE("crc32c matches the standard check value") {
  CHECK(crc32c("123456789", 9) == 0xE3069283u);
  uint32_t part = crc32c("1234", 4);
  CHECK(crc32c("56789", 5, part) == 0xE3069283u);
  CHECK(unmask_crc(mask_crc(0x12345678u)) == 0x12345678u);
  CHECK(mask_crc(crc32c("", 0)) != 0);
}

#if defined(__x86_64__)
// XINUSE (XGETBV with ECX=1): which parts of the register state are not in
// their initial state.  Bit 2 is the upper halves of ymm0-15, bit 6 the upper
// halves of zmm0-15; legacy-SSE code runs slower while either is set.
static bool xinuse_readable() {
  unsigned a, b, c, d;
  bool osxsave = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE);
  return osxsave && __get_cpuid_count(0xd, 1, &a, &b, &c, &d) && (a & (1u << 2));
}
static uint64_t xinuse() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
  return (uint64_t(hi) << 32) | lo;
}

TEST_CASE("crc32c leaves no upper vector state for the SSE code after it") {
  constexpr uint64_t kUpperHalves = (1u << 2) | (1u << 6);
  std::vector<std::byte> data(64 << 10, std::byte{0x5a});
  REQUIRE(xinuse_readable());
  for (size_t n : {size_t(256), size_t(4096), data.size()}) {
    CAPTURE(n);
    (void)crc32c(data.data(), n);
    CHECK((xinuse() & kUpperHalves) == 0);
  }
}
#endif

TEST_CASE("header round trip and validation") {
  JournalHeader h;
  h.generation = 7;
  h.salt = 0xdeadbeef;
  h.uuid[3] = 9;
  h.first_txn = 42;
  h.base_size = 123456;
  h.target_name = "run.h5";
  std::byte slot[kHeaderSlotSize];
  encode_header(h, slot);
  auto back = decode_header(slot);
  REQUIRE(back);
  CHECK(back->generation == 7);
  CHECK(back->salt == 0xdeadbeef);
  CHECK(back->uuid == h.uuid);
  CHECK(back->first_txn == 42);
  CHECK(back->base_size == 123456);
  CHECK(back->target_name == "run.h5");

  for (uint32_t block : {kBlockSize, kUnalignedCommits, 16u, 0u}) {
    h.block_size = block;
    encode_header(h, slot);
    auto with = decode_header(slot);
    CHECK(bool(with) == (block == kBlockSize || block == kUnalignedCommits));
    if (with) CHECK(with->block_size == block);
  }

  slot[100] ^= std::byte(1);
  auto bad = decode_header(slot);
  CHECK(!bad);
  CHECK(bad.status().message().find("checksum") != std::string::npos);
  std::memcpy(slot, "NOTAJRNL", 8);
  CHECK(decode_header(slot).status().message().find("magic") != std::string::npos);
}

namespace {

// Writes `txns` committed transactions of `writes_each` records into a fresh
// journal and returns its path.  Not durable: then the writer writes no zeros
// ahead of its records, and the journal ends where its last record does.
std::string write_journal(TempDir& dir, int txns, int writes_each, bool leave_open_txn = false,
                          bool durable = false, uint32_t block_size = kBlockSize) {
  std::string path = dir.path("j.jnl");
  auto file = posix_filesystem().open(path, OpenMode::kCreateTruncate, IoEngine::kSync);
  REQUIRE(file);
  JournalHeader h;
  h.generation = 1;
  h.salt = 77;
  h.target_name = "x.h5";
  h.block_size = block_size;
  auto w = JournalWriter::start(**file, h, RingOptions{2, 4096, durable}, true);
  REQUIRE(w);
  uint64_t addr = 0;
  for (int t = 0; t < txns + (leave_open_txn ? 1 : 0); ++t) {
    REQUIRE((*w)->begin());
    for (int i = 0; i < writes_each; ++i) {
      std::vector<std::byte> data(100 + size_t(i) * 37, std::byte(t + 1));
      REQUIRE((*w)->append_write(addr, 1, data));
      addr += data.size();
    }
    if (t < txns) REQUIRE((*w)->commit({addr, 0, 0}));
  }
  if (leave_open_txn) REQUIRE((*file)->wait_write(UINT64_MAX));
  return path;
}

ScanSummary scan(const std::string& path) {
  auto file = posix_filesystem().open(path, OpenMode::kReadOnly, IoEngine::kSync);
  REQUIRE(file);
  auto r = JournalReader::open(**file);
  REQUIRE(r);
  auto s = scan_committed(**r, [](const CommittedTxn&) { return Status::ok(); });
  REQUIRE(s);
  return *s;
}

}  // namespace

TEST_CASE("reader returns every committed transaction and drops the open one") {
  TempDir dir;
  std::string path = write_journal(dir, 5, 20, /*leave_open_txn=*/true);
  ScanSummary s = scan(path);
  CHECK(s.committed_txns == 5);
  CHECK(s.last_committed_txn == 5);
  CHECK(s.discarded_records > 0);
}

TEST_CASE("a durable journal is written with zeros ahead of its records, and reads the same") {
  TempDir dir;
  std::string plain = write_journal(dir, 4, 10);
  ScanSummary expected = scan(plain);
  std::string path = dir.path("durable.jnl");
  std::filesystem::rename(write_journal(dir, 4, 10, false, /*durable=*/true), path);
  ScanSummary s = scan(path);
  CHECK(s.committed_txns == expected.committed_txns);
  CHECK(s.committed_end == expected.committed_end);
  CHECK(s.end == StreamEnd::kZeroes);
  // Zeros reach at least the first step ahead (256 KiB) past the records,
  // so the commits that follow overwrite written space.
  CHECK(test::file_size(path) >= s.committed_end + (uint64_t(256) << 10));
  auto bytes = test::read_file(path);
  CHECK(std::all_of(bytes.begin() + ptrdiff_t(s.committed_end), bytes.end(), [](std::byte b) { return b == std::byte(0); }));
}

// durable=false: a record after a COMMIT follows it at once.
TEST_CASE("a journal whose header says commits are unaligned reads the same, in fewer bytes") {
  TempDir dir;
  std::string aligned = dir.path("aligned.jnl");
  std::filesystem::rename(write_journal(dir, 6, 20), aligned);
  std::string path = write_journal(dir, 6, 20, /*leave_open_txn=*/true, false, kUnalignedCommits);
  ScanSummary s = scan(path), expected = scan(aligned);
  CHECK(s.committed_txns == 6);
  CHECK(s.last_committed_txn == expected.last_committed_txn);
  CHECK(s.discarded_records > 0);  // the open transaction, found right after the last COMMIT
  CHECK(s.committed_end < expected.committed_end);  // no block's padding after each COMMIT
  CHECK(s.committed_end % kBlockSize != 0);
}

TEST_CASE("torn, zero-filled and garbage tails end the stream at the last commit") {
  TempDir dir;
  std::string path = write_journal(dir, 4, 10);
  ScanSummary whole = scan(path);
  REQUIRE(whole.committed_txns == 4);
  uint64_t size = test::file_size(path);

  SUBCASE("every truncation point keeps a prefix of the commits, growing with the cut") {
    uint64_t prev = 0;
    for (uint64_t cut = kFirstRecordOffset; cut <= size; cut += 97) {
      std::string copy = dir.path("cut.jnl");
      test::copy_file(path, copy, cut);
      ScanSummary s = scan(copy);
      CHECK(s.committed_txns >= prev);
      CHECK(s.committed_txns <= 4);
      prev = s.committed_txns;
    }
    test::copy_file(path, dir.path("cut.jnl"), kFirstRecordOffset + 64);
    CHECK(scan(dir.path("cut.jnl")).committed_txns == 0);
  }
  SUBCASE("zero-filled tail") {
    test::fill_range(path, size - 200, 200, std::byte(0));  // the last transaction ends the file
    ScanSummary s = scan(path);
    CHECK(s.committed_txns == 3);
  }
  SUBCASE("garbage in the last transaction") {
    std::mt19937 rng(1);
    test::scramble_range(path, size - 300, 64, rng);
    ScanSummary s = scan(path);
    CHECK(s.committed_txns == 3);
    CHECK((s.end == StreamEnd::kBadChecksum || s.end == StreamEnd::kStale || s.end == StreamEnd::kBadRecord ||
           s.end == StreamEnd::kTorn));
  }
  SUBCASE("garbage after the last commit is ignored") {
    test::append_bytes(path, 5000, std::byte(0xab));
    CHECK(scan(path).committed_txns == 4);
  }
}

TEST_CASE("an empty or zero-header journal reads as never written; a damaged header as corrupt") {
  TempDir dir;
  std::string path = dir.path("e.jnl");
  test::write_file(path, std::vector<std::byte>(8192, std::byte(0)));
  auto file = posix_filesystem().open(path, OpenMode::kReadOnly, IoEngine::kSync);
  REQUIRE(file);
  CHECK(JournalReader::open(**file).status().code() == Code::kMissing);

  // Generation 1 lives in slot 1 (offset 2048); slot 0 was never written.
  std::string j = write_journal(dir, 1, 1);
  test::fill_range(j, kHeaderSlotOffset[1] + 10, 4, std::byte(0x55));
  auto damaged = posix_filesystem().open(j, OpenMode::kReadOnly, IoEngine::kSync);
  REQUIRE(damaged);
  auto r = JournalReader::open(**damaged);
  CHECK(r.status().code() == Code::kCorrupt);
  CHECK(r.status().message().find("checksum") != std::string::npos);
}
