// Reads a journal back: picks the newest valid header slot, then yields the
// records of that generation one by one, validating each.  It never trusts a
// length it has not bounded by the file size and kMaxPayload, and reads
// payloads in fixed-size pieces, so memory stays bounded whatever it is given.
//
// It reads ahead (read_ahead.h): a record's header and payload come from a
// piece read at once, kFirstAhead bytes at first and up to kWindow, in a
// buffer only as large as the pieces so far (a journal of a few KiB, as a
// live reader of a small file opens, takes 16 KiB, not 1 MiB).  Small
// commits are a few records of tens of bytes each, and a read apiece made
// recovery a stream of system calls: 1,266,131 preads for a 47 MiB journal
// of 297,110 commits, 24 MB/s.  The first piece is small because a
// follower reads a few new records at each refresh, and a piece of 1 MiB
// would copy the zeros a durable journal writes ahead of them.  refresh()
// drops the piece, so a follower tailing a journal another process
// appends to sees the new records.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "file.h"
#include "format.h"
#include "read_ahead.h"

namespace h5j {

// Why the record stream ended.  Everything but kCorrupt can be the normal end
// of a journal whose writer died: the tail of a transaction being written.
enum class StreamEnd {
  kEndOfFile,     // no bytes left
  kZeroes,        // a zero-filled header: never written
  kStale,         // salt or LSN of another generation: old bytes
  kTorn,          // a record cut short by the end of the file
  kBadChecksum,   // a record whose CRC does not match
  kBadRecord,     // unknown type or impossible length
  kBadSequence,   // valid record out of transaction order
  kDataMismatch,  // a committed transaction's data-log bytes fail their CRC
  kInPlaceMissing,  // the last COMMIT's in-place bytes never reached the file: not acknowledged
};
const char* stream_end_name(StreamEnd e);
// True when the stream's end is an ordinary end (no damaged record).
bool clean_end(StreamEnd e);

struct Record {
  RecordHeader header;
  // WRITE: the payload header, and where its bytes are in the journal.
  // ZERO: address and length in `write`; data_offset unused.
  // DATA: the runs in `pattern`, their first address and packed length in
  // `write`; data_offset is where the packed bytes are in the data log (in
  // a data log's own DATA record: in this record), data_crc their masked
  // CRC32C.
  // INPLACE: address and length in `write`, data_crc the masked CRC32C of
  // the file's bytes there.
  WritePayloadHeader write;
  RawPattern pattern;
  uint64_t data_offset = 0;
  uint32_t data_crc = 0;
  uint32_t data_log = 0;  // DATA: which data log holds the bytes
  CommitPayload commit;
  std::string comment;
  uint64_t next_offset = 0;  // where the following record starts
};

class JournalReader {
 public:
  // Reads both header slots.  kMissing if the journal has no header at all
  // (empty or zero-filled: its creation never became durable); kCorrupt if
  // neither slot is valid.
  static Result<std::unique_ptr<JournalReader>> open(File& file);

  const JournalHeader& header() const { return header_; }
  // The next valid record, or nullopt at the end of the stream (see end()).
  Result<std::optional<Record>> next();
  StreamEnd end() const { return end_; }
  uint64_t end_offset() const { return offset_; }
  std::string end_detail() const;

  // Takes in what was appended to the journal since open (a follower
  // reading the tail of a journal another process writes).
  Status refresh();

  // Continues reading at `offset` (a record boundary found by resync).
  void seek(uint64_t offset) {
    offset_ = offset;
    end_ = StreamEnd::kEndOfFile;
    after_commit_ = false;
  }
  // The first offset >= `from` (a multiple of 8) where a valid record of
  // this generation starts (a BEGIN, if `begin_only`); nullopt if none.
  // Used past a damaged record: by scan_past_damage, to carry on, and by
  // tolerate-tail, to tell a torn tail from damage in the middle.
  Result<std::optional<uint64_t>> resync(uint64_t from, bool begin_only);

 private:
  JournalReader(File& file, JournalHeader h, uint64_t file_size)
      : file_(file), header_(std::move(h)), file_size_(file_size) {}
  // The record at offset_, as next() but without looking past a COMMIT's block.
  Result<std::optional<Record>> read_record();
  std::optional<Record> stop(StreamEnd why) {
    end_ = why;
    return std::nullopt;
  }
  // Streams the payload through piece_ for its CRC, keeping its first bytes
  // in head_ so the record can be decoded without reading them again.
  Result<bool> payload_crc_matches(const RecordHeader& h, const std::byte* hdr);
  static constexpr size_t kPiece = 1 << 20;
  static constexpr size_t kFirstAhead = 16 << 10;
  static constexpr size_t kHead = 4096;  // covers every fixed payload and a comment
  // The window: a piece and a page more.  A WRITE of 1 MiB is a record of
  // 1 MiB and 56 bytes (its header, its payload's descriptor, its data), and a
  // window of one piece, read at its header, ends short of the payload's last
  // bytes; read at the payload, short of the next header: every large record
  // read twice.  With the page, a miss at any point of a record holds the
  // rest of its payload's piece and the next record's header.
  static constexpr size_t kWindow = kPiece + 4096;
  static_assert(kWindow >= kRecordHeaderSize + kPiece + kWritePayloadHeader + kRecordHeaderSize);

  File& file_;
  JournalHeader header_;
  uint64_t file_size_;
  ReadAhead piece_{kWindow, kFirstAhead};  // the journal's bytes, kWindow at most
  std::array<std::byte, kHead> head_{};
  uint64_t offset_ = kFirstRecordOffset;
  StreamEnd end_ = StreamEnd::kEndOfFile;
  bool after_commit_ = false;  // the last record next() returned was a COMMIT
};

// Hands each valid record from the reader's position to `on_record`, in
// order, until the stream ends (end() says why).
template <typename OnRecord>
Status for_each_record(JournalReader& reader, OnRecord&& on_record);
// As for_each_record, but past damage it finds the next valid record of the
// generation (resync) and carries on: how salvage and the inspector read.
// `on_damage(offset, why)` is told of each break first.
template <typename OnRecord, typename OnDamage>
Status for_each_salvaged_record(JournalReader& reader, OnRecord&& on_record, OnDamage&& on_damage);

// One committed transaction's WRITE and ZERO records, in log order, as
// positions in the journal.
struct CommittedTxn {
  uint64_t txn = 0;
  uint64_t logical_size = 0;
  uint64_t file_size = 0;   // the file's own size at the commit (0: not recorded)
  uint64_t durable_txn = 0; // transactions up to this one had their bytes outside the journal durable
  uint64_t end_offset = 0;  // where the record after its COMMIT starts
  std::vector<Record> writes;
};

// Summary of a scan for reports and error messages.
struct ScanSummary {
  JournalHeader header;
  uint64_t committed_txns = 0;
  uint64_t last_committed_txn = 0;
  uint64_t committed_end = kFirstRecordOffset;  // offset after the last COMMIT
  uint64_t discarded_records = 0;              // records of the uncommitted tail
  StreamEnd end = StreamEnd::kEndOfFile;
  uint64_t end_offset = 0;
};

struct ScanOptions {
  uint64_t first_txn = 0;      // 0: the header's first transaction
  bool allow_txn_gap = false;  // salvage: a BEGIN may skip transaction numbers
};

// Scans the journal from the reader's position and hands each committed
// transaction, in order, to `on_commit`.  Only one transaction's index is
// held in memory at a time.  The uncommitted tail is counted and discarded.
template <typename OnCommit>
Result<ScanSummary> scan_committed(JournalReader& reader, OnCommit&& on_commit, ScanOptions options = {});

// Where scan_committed ended at damage (not a clean end): finds the next
// valid BEGIN of the generation (resync) and scans on from it, expecting
// transaction `next_txn` or a later one, and again past each damage after
// it, until a clean end.  `on_stretch(from, to, summary)` is told of each
// stretch skipped, [from, to), and of the scan after it.  How salvage
// carries on, and how point-in-time recovery finds the commits past its
// stop (commits_past_stop.h).
template <typename OnCommit, typename OnStretch>
Status scan_past_damage(JournalReader& reader, uint64_t next_txn, OnCommit&& on_commit, OnStretch&& on_stretch);

}  // namespace h5j

#include "journal_reader_inl.h"
