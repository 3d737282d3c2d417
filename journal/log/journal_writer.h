// Appends records to the journal through a ring of buffers.
//
// The journal is a byte stream.  Records are copied into the current buffer;
// a full buffer is handed to the File's asynchronous writes and the next one
// in the ring becomes current.  Buffers are reused in ring order, and a buffer
// still in flight is waited for before reuse, so memory stays at
// ring_buffers * buffer_size however fast HDF5 writes.
//
// Invariants:
//  - A buffer's bytes [0, used) are the journal bytes [base, base + used) until
//    the buffer is reused; read() relies on this to serve recent records.
//  - A buffer is reused only after its write has completed.
//  - commit() returns only when the COMMIT record and everything before it
//    have reached the file (and, when durable, survived fdatasync, or with
//    kWriteBack reached the device, in space whose allocation is durable).
//  - While preallocating, no record write is submitted past allocated_end_:
//    the journal is written with zeros ahead of its records (see reserve()),
//    and the zeros are written before any record write that could overlap
//    them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "aligned_buffer.h"
#include "buffer_pool.h"
#include "file.h"
#include "format.h"
#include "read_ahead.h"

namespace h5j {

// Where a packed commit's block ends (format.h, FILE LAYOUT).  A commit
// whose sync waits (durable=100ms) is written right after the one before,
// not on a fresh block: an 8 KiB step's records then fill a few hundred
// bytes of the journal, not a block each.  A block holding a COMMIT must
// not be written again once a sync may have made that COMMIT durable: a
// torn write of it would take the COMMIT with it.  So the thread that
// syncs decides, and the writer asks it at two points:
//  - before it places the first record after a COMMIT: start on a fresh
//    block if a sync has taken that COMMIT since (the thread seals it);
//  - before a COMMIT ends: end its block if a sync wants it, and could not
//    seal the one before because records already followed it.
class CommitSeals {
 public:
  virtual ~CommitSeals() = default;
  virtual bool next_record_on_fresh_block() = 0;
  virtual bool end_commit_block() = 0;
  // The writer filled the block after the last COMMIT (seal_last_commit).
  virtual void sealed_last_commit() = 0;
};

struct RingOptions {
  uint32_t buffers = 4;
  size_t buffer_size = 1 << 20;
  bool durable = true;
  // Where the ring comes from and, given back at the session's end
  // (give_back_ring), goes to; nullptr: allocated, and freed with the
  // writer.  Not owned; outlives the writer.
  BufferPool* pool = nullptr;
};

class JournalWriter {
 public:
  // Begins generation header.generation in `file` (not owned): writes its
  // header slot and, if `sync_header`, syncs it before any record.
  static Result<std::unique_ptr<JournalWriter>> start(File& file, const JournalHeader& header,
                                                      RingOptions ring, bool sync_header);

  // BEGIN of the next transaction.  One transaction is open at a time.
  Status begin();
  // A COMMENT naming the writer, placed right after the first BEGIN of
  // each generation.  Placed, not appended now: a session that never puts a
  // record in the journal (close_uncommitted.cc) never allocates the ring.
  void note_each_generation(std::string note) { note_ = std::move(note); }
  // The session's end: once no write from the ring is in flight, the ring
  // goes back to its pool (RingOptions::pool) for the process's next
  // writer.  Nothing but the destructor may follow.  Without a pool, or
  // with a write that failed, the ring stays, and is freed with the writer.
  void give_back_ring();
  // A WRITE record; returns the journal offset where `data` lands.
  Result<uint64_t> append_write(uint64_t address, uint32_t tag, std::span<const std::byte> data);
  Status comment(std::string_view text);
  // A ZERO record: [address, address + length) reads as zeros from here on.
  Status append_zero(uint64_t address, uint64_t length);
  // A PLACED record: the file holds [address, address + length), written in
  // place by this transaction (unwritten_space.h).
  Status append_placed(uint64_t address, uint64_t length);
  // An INPLACE record: the file holds these bytes, with this CRC, written in
  // place by this transaction (a commit of one flush, format.h).
  Status append_in_place(const InPlacePayload& p);
  // A DATA record: raw bytes kept in the data log (the record is their index).
  Status append_data(const DataPayload& d);
  // How a durable commit leaves the journal: kFlush, fdatasync'd; kWriteBack,
  // on the device but not flushed from its cache (File::write_back), which
  // requires fits_in_durable_space: the caller's own sync of a file on the
  // same device then makes the COMMIT durable; kWritten, only written (a
  // sync in the background makes it durable later: durable_within).
  enum class CommitSync { kFlush, kWriteBack, kWritten };
  // What a COMMIT says besides its transaction's shape (format.h).
  struct CommitFacts {
    uint64_t logical_size = 0;
    uint64_t file_size = 0;    // the HDF5 file's own size on disk now (0: not known)
    uint64_t durable_txn = 0;  // the last transaction whose bytes outside the journal are durable
  };
  // COMMIT of the open transaction, then flush and (when durable) `sync`.
  // The next record starts on a fresh block, unless `sync` is kWritten and
  // the seals (pack_commits) say it may follow.
  Status commit(const CommitFacts& facts, CommitSync sync = CommitSync::kFlush);
  // Commits written without a sync are packed, their blocks sealed as
  // `seals` (not owned; it outlives the writer) decides.
  void pack_commits(CommitSeals* seals) { seals_ = seals; }
  // Whether the last COMMIT ended its block: no later write touches it.
  bool last_commit_sealed() const { return last_commit_sealed_; }
  // For a sync in the writer's own thread while its open transaction's
  // records follow the last COMMIT: fills the block they are in with a
  // COMMENT and writes them, so that no later write touches the COMMIT's
  // block, and tells the seals.  Nothing to do if no record follows an
  // unsealed COMMIT (the sync seals that one itself).
  Status seal_last_commit();
  // Whether `more` bytes of records after those appended so far, a COMMIT
  // among them, stay within journal space whose allocation is durable (no
  // zeros written ahead since the last sync): written there, they need no
  // metadata of the journal's to be found after a power loss.
  bool fits_in_durable_space(uint64_t more) const {
    return opts_.durable && allocated_end_ == durable_end_ && tell() + more <= durable_end_;
  }
  // No zeros ahead from here on (see reserve()): for the journal's last
  // commit, a close's, since no later commit could use them; and for a
  // journal no commit syncs itself (durable_within).
  void stop_zeros_ahead() { preallocate_ = false; }
  // Starts the next generation: waits for all writes, writes the new header
  // to the other slot and syncs it.  No transaction may be open.
  Status reset(const JournalHeader& next);
  // Ends the journal: waits for all writes, writes the next generation's
  // header, which no record follows, to the other slot, and writes it back
  // (File::write_back) for the caller's sync of a file on the same device
  // to flush.  Once that flush completes the journal holds no transaction,
  // wherever a crash leaves it.  No transaction may be open, and nothing
  // may be written after.
  Status retire(const JournalHeader& next);

  // As the data log's writer (docs/journal-format.md section 7): a DATA
  // record outside any transaction, numbered `txn`, holding `bytes` (the
  // pattern's runs, packed); returns its index entry (offset and CRC of the
  // bytes), for the journal's DATA record.  sync() makes every record
  // appended so far durable (only written, without durability).
  // `log` is this data log's number (format.h).
  Result<DataPayload> append_extent(uint64_t txn, uint32_t log, const RawPattern& pattern, Gather bytes);
  Status sync();
  // Puts every record appended so far into the file (not durably), so that
  // another process reading the journal sees them: the MPI owner publishes
  // its records to the other ranks this way.
  Status publish();

  // The journal bytes [offset, offset + out.size()), from a buffer that still
  // holds them or else from the file.
  Status read(uint64_t offset, std::span<std::byte> out);
  // How much more than asked a small read of the file takes, for the reads
  // after it, and from what size a read takes only its own bytes
  // (read_written).
  static constexpr size_t kReadAhead = size_t(64) << 10;
  static constexpr size_t kReadAlone = size_t(16) << 10;

  bool in_transaction() const { return in_txn_; }
  // Whether records follow the last COMMIT (BEGIN is placed with the
  // transaction's first other record: placed_begin()).
  bool records_follow_commit() const { return in_txn_ && !begin_pending_; }
  uint64_t next_txn() const { return txn_ + (in_txn_ ? 1 : 0); }
  uint64_t last_committed_txn() const { return in_txn_ ? txn_ - 1 : txn_; }
  // The open transaction's number (in_transaction() must hold).
  uint64_t open_txn() const { return txn_; }
  // Journal bytes used by this generation (its records).
  uint64_t generation_bytes() const { return tell() - kFirstRecordOffset; }
  const JournalHeader& header() const { return header_; }

 private:
  struct Buffer {
    std::span<std::byte> mem;  // a slice of ring_mem_
    uint64_t base = 0;       // journal offset of mem[0]
    size_t used = 0;         // bytes filled
    size_t submitted = 0;    // bytes handed to the File
    uint64_t ticket = 0;     // last write submitted from this buffer (0: none)
  };

  JournalWriter(File& file, const JournalHeader& header, RingOptions ring);
  uint64_t tell() const { return cur().base + cur().used; }
  Buffer& cur() { return ring_[cur_]; }
  const Buffer& cur() const { return ring_[cur_]; }
  // The open transaction's BEGIN, placed before its first other record, so
  // that a transaction begun long before its commit (an in-place write,
  // then hours of computing) holds no record after the COMMIT before it
  // until it has one to write: the thread can seal that COMMIT meanwhile.
  Status place_begin();
  Status append_record(RecordType type, std::span<const std::byte> payload_head, Gather payload_body);
  Status allocate_ring();
  Status append_bytes(std::span<const std::byte> bytes);
  Status submit(Buffer& b);
  // Makes the next ring buffer current, starting at journal offset `base`.
  Status rotate(uint64_t base);
  Status write_header_slot(const JournalHeader& h, bool sync);
  // The next generation's header, in the other slot, with every earlier write
  // done; not synced.
  Status write_next_header(const JournalHeader& next);
  Status sync_all_written();
  // Makes [0, end) allocated, written journal space (zeros past the records).
  Status reserve(uint64_t end);
  // read() of bytes no buffer holds, all below `limit`, where the ring's
  // bytes start: through the read-ahead window.
  Status read_written(uint64_t offset, std::span<std::byte> out, uint64_t limit);

  File& file_;
  JournalHeader header_;
  RingOptions opts_;
  AlignedBuffer ring_mem_;  // every buffer of the ring, one after another; from the first record on
  std::vector<Buffer> ring_;
  size_t cur_ = 0;
  uint64_t txn_ = 0;          // the open transaction, or the last committed
  bool in_txn_ = false;
  bool begin_pending_ = false;  // in_txn_, and its BEGIN not yet placed
  CommitSeals* seals_ = nullptr;
  std::string note_;             // note_each_generation
  bool noted_ = false;           // this generation's BEGIN and note are placed
  bool last_commit_sealed_ = true;
  uint64_t txn_records_ = 0;  // records in the open transaction so far
  uint64_t begin_lsn_ = 0;
  uint64_t allocated_end_ = 0;  // the journal file is written up to here
  uint64_t durable_end_ = 0;    // ... and durably so (synced since written), up to here
  bool preallocate_ = true;     // false after a full disk, and after stop_zeros_ahead()
  bool ring_given_back_ = false;  // give_back_ring(): no record may follow
  uint64_t zeros_ahead_;        // how far past the records the next zeros reach (reserve())
  // Journal bytes below the ring's, read by read_written: true until
  // reset(), since they are not written again within a generation.
  ReadAhead window_{kReadAhead};
};

}  // namespace h5j
