// The journal's on-disk format, version 6, and the other bytes h5journal
// keeps on disk: the binding, the readers file.  This file is the one
// authority on bytes; docs/journal-format.md gives the rules, the reasoning
// and what versions 1 to 4 lack (§6).  All integers are little-endian.
//
// FILE LAYOUT
//   [0, 4096)      header region: two 512-byte header slots, at 0 and 2048.
//                  Generation g is written to slot g % 2, so a torn header
//                  write never destroys the previous generation's header.
//   [4096, ...)    records of the current generation, back to back, each
//                  starting at a multiple of 8; after a COMMIT, at one of
//                  the header's block size (4096: no later write shares a
//                  sector with a commit; 8 with durable=false).  From
//                  version 8 a COMMIT may also be followed right after it
//                  (a commit packed: durable=100ms, whose sync seals its
//                  block later).  A reader takes the record right after a
//                  COMMIT if one of this generation is there, and else a
//                  BEGIN at the next multiple of the block size
//                  (JournalReader::next).
//
// Each layout's fields are below, one constant per field, with what it
// holds: HEADER SLOT, RECORD header, the PAYLOADS of BEGIN, WRITE, COMMIT,
// ZERO and PLACED, DATA, INPLACE, and THE BINDING.  COMMENT's payload is UTF-8 text.
//
// THE DATA LOG (<journal>.data) has the same layout: a header slot with the
// journal's generation, salt and UUID, then DATA records whose payload is
// the 56 bytes above followed by the L packed bytes (their offset field is
// where those bytes start): self-describing, so the index can be rebuilt
// from the data log alone.  No BEGIN or COMMIT; each record's transaction
// number is the transaction that wrote it.  The journal's DATA records
// are its index.
//
// THE BINDING: the HDF5 file's extended attribute "user.h5journal", set
// while the file has a journal (docs/journal-format.md section 5).
//
// THE OLDER LOG-FORM GUARD: a file closed in log form before the superblock
// guard (superblock_guard.h) holds these 8 bytes at offset 0 instead of
// HDF5's signature, which its journal keeps.  Only read now.
//   \211 'H' '5' 'J' '\r' '\n' \032 '\n'
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "coding.h"
#include "raw_pattern.h"
#include "status.h"

namespace h5j {

inline constexpr char kMagic[8] = {'H', '5', 'J', 'R', 'N', 'L', '\r', '\n'};
inline constexpr uint32_t kFormatVersion = 8;
// From this version a COMMIT's next record may follow it unaligned (FILE LAYOUT).
inline constexpr uint32_t kPackedCommitsVersion = 8;
inline constexpr uint32_t kOldestFormatVersion = 1;
inline constexpr uint32_t kHeaderSlotSize = 512;
inline constexpr uint64_t kHeaderSlotOffset[2] = {0, 2048};
inline constexpr uint64_t kFirstRecordOffset = 4096;
inline constexpr uint32_t kBlockSize = 4096;
inline constexpr uint32_t kUnalignedCommits = 8;  // the header's block size with durable=false
inline constexpr size_t kMaxTargetName = 400;
inline constexpr unsigned kFingerprintSamples = 8;
inline constexpr uint64_t kFingerprintSampleSize = 64;
inline constexpr char kBindingXattr[] = "user.h5journal";
// Beside the binding: the absolute name of the file it was set on, so that
// a copy that kept its extended attributes (cp -a) is told from the file
// (binding.h, check_binding_made_here).  UTF-8, no terminator.
inline constexpr char kBoundFileXattr[] = "user.h5journal.file";
inline constexpr size_t kMaxBoundFileName = 1024;  // a longer name is not recorded
// Set (its value: THE APPLYING MARKER, below), durably, before a writer or
// recovery first writes committed bytes into the file in a generation;
// removed once the next generation (or the close) is durable: while it is
// absent, nothing but HDF5's new writes has touched the file since the
// generation's fingerprint.
inline constexpr char kApplyingXattr[] = "user.h5journal.applying";
// The attributes recovery reads besides the file's bytes: a copy made for
// recovery carries them, and discarding a journal removes them (with the
// name recorded beside the binding, kBoundFileXattr).
inline constexpr const char* kRecoveryXattrs[] = {kBindingXattr, kApplyingXattr};
// The write permission bits a writer took from the file (octal text, such
// as "220"), set before they are cleared and removed after they are given
// back: while it is present the file is write-protected by h5journal, and
// a writer or h5recover that owns the journal may give them back.
inline constexpr char kWriteBitsXattr[] = "user.h5journal.write_bits";
inline constexpr char kLogFormGuard[8] = {'\211', 'H', '5', 'J', '\r', '\n', '\032', '\n'};

// THE FIELDS of each layout above, as encode, decode and the checks below
// use them: nothing else names a byte offset.  Each layout's fields follow
// one another (laid_out), so a field cannot overlap its neighbour or leave
// an unnamed gap; a gap is a field named reserved or zero.
struct Field {
  size_t at, len;
  constexpr size_t end() const { return at + len; }
};
template <size_t N>
constexpr bool laid_out(const Field (&fields)[N], size_t size) {
  for (size_t i = 0; i + 1 < N; ++i)
    if (fields[i].end() != fields[i + 1].at) return false;
  return fields[0].at == 0 && fields[N - 1].end() == size;
}
// Field F of the layout that starts at `p`, little-endian (coding.h), at
// the field's own width: reading or writing one at another fails to compile.
template <Field F>
auto get_field(const std::byte* p) {
  if constexpr (F.len == 1) return uint8_t(p[F.at]);
  else if constexpr (F.len == 2) return get_u16(p + F.at);
  else if constexpr (F.len == 4) return get_u32(p + F.at);
  else {
    static_assert(F.len == 8, "an integer field");
    return get_u64(p + F.at);
  }
}
template <Field F, class T>
void put_field(std::byte* p, T v) {
  static_assert(std::is_unsigned_v<T> && sizeof(T) == F.len, "a field written at its own width");
  if constexpr (F.len == 1) p[F.at] = std::byte(v);
  else if constexpr (F.len == 2) put_u16(p + F.at, v);
  else if constexpr (F.len == 4) put_u32(p + F.at, v);
  else put_u64(p + F.at, v);
}


// HEADER SLOT (kHeaderSlotSize bytes)
namespace header_slot {
inline constexpr Field kMagic{0, 8};          // `48 35 4A 52 4E 4C 0D 0A`, "H5JRNL\r\n" (CR LF catches text-mode mangling)
inline constexpr Field kVersion{8, 4};        // format version (8; readers accept 1 to 7)
inline constexpr Field kSlotSize{12, 4};      // 512 (kHeaderSlotSize)
inline constexpr Field kGeneration{16, 8};    // >= 1; +1 at every checkpoint
inline constexpr Field kSalt{24, 4};          // random, never the previous generation's
inline constexpr Field kBlockSize{28, 4};     // where a record after a COMMIT starts, or from version 8 after a sealed one: a multiple of 4096, or of 8 (durable=false)
inline constexpr Field kUuid{32, 16};         // the journal's UUID: random when it is created, kept across generations
inline constexpr Field kFirstTxn{48, 8};      // first transaction number of this generation
inline constexpr Field kCreated{56, 8};       // when this generation started, ns since the Unix epoch
inline constexpr Field kBaseSize{64, 8};      // size of the HDF5 file when this generation started
inline constexpr Field kReserved{72, 12};     // zero
inline constexpr Field kNameLength{84, 2};    // N, at most 400 (kMaxTargetName)
inline constexpr Field kName{86, kMaxTargetName};  // the HDF5 file's base name, UTF-8: N bytes, then zeros
// Version 5's fingerprint: the file's bytes at S places fixed by its size
// when this generation started (fingerprint_sample_at), 64 bytes each.

inline constexpr Field kSamples{486, 2};      // fingerprint samples S, 0 to 8 (version 5)
inline constexpr Field kFingerprint{488, 2 * kFingerprintSamples};  // the low 16 bits of each sample's CRC32C, in order, then zeros
inline constexpr Field kZero{504, 4};         // zero
inline constexpr Field kCrc{508, 4};          // masked CRC32C of every byte before it
inline constexpr Field kAll[] = {kMagic, kVersion, kSlotSize, kGeneration, kSalt, kBlockSize, kUuid, kFirstTxn,
                                 kCreated, kBaseSize, kReserved, kNameLength, kName, kSamples, kFingerprint, kZero,
                                 kCrc};
}  // namespace header_slot

// RECORD: this header, then the payload, then zeros to a multiple of 8.
namespace record_header {
inline constexpr Field kCrc{0, 4};            // masked CRC32C of the header's other bytes, then of the payload
inline constexpr Field kType{4, 1};           // RecordType: 1 BEGIN ... 8 INPLACE (section 2.3)
inline constexpr Field kFlags{5, 1};          // zero
inline constexpr Field kReserved{6, 2};       // zero
inline constexpr Field kPayloadLength{8, 4};  // P, at most 2^30 (kMaxPayload)
inline constexpr Field kSalt{12, 4};          // the generation's
inline constexpr Field kLsn{16, 8};           // the record's own byte offset in the journal file
inline constexpr Field kTxn{24, 8};           // transaction number
inline constexpr Field kAll[] = {kCrc, kType, kFlags, kReserved, kPayloadLength, kSalt, kLsn, kTxn};
}  // namespace record_header
inline constexpr size_t kRecordHeaderSize = record_header::kTxn.end();

namespace begin_payload {
inline constexpr Field kTime{0, 8};           // ns since the Unix epoch
inline constexpr Field kAll[] = {kTime};
}  // namespace begin_payload
inline constexpr size_t kBeginPayloadSize = begin_payload::kTime.end();

// WRITE: these fields, then the L bytes.
namespace write_payload {
inline constexpr Field kAddress{0, 8};        // in the HDF5 file
inline constexpr Field kLength{8, 8};         // L
inline constexpr Field kTag{16, 4};           // HDF5's memory type; informational
inline constexpr Field kReserved{20, 4};      // zero
inline constexpr Field kAll[] = {kAddress, kLength, kTag, kReserved};
}  // namespace write_payload
inline constexpr size_t kWritePayloadHeader = write_payload::kReserved.end();

namespace commit_payload {
inline constexpr Field kLogicalSize{0, 8};    // of the HDF5 file after this transaction
inline constexpr Field kRecordCount{8, 8};    // records in the transaction before this one, BEGIN included
inline constexpr Field kBeginLsn{16, 8};      // LSN of the transaction's BEGIN
inline constexpr Field kTime{24, 8};          // ns since the Unix epoch
// the HDF5 file's own size on disk at this commit, its in-place bytes
// durable, less what an early write-back of committed bytes grew it by that
// no sync has covered yet (0: not recorded, as under MPI); versions 1 to 4
// end before it
inline constexpr Field kFileSize{32, 8};
// the last transaction whose bytes outside the journal (in place, in the
// data log) were durable when this COMMIT was written: recovery checks the
// INPLACE records of every transaction after it; versions 1 to 6 end
// before it, and stand for this transaction's number less one
inline constexpr Field kDurableTxn{40, 8};
inline constexpr Field kAll[] = {kLogicalSize, kRecordCount, kBeginLsn, kTime, kFileSize, kDurableTxn};
}  // namespace commit_payload
inline constexpr size_t kCommitPayloadSize = commit_payload::kDurableTxn.end();
inline constexpr size_t kCommitPayloadSizeV6 = commit_payload::kDurableTxn.at;
inline constexpr size_t kCommitPayloadSizeV4 = commit_payload::kFileSize.at;

// ZERO: these bytes read as zeros (the file shrank over them, or HDF5
// allocated them and never wrote them: unwritten_space.h).
// PLACED: the file itself holds these bytes, written in place in this
// transaction (unwritten_space.h); replay drops what older records of the
// range said.
namespace range_payload {
inline constexpr Field kAddress{0, 8};        // in the HDF5 file
inline constexpr Field kLength{8, 8};
inline constexpr Field kAll[] = {kAddress, kLength};
}  // namespace range_payload
inline constexpr size_t kZeroPayloadSize = range_payload::kLength.end();

// DATA: raw data kept in a data log (docs/journal-format.md section 7), as
// a pattern of runs (raw_pattern.h: L = R * count1 * count2 packed bytes).
// Version 2's payload is the first 28 bytes and 4 reserved ones: one run,
// L = R.
namespace data_payload {
inline constexpr Field kAddress{0, 8};        // of the first run
inline constexpr Field kRunLength{8, 8};      // R
inline constexpr Field kLogOffset{16, 8};     // of the packed bytes in the data log, below 2^62
inline constexpr Field kCrc{24, 4};           // masked CRC32C of the packed bytes
inline constexpr Field kCount1{28, 4};        // runs per group
inline constexpr Field kStride1{32, 8};       // from run to run in a group
inline constexpr Field kCount2{40, 4};        // groups
inline constexpr Field kLog{44, 4};           // data log: 0 is <journal>.data, n is <journal>.data.n (rank n's)
inline constexpr Field kStride2{48, 8};       // from group to group
inline constexpr Field kAll[] = {kAddress, kRunLength, kLogOffset, kCrc, kCount1, kStride1, kCount2, kLog, kStride2};
}  // namespace data_payload
inline constexpr size_t kDataPayloadSize = data_payload::kStride2.end();
inline constexpr size_t kDataPayloadSizeV2 = data_payload::kStride1.at;

// INPLACE (version 6): bytes this transaction wrote into the file itself,
// which its COMMIT may reach the disk before (a commit of one flush:
// design.md §9).  No other record of the generation covers them.  Recovery
// refuses the generation's last transaction, as never acknowledged, if the
// file's bytes there fail the CRC.
namespace in_place_payload {
inline constexpr Field kAddress{0, 8};        // in the HDF5 file
inline constexpr Field kLength{8, 8};         // L, at least 1
inline constexpr Field kCrc{16, 4};           // masked CRC32C of the file's L bytes there
inline constexpr Field kReserved{20, 4};      // zero
inline constexpr Field kAll[] = {kAddress, kLength, kCrc, kReserved};
}  // namespace in_place_payload
inline constexpr size_t kInPlacePayloadSize = in_place_payload::kReserved.end();

// THE BINDING: these fields, then the journal's absolute path (UTF-8, no
// terminator).
namespace binding_value {
inline constexpr Field kUuid{0, 16};          // the journal's
inline constexpr Field kGeneration{16, 8};    // the journal's
inline constexpr Field kAll[] = {kUuid, kGeneration};
}  // namespace binding_value
inline constexpr size_t kBindingFixedSize = binding_value::kGeneration.end();

// THE APPLYING MARKER's value (kApplyingXattr): the generation it was set
// in, and the last transaction whose bytes outside the journal were durable
// then.  Empty before version 7.
namespace applying_value {
inline constexpr Field kUuid{0, 16};        // the journal's
inline constexpr Field kGeneration{16, 8};  // the journal's
inline constexpr Field kDurableTxn{24, 8};  // the last transaction whose bytes outside the journal were durable
inline constexpr Field kAll[] = {kUuid, kGeneration, kDurableTxn};
}  // namespace applying_value
inline constexpr size_t kApplyingValueSize = applying_value::kDurableTxn.end();

// THE READERS FILE, <journal>.readers: how live readers and a writer share
// a journal (readers/live_readers.h tells the protocol).  The writer writes
// every field before kLateMark in one write, and readers only kLateMark.
// A file of kReadersFileSizeBeforeState bytes (an older h5journal's) reads
// as state 0; one of kReadersFileSizeBeforeDeadline as held off with no
// deadline.
inline constexpr char kReadersMagic[8] = {'H', '5', 'J', 'R', 'E', 'A', 'D', '\n'};
namespace readers_file {
inline constexpr Field kMagic{0, 8};          // `48 35 4A 52 45 41 44 0A`, "H5JREAD\n"
inline constexpr Field kEpoch{8, 8};          // even while no rewrite is under way, odd during one
// 0 readers welcome; 1 held off, while a writer waits for the readers
// present to close before a rewrite; 2 closed, by a writer about to unlink
// the file
inline constexpr Field kState{16, 8};
// held off until: ns since the Unix epoch after which a reader that still
// finds itself held off registers anyway ("late"); 0 when none is set.
inline constexpr Field kUntil{24, 8};
inline constexpr Field kWriterPid{32, 4};     // the writer's process id
inline constexpr Field kWriterHost{36, 4};    // CRC32C of the writer's host name
inline constexpr Field kLateMark{40, 8};      // when a reader last registered late (readers write it)
inline constexpr Field kAll[] = {kMagic, kEpoch, kState, kUntil, kWriterPid, kWriterHost, kLateMark};
}  // namespace readers_file
inline constexpr size_t kReadersFileSize = readers_file::kLateMark.end();
inline constexpr size_t kReadersWriterBytes = readers_file::kLateMark.at;
inline constexpr size_t kReadersFileSizeBeforeState = readers_file::kState.at;
inline constexpr size_t kReadersFileSizeBeforeDeadline = readers_file::kUntil.at;
// The generation locks, past the fields: bytes that hold no data.  A reader
// holds a shared lock on byte kGenerationLockFirst + (epoch / 2) %
// kGenerationLocks, the generation its snapshot is of.
inline constexpr uint64_t kGenerationLockFirst = 64;
inline constexpr uint64_t kGenerationLocks = 64;

// The layout above, checked where it is written down.
static_assert(laid_out(header_slot::kAll, kHeaderSlotSize), "the header slot's fields");
static_assert(laid_out(record_header::kAll, 32), "the record header's fields");
static_assert(laid_out(begin_payload::kAll, 8), "BEGIN's fields");
static_assert(laid_out(write_payload::kAll, 24), "WRITE's fields");
static_assert(laid_out(commit_payload::kAll, 48) && kCommitPayloadSizeV6 == 40 && kCommitPayloadSizeV4 == 32,
              "COMMIT's fields");
static_assert(laid_out(range_payload::kAll, 16), "ZERO's and PLACED's fields");
static_assert(laid_out(data_payload::kAll, 56) && kDataPayloadSizeV2 == 32, "DATA's fields");
static_assert(laid_out(in_place_payload::kAll, 24), "INPLACE's fields");
static_assert(laid_out(binding_value::kAll, 24), "the binding's fields");
static_assert(laid_out(applying_value::kAll, 32), "the applying marker's fields");
static_assert(laid_out(readers_file::kAll, 48) && kGenerationLockFirst >= kReadersFileSize, "the readers file's");
static_assert(kHeaderSlotOffset[1] >= kHeaderSlotSize, "header slots overlap");
static_assert(kHeaderSlotOffset[1] + kHeaderSlotSize <= kFirstRecordOffset, "a header slot runs into the records");
static_assert(kFirstRecordOffset % kBlockSize == 0, "records start on a block");
static_assert(kRecordHeaderSize % 8 == 0 && kBeginPayloadSize % 8 == 0 && kWritePayloadHeader % 8 == 0 &&
                  kCommitPayloadSize % 8 == 0 && kZeroPayloadSize % 8 == 0 && kDataPayloadSize % 8 == 0 &&
                  kInPlacePayloadSize % 8 == 0,
              "fixed payloads keep the 8-byte alignment the records rely on");
static_assert(sizeof kLogFormGuard == sizeof kMagic, "the guard replaces HDF5's 8-byte signature");
// Data log offsets stay below this (a bound the reader checks).
inline constexpr uint64_t kMaxDataLogOffset = uint64_t(1) << 62;
// Bounds every length the reader trusts before it has checked a CRC.
inline constexpr uint32_t kMaxPayload = 1u << 30;

enum class RecordType : uint8_t { kBegin = 1, kWrite = 2, kCommit = 3, kComment = 4, kZero = 5, kData = 6, kPlaced = 7,
                                  kInPlace = 8 };

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
  // The low 16 bits of the CRC32C of each fingerprint sample (version 5).
  std::vector<uint16_t> fingerprint;
};

// Where fingerprint sample `i` of `samples` starts in a file of `size`
// bytes: spread from its start to its end, 8-byte aligned.
uint64_t fingerprint_sample_at(uint64_t size, unsigned samples, unsigned i);
// How many samples a file of `size` bytes gets.
inline unsigned fingerprint_samples(uint64_t size) {
  return unsigned(std::min<uint64_t>(kFingerprintSamples, size / kFingerprintSampleSize));
}
// A sample's fingerprint: the low 16 bits of its CRC32C.
uint16_t sample_fingerprint(std::span<const std::byte> sample);

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
// The record after the one at `offset`: after a COMMIT, on a `block_size`
// (before version 8), or right after it (from version 8; FILE LAYOUT).
inline uint64_t next_record_offset(uint64_t offset, const RecordHeader& h, uint32_t block_size, uint32_t version) {
  uint64_t next = offset + record_span(h.payload_len);
  return h.type == RecordType::kCommit && version < kPackedCommitsVersion ? align_up(next, block_size) : next;
}
// Where a BEGIN may stand instead, when nothing of the generation is at
// `offset`, right after a COMMIT: on the next block, if a sync sealed the
// COMMIT's (from version 8; FILE LAYOUT).  `offset` itself where that
// cannot be.
inline uint64_t sealed_block_start(uint64_t offset, uint32_t block_size, uint32_t version) {
  return version >= kPackedCommitsVersion ? align_up(offset, block_size) : offset;
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

struct InPlacePayload {
  uint64_t address = 0;
  uint64_t length = 0;
  uint32_t masked_crc = 0;
};
// The bytes the payloads name, in all.
inline uint64_t bytes_named(std::span<const InPlacePayload> payloads) {
  uint64_t n = 0;
  for (const InPlacePayload& p : payloads) n += p.length;
  return n;
}
void encode_in_place(const InPlacePayload& p, std::span<std::byte, kInPlacePayloadSize> out);
InPlacePayload decode_in_place(std::span<const std::byte, kInPlacePayloadSize> in);

struct CommitPayload {
  uint64_t logical_size = 0;
  uint64_t record_count = 0;
  uint64_t begin_lsn = 0;
  uint64_t time_ns = 0;
  uint64_t file_size = 0;  // 0: not recorded
  uint64_t durable_txn = 0;
};
void encode_commit(const CommitPayload& c, std::span<std::byte, kCommitPayloadSize> out);
// The COMMIT payload's size in a journal of format `version`.
size_t commit_payload_size(uint32_t version);
// `in` holds commit_payload_size(version) bytes.  Before version 7,
// durable_txn is left 0: the reader, who knows the transaction's number,
// stands in that number less one.
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

// The applying marker's value, set in generation `h` with transactions up
// to `durable_txn` durable outside the journal.
std::string encode_applying(const JournalHeader& h, uint64_t durable_txn);
// The durable transaction a marker set in generation `h` names; 0 for a
// marker of another generation or journal, or an empty one.
uint64_t applying_durable_txn(std::string_view value, const JournalHeader& h);

uint64_t now_ns();

}  // namespace h5j
