// The format's bytes, pinned (format.h is the layout these spell out): a
// change to any codec fails here before it can reach a journal on disk.
// The CRCs were checked against an independent CRC32C (Castagnoli,
// reflected 0x82F63B78) with LevelDB's mask.
// And journals that older writers really wrote (test/data/old_journals),
// which today's readers must recover.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "coding.h"
#include "format.h"
#include "journaled_file.h"
#include "test_util.h"

using namespace h5j;
using h5j::test::TempDir;

namespace {

std::string hex(std::span<const std::byte> bytes) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (std::byte b : bytes) s += {d[uint8_t(b) >> 4], d[uint8_t(b) & 15]};
  return s;
}

template <size_t N>
std::string hex(const std::byte (&bytes)[N]) {
  return hex(std::span<const std::byte>(bytes, N));
}

std::vector<std::byte> unhex(const std::string& s) {
  std::vector<std::byte> out;
  for (size_t i = 0; i + 1 < s.size(); i += 2) out.push_back(std::byte(std::stoi(s.substr(i, 2), nullptr, 16)));
  return out;
}

}  // namespace

TEST_CASE("golden bytes: the header slot") {
  JournalHeader h;
  h.generation = 0x0102030405060708;
  h.salt = 0xa1b2c3d4;
  for (int i = 0; i < 16; ++i) h.uuid[size_t(i)] = uint8_t(0xf0 + i);
  h.first_txn = 0x11;
  h.created_ns = 0x22;
  h.base_size = 0x33;
  h.target_name = "run.h5";
  h.fingerprint = {0xbeef, 0x0102};
  std::byte slot[kHeaderSlotSize];
  encode_header(h, slot);
  CHECK(hex(std::span(slot, 96)) ==
        "48354a524e4c0d0a"                  // magic "H5JRNL\r\n"
        "08000000" "00020000"                // version 8, slot size 512
        "0807060504030201"                  // generation
        "d4c3b2a1" "00100000"                // salt, block size 4096
        "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"  // uuid
        "1100000000000000"                  // first transaction
        "2200000000000000"                  // created
        "3300000000000000"                  // base size
        "0000000000000000" "00000000"        // reserved
        "0600" "72756e2e6835"                // target name length, "run.h5"
        "00000000");
  CHECK(std::all_of(slot + 96, slot + 486, [](std::byte b) { return b == std::byte(0); }));
  CHECK(hex(std::span(slot + 486, 6)) ==
        "0200"            // fingerprint samples
        "efbe" "0201");   // their fingerprints
  CHECK(std::all_of(slot + 492, slot + 508, [](std::byte b) { return b == std::byte(0); }));
  CHECK(hex(std::span(slot + 508, 4)) == "f80601a8");  // masked CRC32C of [0, 508)
  auto back = decode_header(slot);
  REQUIRE(back);
  CHECK(back->version == 8);
  CHECK(back->generation == h.generation);
  CHECK(back->target_name == "run.h5");
  CHECK(back->fingerprint == h.fingerprint);
}

TEST_CASE("golden bytes: the record header and its CRC") {
  std::byte hdr[kRecordHeaderSize];
  encode_record_header({0, RecordType::kComment, 2, 0xa1b2c3d4, 4096, 7}, hdr);
  std::byte payload[2] = {std::byte('h'), std::byte('i')};
  put_u32(hdr, record_crc(hdr, payload));
  CHECK(hex(hdr) ==
        "0a581e2c"            // masked CRC32C of [4, 32) and the payload
        "04" "00" "0000"      // type COMMENT, flags, reserved
        "02000000"            // payload length
        "d4c3b2a1"            // salt
        "0010000000000000"    // LSN
        "0700000000000000");  // transaction
  RecordHeader back = decode_record_header(hdr);
  CHECK(back.type == RecordType::kComment);
  CHECK(back.lsn == 4096);
  CHECK(record_span(2) == 40);  // 32 + 2, padded to 8
}

TEST_CASE("golden bytes: every payload") {
  std::byte begin[kBeginPayloadSize];
  encode_begin({0x0102}, begin);
  CHECK(hex(begin) == "0201000000000000");

  std::byte write[kWritePayloadHeader];
  encode_write_payload_header({0x1000, 0x20, 3}, write);
  CHECK(hex(write) == "0010000000000000" "2000000000000000" "03000000" "00000000");

  std::byte commit[kCommitPayloadSize];
  encode_commit({0x5000, 4, 0x1000, 0x99, 0x4800, 0x3}, commit);
  CHECK(hex(commit) == "0050000000000000" "0400000000000000" "0010000000000000" "9900000000000000"
                       "0048000000000000" "0300000000000000");
  CHECK(decode_commit(commit).file_size == 0x4800);
  CHECK(decode_commit(commit).durable_txn == 0x3);
  CHECK(commit_payload_size(7) == 48);
  CHECK(commit_payload_size(6) == 40);
  CHECK(commit_payload_size(4) == 32);
  CHECK(decode_commit(std::span(commit, kCommitPayloadSizeV6)).durable_txn == 0);  // version 6: the reader's to say
  CHECK(decode_commit(std::span(commit, kCommitPayloadSizeV4)).file_size == 0);  // version 4: not recorded

  std::byte zero[kZeroPayloadSize];
  encode_zero({0x1770, 0x8f4}, zero);
  CHECK(hex(zero) == "7017000000000000" "f408000000000000");
  CHECK(decode_zero(zero).length == 0x8f4);
  // PLACED (version 4) carries ZERO's payload under its own type.
  CHECK(uint8_t(RecordType::kPlaced) == 7);
  CHECK(std::string(record_type_name(RecordType::kPlaced)) == "PLACED");

  std::byte in_place[kInPlacePayloadSize];
  encode_in_place({0x8000, 0x10000, 0xcafef00d}, in_place);
  CHECK(hex(in_place) == "0080000000000000" "0000010000000000" "0df0feca" "00000000");
  CHECK(decode_in_place(in_place).masked_crc == 0xcafef00d);
  CHECK(uint8_t(RecordType::kInPlace) == 8);
  CHECK(std::string(record_type_name(RecordType::kInPlace)) == "INPLACE");

  DataPayload d;
  d.pattern = RawPattern::contiguous(0x4000, 0x10);
  d.pattern.count1 = 3;
  d.pattern.stride1 = 0x40;
  d.pattern.count2 = 2;
  d.pattern.stride2 = 0x400;
  d.log_offset = 0x1038;
  d.masked_crc = 0xcafef00d;
  d.log = 5;
  std::byte data[kDataPayloadSize];
  encode_data(d, data);
  CHECK(hex(data) ==
        "0040000000000000"  // first run's address
        "1000000000000000"  // run length
        "3810000000000000"  // offset in the data log
        "0df0feca"          // masked CRC of the packed bytes
        "03000000"          // count1
        "4000000000000000"  // stride1
        "02000000"          // count2
        "05000000"          // data log number
        "0004000000000000");  // stride2
  // Version 2: the first 24 bytes, the CRC, 4 reserved bytes; one run.
  auto v2 = unhex("0040000000000000" "1000000000000000" "3810000000000000" "0df0feca" "00000000");
  DataPayload old = decode_data(v2);
  CHECK(old.pattern.bytes() == 0x10);
  CHECK(old.pattern.count1 == 1);
  CHECK(old.masked_crc == 0xcafef00d);
  CHECK(old.log == 0);
}

TEST_CASE("golden bytes: the binding and the log-form guard") {
  Binding b;
  for (int i = 0; i < 16; ++i) b.uuid[size_t(i)] = uint8_t(i);
  b.generation = 9;
  b.journal_path = "/d/a.jnl";
  std::string v = encode_binding(b);
  CHECK(hex(std::as_bytes(std::span(v))) ==
        "000102030405060708090a0b0c0d0e0f" "0900000000000000" "2f642f612e6a6e6c");
  auto back = decode_binding(v);
  REQUIRE(back);
  CHECK(back->generation == 9);
  CHECK(back->journal_path == "/d/a.jnl");
  CHECK(!decode_binding(v.substr(0, kBindingFixedSize - 1)));
  CHECK(hex(std::as_bytes(std::span(kLogFormGuard))) == "8948354a0d0a1a0a");
}

TEST_CASE("golden bytes: the applying marker names its generation and a durable transaction") {
  JournalHeader h;
  for (int i = 0; i < 16; ++i) h.uuid[size_t(i)] = uint8_t(i);
  h.generation = 9;
  std::string v = encode_applying(h, 0x2a);
  CHECK(hex(std::as_bytes(std::span(v))) ==
        "000102030405060708090a0b0c0d0e0f" "0900000000000000" "2a00000000000000");
  CHECK(applying_durable_txn(v, h) == 0x2a);
  CHECK(applying_durable_txn("", h) == 0);  // before version 7: names nothing
  JournalHeader next = h;
  next.generation = 10;
  CHECK(applying_durable_txn(v, next) == 0);  // another generation's
  next = h;
  next.uuid[0] = 0xff;
  CHECK(applying_durable_txn(v, next) == 0);  // another journal's
}

TEST_CASE("journals of older format versions are recovered") {
  for (const char* version : {"v1", "v2", "v3", "v4", "v5", "v6", "v7"}) {
    CAPTURE(version);
    TempDir dir;
    std::filesystem::path from = std::filesystem::path(H5J_TEST_DATA_DIR) / "old_journals" / version;
    for (const auto& entry : std::filesystem::directory_iterator(from))
      std::filesystem::copy_file(entry.path(), dir.path(entry.path().filename().string()));
    auto expected = test::read_file(dir.path("expected.bin"));
    JournalOptions opts;
    opts.journal_path = dir.path("old.h5.jnl");
    opts.ring.durable = false;
    for (Access access : {Access::kReadOnly, Access::kReadWrite}) {
      auto f = JournaledFile::open(dir.path("old.h5"), access, opts);
      REQUIRE(f);
      CHECK((*f)->report().recovered);
      CHECK((*f)->report().replayed_txns == (std::string(version) == "v1" ? 2u : 3u));
      std::vector<std::byte> got((*f)->size());
      REQUIRE((*f)->read(0, got));
      CHECK(got == expected);
      REQUIRE((*f)->close());
    }
    CHECK(test::read_file(dir.path("old.h5")) == expected);
    CHECK(!std::filesystem::exists(dir.path("old.h5.jnl")));
  }
}
