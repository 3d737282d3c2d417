// The journal's on-disk format, version 5 (version 4 has no fingerprint of
// the file and a 32-byte COMMIT; version 3 has no PLACED record; version 2's
// DATA records index one contiguous extent; version 1 has none).  docs/journal-format.md tells the
// same story with the recovery rules; this file is the authority on bytes.
// All integers are little-endian.
//
// FILE LAYOUT
//   [0, 4096)      header region: two 512-byte header slots, at 0 and 2048.
//                  Generation g is written to slot g % 2, so a torn header
//                  write never destroys the previous generation's header.
//   [4096, ...)    records of the current generation, back to back, each
//                  starting at a multiple of 8.  After a COMMIT record the
//                  next record starts at the next multiple of kBlockSize, so
//                  a later write never shares a disk sector with a commit.
//
// HEADER SLOT (512 bytes)
//   off len  field
//     0   8  magic "H5JRNL\r\n"
//     8   4  format version (5; readers accept 1 to 4)
//    12   4  slot size (512)
//    16   8  generation (>= 1; +1 at every checkpoint)
//    24   4  salt: random, differs from the previous generation's
//    28   4  block size (4096)
//    32  16  journal UUID (random when the journal file is created)
//    48   8  first transaction number of this generation
//    56   8  creation time of this generation, ns since the Unix epoch
//    64   8  size of the HDF5 file when this generation started
//    72   8  reserved (0)
//    80   4  reserved (0)
//    84   2  target name length N (<= kMaxTargetName)
//    86   N  target file name: the HDF5 file's base name, UTF-8
//     .   .  zero
//   486   2  fingerprint windows W (0 to 8; version 5): the file's bytes at
//            W places fixed by its size when this generation started
//            (fingerprint_window), 64 bytes each
//   488  2W  the low 16 bits of each window's CRC32C, in order
//     .   .  zero
//   508   4  masked CRC32C of bytes [0, 508)
//
// RECORD (32-byte header, then payload, then zero padding to a multiple of 8)
//   off len  field
//     0   4  masked CRC32C of bytes [4, 32 + payload length)
//     4   1  type (RecordType)
//     5   1  flags (0)
//     6   2  reserved (0)
//     8   4  payload length
//    12   4  salt of the generation
//    16   8  LSN: the record's own byte offset in the journal file
//    24   8  transaction number
//
// PAYLOADS
//   BEGIN    8  time, ns since the Unix epoch
//   WRITE    8  address in the HDF5 file
//            8  length L
//            4  tag (HDF5 memory type; informational)
//            4  reserved (0)
//            L  the bytes
//   COMMIT   8  logical size of the HDF5 file after this transaction
//            8  records in the transaction before this one (BEGIN included)
//            8  LSN of the transaction's BEGIN
//            8  time, ns since the Unix epoch
//            8  the HDF5 file's own size on disk at this commit, its
//               in-place bytes durable (0: not recorded; version 5, whose
//               COMMIT payload is 40 bytes, not 32)
//   COMMENT  N  UTF-8 text
//   ZERO     8  address in the HDF5 file
//            8  length: these bytes read as zeros (the file shrank over
//               them, or HDF5 allocated them and never wrote them:
//               unwritten_space.h)
//   PLACED   8  address in the HDF5 file
//            8  length: the file itself holds these bytes, written in
//               place in this transaction (unwritten_space.h); replay
//               drops what older records of the range said
//   DATA     8  address of the first run           (raw data kept in the data
//            8  run length R                       log, docs/journal-format.md
//            8  offset of the packed bytes in the data log         section 7)
//            4  masked CRC32C of the packed bytes
//            4  count1: runs per group
//            8  stride1: from run to run in a group
//            4  count2: groups
//            4  data log number: 0 is <journal>.data, n is
//               <journal>.data.n (MPI rank n's)
//            8  stride2: from group to group
//            (raw_pattern.h: L = R * count1 * count2 packed bytes)
//            Version 2's DATA payload is the first 24 bytes, then the
//            masked CRC and 4 reserved bytes: one run, L = R.
//
// THE DATA LOG (<journal>.data) has the same layout: a header slot with the
// journal's generation, salt and UUID, then DATA records whose payload is
// the 56 bytes above followed by the L packed bytes (their offset field is
// where those bytes start): self-describing, so the index can be rebuilt
// from the data log alone.  No BEGIN or COMMIT; each record's transaction
// number is the transaction that wrote it.  The DATA records in the journal
// are its index.  (A version 2 data log holds WRITE records instead.)
//
// THE BINDING: the HDF5 file's extended attribute "user.h5journal", set
// while the file has a journal (docs/journal-format.md section 5)
//   off len  field
//     0  16  journal UUID
//    16   8  journal generation
//    24   N  the journal's absolute path (UTF-8, no terminator)
//
// THE OLDER LOG-FORM GUARD: a file closed in log form by an h5journal
// before the superblock guard (superblock_guard.h, which marks log form
// today) holds these 8 bytes at offset 0 instead of HDF5's signature
// ("\211HDF\r\n\032\n"), which its journal keeps.  Nothing writes it now;
// h5recover and recovery still read such files.
//   \211 'H' '5' 'J' '\r' '\n' \032 '\n'
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "raw_pattern.h"
#include "status.h"

namespace h5j {

inline constexpr char kMagic[8] = {'H', '5', 'J', 'R', 'N', 'L', '\r', '\n'};
inline constexpr uint32_t kFormatVersion = 5;
inline constexpr uint32_t kOldestFormatVersion = 1;
inline constexpr uint32_t kHeaderSlotSize = 512;
inline constexpr uint64_t kHeaderSlotOffset[2] = {0, 2048};
inline constexpr uint64_t kFirstRecordOffset = 4096;
inline constexpr uint32_t kBlockSize = 4096;
inline constexpr size_t kMaxTargetName = 400;
inline constexpr size_t kRecordHeaderSize = 32;
inline constexpr size_t kBeginPayloadSize = 8;
inline constexpr size_t kWritePayloadHeader = 24;
inline constexpr size_t kCommitPayloadSize = 40;
inline constexpr size_t kCommitPayloadSizeV4 = 32;
inline constexpr unsigned kFingerprintWindows = 8;
inline constexpr uint64_t kFingerprintWindowSize = 64;
inline constexpr size_t kZeroPayloadSize = 16;
inline constexpr size_t kDataPayloadSize = 56;
inline constexpr size_t kDataPayloadSizeV2 = 32;
inline constexpr size_t kBindingFixedSize = 24;
inline constexpr char kBindingXattr[] = "user.h5journal";
// Set (empty), durably, before a writer or recovery first writes committed
// bytes into the file in a generation; removed once the next generation
// (or the close) is durable: while it is absent, nothing but HDF5's new
// writes has touched the file since the generation's fingerprint.
inline constexpr char kApplyingXattr[] = "user.h5journal.applying";
// The write permission bits a writer took from the file (octal text, such
// as "220"), set before they are cleared and removed after they are given
// back: while it is present the file is write-protected by h5journal, and
// a writer or h5recover that owns the journal may give them back.
inline constexpr char kWriteBitsXattr[] = "user.h5journal.write_bits";
inline constexpr char kLogFormGuard[8] = {'\211', 'H', '5', 'J', '\r', '\n', '\032', '\n'};

// The layout above, checked where it is written down.
static_assert(kHeaderSlotOffset[1] >= kHeaderSlotSize, "header slots overlap");
static_assert(kHeaderSlotOffset[1] + kHeaderSlotSize <= kFirstRecordOffset, "a header slot runs into the records");
static_assert(86 + kMaxTargetName <= 486, "the target name runs into the fingerprint");
static_assert(488 + 2 * kFingerprintWindows <= kHeaderSlotSize - 4, "the fingerprint runs into the header CRC");
static_assert(kFirstRecordOffset % kBlockSize == 0, "records start on a block");
static_assert(kRecordHeaderSize % 8 == 0 && kBeginPayloadSize % 8 == 0 && kWritePayloadHeader % 8 == 0 &&
                  kCommitPayloadSize % 8 == 0 && kZeroPayloadSize % 8 == 0 && kDataPayloadSize % 8 == 0,
              "fixed payloads keep the 8-byte alignment the records rely on");
static_assert(kDataPayloadSizeV2 < kDataPayloadSize, "a version 2 DATA payload is a prefix of version 3's");
static_assert(sizeof kLogFormGuard == sizeof kMagic, "the guard replaces HDF5's 8-byte signature");
// Data log offsets stay below this (a bound the reader checks).
inline constexpr uint64_t kMaxDataLogOffset = uint64_t(1) << 62;
// Bounds every length the reader trusts before it has checked a CRC.
inline constexpr uint32_t kMaxPayload = 1u << 30;

enum class RecordType : uint8_t { kBegin = 1, kWrite = 2, kCommit = 3, kComment = 4, kZero = 5, kData = 6, kPlaced = 7 };

struct JournalHeader {
  uint32_t version = kFormatVersion;  // read from disk; the writer always writes kFormatVersion
  uint64_t generation = 0;
  uint32_t salt = 0;
  uint32_t block_size = kBlockSize;
  std::array<uint8_t, 16> uuid{};
  uint64_t first_txn = 1;
  uint64_t created_ns = 0;
  uint64_t base_size = 0;
  std::string target_name;
  // The low 16 bits of the CRC32C of each fingerprint window (version 5).
  std::vector<uint16_t> fingerprint;
};

// Where fingerprint window `i` of `windows` starts in a file of `size`
// bytes: spread from its start to its end, 8-byte aligned.
uint64_t fingerprint_window(uint64_t size, unsigned windows, unsigned i);
// How many windows a file of `size` bytes gets.
inline unsigned fingerprint_windows(uint64_t size) {
  return unsigned(std::min<uint64_t>(kFingerprintWindows, size / kFingerprintWindowSize));
}
// A window's fingerprint: the low 16 bits of its CRC32C.
uint16_t window_fingerprint(std::span<const std::byte> window);

void encode_header(const JournalHeader& h, std::span<std::byte, kHeaderSlotSize> out);
// Fails with kCorrupt naming what is wrong: magic, version, CRC, a field.
Result<JournalHeader> decode_header(std::span<const std::byte, kHeaderSlotSize> in);

struct RecordHeader {
  uint32_t masked_crc = 0;
  RecordType type = RecordType::kBegin;
  uint32_t payload_len = 0;
  uint32_t salt = 0;
  uint64_t lsn = 0;
  uint64_t txn = 0;
};

// Encodes everything but the CRC, which covers the payload too and is filled
// in by the writer once the payload is known.
void encode_record_header(const RecordHeader& h, std::span<std::byte, kRecordHeaderSize> out);
RecordHeader decode_record_header(std::span<const std::byte, kRecordHeaderSize> in);
bool is_known_type(uint8_t type);
const char* record_type_name(RecordType t);

// Bytes a record with `payload_len` occupies, padding included.
inline uint64_t record_span(uint64_t payload_len) {
  return (kRecordHeaderSize + payload_len + 7) & ~uint64_t(7);
}
inline uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
// Where the record after the one at `offset` starts: right after it, or,
// after a COMMIT, on the next block.
inline uint64_t next_record_offset(uint64_t offset, const RecordHeader& h) {
  uint64_t next = offset + record_span(h.payload_len);
  return h.type == RecordType::kCommit ? align_up(next, kBlockSize) : next;
}

struct WritePayloadHeader {
  uint64_t address = 0;
  uint64_t length = 0;
  uint32_t tag = 0;
};
void encode_write_payload_header(const WritePayloadHeader& w, std::span<std::byte, kWritePayloadHeader> out);
WritePayloadHeader decode_write_payload_header(std::span<const std::byte, kWritePayloadHeader> in);

struct DataPayload {
  RawPattern pattern;
  uint64_t log_offset = 0;  // of the packed bytes, in the data log
  uint32_t masked_crc = 0;  // of the packed bytes
  uint32_t log = 0;         // which data log (0: <journal>.data; n: <journal>.data.n)
};
void encode_data(const DataPayload& d, std::span<std::byte, kDataPayloadSize> out);
// `in` holds kDataPayloadSize bytes, or kDataPayloadSizeV2 for format version 2.
DataPayload decode_data(std::span<const std::byte> in);

struct BeginPayload {
  uint64_t time_ns = 0;
};
void encode_begin(const BeginPayload& b, std::span<std::byte, kBeginPayloadSize> out);
BeginPayload decode_begin(std::span<const std::byte, kBeginPayloadSize> in);

struct ZeroPayload {
  uint64_t address = 0;
  uint64_t length = 0;
};
void encode_zero(const ZeroPayload& z, std::span<std::byte, kZeroPayloadSize> out);
ZeroPayload decode_zero(std::span<const std::byte, kZeroPayloadSize> in);

struct CommitPayload {
  uint64_t logical_size = 0;
  uint64_t record_count = 0;
  uint64_t begin_lsn = 0;
  uint64_t time_ns = 0;
  uint64_t file_size = 0;  // 0: not recorded
};
void encode_commit(const CommitPayload& c, std::span<std::byte, kCommitPayloadSize> out);
// `in` holds kCommitPayloadSize bytes, or kCommitPayloadSizeV4 before version 5.
CommitPayload decode_commit(std::span<const std::byte> in);

// A record's masked CRC32C: of its header after the CRC field, then of its
// payload, given as a head and the pieces that follow it.
uint32_t record_crc(std::span<const std::byte, kRecordHeaderSize> header, std::span<const std::byte> payload_head,
                    std::span<const std::span<const std::byte>> payload_rest = {});

// Recompute and store the CRC of a header slot, or of a record whose header
// and payload `record` holds (its payload length read from its header):
// for tools that change bytes on purpose and need them to validate again.
void seal_header_slot(std::span<std::byte, kHeaderSlotSize> slot);
void seal_record(std::span<std::byte> record);

// The binding attribute's value.
struct Binding {
  std::array<uint8_t, 16> uuid{};
  uint64_t generation = 0;
  std::string journal_path;
};
std::string encode_binding(const Binding& b);
// A journal UUID as 32 hex digits, for messages and listings.
std::string uuid_hex(const std::array<uint8_t, 16>& uuid);
// nullopt for a value too short to be a binding.
std::optional<Binding> decode_binding(std::string_view value);

uint64_t now_ns();

}  // namespace h5j
