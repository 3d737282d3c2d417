// The journal's open transaction, kept by the process that writes the
// journal (a serial writer, or rank 0 under MPI), and the writes outside
// the journal that its COMMIT must not precede.
//
// THE ORDER OF DURABILITY.  A COMMIT record may become durable only after
// every byte it covers outside the journal:
//   1. the file's in-place bytes (staged bytes are placed first),
//   2. the data log's records, which the transaction's DATA records index,
//   3. then the journal, up to and including the COMMIT.
// PendingWrites remembers what 1 and 2 still need; Transaction::commit
// refuses to run while it needs anything (asserted), so no path can write a
// COMMIT before the bytes it names.
//
// One exception, the commit of one flush (design.md §9): in-place bytes may
// still be pending if INPLACE records name them, with their CRCs, before
// the COMMIT.  The COMMIT is then only written back to the device, and the
// file's fdatasync that follows flushes both.  Recovery refuses the last
// transaction if the file fails an INPLACE record's CRC: its flush never
// completed, so no H5Fflush returned for it.
//
// A second exception, durable_within (background_sync.h): the INPLACE
// records are written the same way, and the COMMIT is only written.  A
// thread later syncs the file, then the journal, and the next COMMIT names
// the last transaction that sync covered; recovery checks the INPLACE
// records of every transaction after it, and stops before the first the
// file fails.
//
// Worked example, a crash at each point of a commit of one in-place write W
// and one DATA record D:
//   - before 1 is durable: the journal ends at the previous COMMIT, and
//     recovery rewrites the file's committed bytes from the journal; W was
//     beyond the protected end (the write-ahead rule), so it touches none of
//     them, and the file comes back at the previous commit;
//   - between 2 and 3: as above; D's bytes sit in the data log unreferenced,
//     and the next generation empties it;
//   - after 3: the COMMIT is durable, and so are W and D: this commit.
// In one flush (no D), W and the COMMIT reach the disk in either order:
//   - the COMMIT without W: W's INPLACE CRC fails, and recovery comes back
//     at the previous commit, as before 1;
//   - W without the COMMIT: as before 1; both: this commit.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data_logs.h"
#include "journal_writer.h"
#include "unwritten_space.h"
#include "write_ahead_file.h"

namespace h5j {

// What this process wrote outside the journal since its last commit (or,
// for an MPI follower, since it last handed its records to rank 0).
class PendingWrites {
 public:
  void wrote_in_place() { in_place_ = true; }
  // Whether an in-place write of [addr, addr + len), durable, starts its
  // writeback now (File::start_writeback): one of kEarlyWritebackMin bytes
  // or more, in a transaction that has not rewritten bytes it started.  A
  // stream of new bytes (W1) reaches the disk while HDF5 produces the next;
  // but HDF5 writing a compound dataset a member at a time reads and writes
  // every element once per member, and starting each pass would send the
  // same bytes to the disk eight times (h5bench's CI pattern: 539 MB for
  // 64 MiB).  From the first such rewrite to the commit, the page cache
  // absorbs them and the commit's sync writes them once.
  bool starts_writeback(uint64_t addr, uint64_t len);
  void logged() { logged_ = true; }
  bool any() const { return in_place_ || logged_; }
  bool has_in_place() const { return in_place_; }
  bool has_logged() const { return logged_; }
  // The file's in-place bytes, then the data log, durable (only written,
  // with `durable` false).  `whole_file`: fsync rather than fdatasync, for
  // the first commit's binding attribute.
  Status make_durable(WriteAheadFile& base, DataLogSet& logs, bool durable, bool whole_file);
  // A commit left its in-place bytes to a sync in the background
  // (background_sync.h): they stay pending, so that the next commit that
  // syncs the file itself covers them; writeback may start afresh.
  void committed_unsynced() { started_ = {}; }

 private:
  bool in_place_ = false;
  bool logged_ = false;
  // The bytes started towards the disk since the last commit, as one span.
  struct Started {
    uint64_t lo = UINT64_MAX, hi = 0;
    bool rewritten = false;
  } started_;
};

class Transaction {
 public:
  // `writer`: this generation's journal.  `session_note`: the COMMENT that
  // names the writer, once per generation.  `publishes`: rank 0, whose
  // followers read the journal as it grows.
  Transaction(std::unique_ptr<JournalWriter> writer, std::string session_note, bool publishes)
      : writer_(std::move(writer)), publishes_(publishes) {
    writer_->note_each_generation(std::move(session_note));
  }
  // Waits for the journal's writes in flight before its buffers go.
  ~Transaction() = default;

  JournalWriter& records() { return *writer_; }
  const JournalHeader& header() const { return writer_->header(); }
  bool open() const { return writer_->in_transaction(); }
  // Opens a transaction if none is open (its BEGIN, and once per generation
  // the COMMENT naming the writer, are placed with its first record).
  Status begin();
  // Something changed since the last commit: the next commit point commits.
  void changed() { dirty_ = true; }
  bool dirty() const { return dirty_; }

  // INPLACE records naming `in_place` if given, ZERO records declaring
  // `unwritten` (what HDF5 allocated and never wrote), then the COMMIT
  // saying `facts`, left as `sync` says: with `in_place`, only written
  // back (for the caller's sync of the file to flush) or only written (for
  // a sync in the background).  Requires `pending` to hold nothing, or with
  // `in_place` only in-place bytes (THE ORDER OF DURABILITY).
  // `readers_present` says, asked after the COMMIT, whether a live reader
  // holds a snapshot (placed_allowed).
  Status commit(const PendingWrites& pending, const std::vector<InPlacePayload>* in_place,
                const std::vector<UnwrittenSpace::Range>& unwritten, const JournalWriter::CommitFacts& facts,
                JournalWriter::CommitSync sync, const std::function<bool()>& readers_present);
  // Whether a write into declared unwritten space may go in place, with a
  // PLACED record, until the next commit (unwritten_space.h).
  bool placed_allowed() const { return placed_allowed_; }
  void forbid_placed() { placed_allowed_ = false; }
  Status append_placed(uint64_t addr, uint64_t len);

  // The next generation (a checkpoint): no transaction may be open.
  Status start_generation(const JournalHeader& h);
  // Rank 0: the records appended so far, where followers read them.
  Status publish_to_followers() { return publishes_ ? writer_->publish() : Status::ok(); }

 private:
  std::unique_ptr<JournalWriter> writer_;
  bool publishes_;
  bool dirty_ = false;            // changed since the last commit
  bool placed_allowed_ = false;   // declared unwritten space may be written in place
};

}  // namespace h5j
