// Commits made durable in the background, in commit order, within an
// interval (durable=100ms, JournalOptions::durable_within; design.md §9a).
//
// The writer commits without a sync: its in-place bytes are in the file,
// named with their CRCs in INPLACE records, and its COMMIT is in the
// journal, all in the page cache.  It then tells this object the
// transaction is written.  Every interval, while a written transaction is
// not yet durable, a thread of its own syncs
//   1. the file: every in-place byte of every transaction written so far,
//   2. then the journal: their COMMITs,
// and publishes the last transaction written before 1 began as durable
// (the last whose block is sealed: SEALS, below).
// The writer's next COMMIT names it (kDurableTxn), and recovery checks the
// INPLACE records of the transactions after it only.
//
// Worked example.  Transactions 3 and 4 are written; the thread syncs the
// file, and while it does, the writer writes transaction 5.  The journal's
// sync then makes 5's COMMIT durable too, but not necessarily 5's in-place
// bytes, written after the file's sync began.  The thread publishes 4, not
// 5.  If power fails now, recovery trusts up to what the last durable
// COMMIT names (2, say), checks 3, 4 and 5, and stops before 5 if its bytes
// are missing.  Had the thread published 5, a later COMMIT naming it would
// make recovery trust 5's missing bytes.
//
// Under MPI each rank has one: a follower's syncs its own writes to the
// file and nothing else (no journal: rank 0 writes it), and rank 0 names a
// transaction durable only once every follower's has covered it too
// (followers_durable.h).
//
// WHO OWNS WHAT.  The thread syncs through File handles of its own, opened
// on the same paths: a sync through any descriptor of a file covers every
// write to it.  It touches nothing else of the writer's.  The writer hands
// it transaction numbers and takes back the durable ones and the first
// error, under mu_.  Syncs, the thread's and sync_now's, run one at a time
// under sync_mu_.
//
// WHEN THE DISK FALLS BEHIND.  The thread starts a sync an interval after
// the last one started, or as soon as it ends if it took longer.  A writer
// faster than the disk would make each sync longer than the last, and the
// lag would grow without bound.  Three rules keep a sync to about an
// interval, and the disk busy:
//   1. A commit waits while the bytes not yet durable, those a sync in
//      flight took and those written since, exceed the budget: what the
//      disk writes in one interval (Redis's appendfsync everysec blocks its
//      writes the same way).  A sync writes every dirty byte it finds, so
//      bytes written while one runs lengthen it; counting only those since
//      it began, a sync could carry two intervals' worth.
//   2. Half a budget unsynced starts a sync at once: the disk would
//      otherwise idle while the writer fills the budget, and then hold it
//      up for a whole sync.
//   3. The disk's rate is the bytes of the last kWindow syncs over their
//      time.  That holds only if the disk starts on the bytes when the sync
//      does: the engine starts no early writeback under durable_within
//      (write_routing.cc).  With it, 5 MiB once synced in 0.8 ms, already
//      written; the budget became 660 MiB, and commits were durable 390 ms
//      after they returned.
// Until a sync has measured the rate, the budget is its least, 4 MiB: a
// writer that ran free until then would already be a long sync ahead.
//
// So at most a budget waits on the disk, a sync takes at most about an
// interval, and a commit is durable within the interval (or the sync
// running when it came), plus its own sync: the bound design.md §9a
// states, and the lag the harness measures (docs/performance.md).
//
// WRITTEN AHEAD.  A session may write much in place before it commits: a
// checkpoint dump, a strided pass, a file written whole and closed.  Those
// bytes count as unsynced from when the writer tells of them (wrote), and
// the thread syncs them at its next look, an interval after its last sync
// began.  With no commit waiting it syncs the file alone: no COMMIT names
// them yet, so their order against the journal does not matter, and the
// page cache could have written them back anyway.  The close, always
// durable, then syncs only what the last interval wrote, as sec2 with an
// fdatasync every interval would.  They start no sync early (rule 2 is a
// commit's): HDF5 writes a chunk once per pass of a strided selection, and
// each sync between two passes sends the disk the chunk again.
//
// SEALS.  Commits are packed in the journal (journal_writer.h, CommitSeals):
// a COMMIT's block may hold the next transaction's first records.  A block
// written again after a sync made its COMMIT durable could be torn, and the
// COMMIT lost.  So a sync publishes only a sealed commit, one whose block
// no later write touches:
//   - a commit with no record after it yet: the sync seals it, and the
//     writer starts its next record on a fresh block;
//   - a commit the writer ended its block after (it does so when asked:
//     a sync found records already after the commit before);
//   - a commit made durable by the writer itself (those end their block).
// A sync that finds the last commit followed by records syncs it all the
// same, publishes the last sealed one, and asks the writer to end the
// block of its next COMMIT, after which the thread syncs again at once.
// That sync publishes the seal and asks for no other: commits packed
// after the seal wait for the next interval's sync.  Asking again, a
// writer whose records always follow its last COMMIT would keep the thread
// syncing back to back (W3: 28 to 43 flushes in 0.7 s, 23 to 26 without,
// 6 or 7 for sec2 synced every interval).
// The writer places a transaction's BEGIN with its first record, so records
// follow a COMMIT only while HDF5 writes journaled metadata, which it does
// in H5Fflush, just before the next commit.
//
// Worked example.  Commits 7 and 8 are packed into one block; the writer
// is idle.  The thread takes 8 as sealed and syncs: 8 is published, and
// the writer's next BEGIN goes to the next block.  Had the writer already
// placed 9's BEGIN after 8 in that block, the thread would publish 6 (the
// last sealed), 9's COMMIT would end its block, and the next sync would
// publish 9.
//
// Where operations must be counted or recorded in order (the crash-state
// explorer, the fault sweep: FileSystem::deterministic), no thread runs:
// written() syncs every kInlineEvery-th transaction itself, so that
// several transactions wait unverified between syncs, as with a thread.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "file.h"
#include "journal_writer.h"

namespace h5j {

class BackgroundSync : public CommitSeals {
 public:
  struct Durable {
    uint64_t txn = 0;      // the last transaction made durable (0: none)
    uint64_t commits = 0;  // the session's commits up to it
  };

  // `threaded` false: no thread, syncs inline (above).  Without `journal`
  // (an MPI follower's), it syncs the file alone; its "transactions" are
  // then the collective commits.
  BackgroundSync(std::unique_ptr<File> file, std::unique_ptr<File> journal, std::chrono::milliseconds interval,
                 bool threaded);
  // Stops the thread, without a last sync: a close commits durably itself.
  ~BackgroundSync();
  // Stops the thread, as the destructor does, and gives up the handles it
  // synced through: the close that removes the journal's name hands them
  // to its closing thread, since the last close of the journal frees its
  // blocks (closing_thread.h).  From then on only durable() and failure()
  // may be asked.
  std::vector<std::unique_ptr<File>> stop();
  BackgroundSync(const BackgroundSync&) = delete;
  BackgroundSync& operator=(const BackgroundSync&) = delete;

  // `bytes` more are in place, and no COMMIT names them yet: they count
  // toward the next sync from now, not from their commit (WRITTEN AHEAD,
  // above).  Never waits: only a commit waits for the disk.
  void wrote(uint64_t bytes);
  // Transaction `txn`, the session's `commits`-th commit, is written, with
  // `bytes` in place not yet told by wrote() for the next sync to write
  // (its records ride along: their time counts in the measured rate).
  // Waits while the disk is behind (above).
  // `sealed`: its COMMIT ended its block (JournalWriter::last_commit_sealed).
  void written(uint64_t txn, uint64_t commits, uint64_t bytes, bool sealed = true);
  // SEALS, above: asked by the writer (JournalWriter::pack_commits).
  bool next_record_on_fresh_block() override;
  bool end_commit_block() override;
  void sealed_last_commit() override;
  // Transaction `txn` and every one before it are durable already: the
  // writer committed durably itself, syncing every byte written so far.
  void made_durable(Durable upto);
  // A checkpoint made every commit durable and started a generation whose
  // transactions are numbered from `first_txn` (the numbers may repeat the
  // last generation's): a sync begun before it publishes nothing.
  void new_generation(uint64_t first_txn);
  // Starts the next sync now, not at the interval's end: a due checkpoint
  // waits for it (JournaledFile::checkpoint_waits_for_sync).  Without a
  // thread, the next written() syncs.
  void hurry();
  // Every transaction written so far durable, synced in the caller's
  // thread; or the error, this sync's or the first of the thread's.
  Status sync_now();
  Durable durable() const;
  // The first error a sync met (ok: none).  It stays: the writer stops.
  Status failure() const;

  static constexpr uint64_t kInlineEvery = 3;

 private:
  // Syncs of fewer bytes in all measure their flushes more than the disk's
  // rate; below the least budget, waiting would cost more than it bounds.
  static constexpr uint64_t kMeasuredMin = uint64_t(1) << 20;
  static constexpr uint64_t kLeastBudget = uint64_t(4) << 20;

  using Clock = std::chrono::steady_clock;
  // The bytes a sync takes: every one written so far.
  struct Batch {
    Durable upto;
    uint64_t bytes = 0;
  };

  // The disk's rate over the last kWindow syncs of any bytes: their bytes
  // over their time, so that one sync slowed by something else (another
  // process's I/O, a flush of the file system's own) moves it little.
  class DiskRate {
   public:
    void synced(uint64_t bytes, std::chrono::duration<double> took);
    // Bytes a second; 0 until the window holds kMeasuredMin bytes.
    double bytes_per_second() const;

   private:
    static constexpr size_t kWindow = 4;
    struct Synced {
      uint64_t bytes = 0;
      double seconds = 0;
    };
    std::array<Synced, kWindow> window_{};
    size_t count_ = 0;  // syncs seen; the last kWindow are in window_
  };

  void run();
  Batch take_unsynced();
  // The unsynced bytes are durable by other means (a durable commit, a
  // checkpoint): no sync need take them, and no writer wait for them.
  void forget_unsynced();
  // Syncs `batch` (sync_through), then counts its bytes as durable and
  // measures the disk's rate from it, or keeps its error (failure()).
  void sync_batch(const Batch& batch);
  // Syncs the file, then the journal, and publishes the batch's `upto`;
  // only the file if it has bytes but nothing to publish; false if nothing
  // was left to sync.
  Result<bool> sync_through(const Batch& batch);
  bool behind() const { return unsynced_bytes_ + syncing_bytes_ > budget_; }

  std::unique_ptr<File> file_, journal_;
  const std::chrono::milliseconds interval_;

  mutable std::mutex mu_;  // guards everything below but sync_mu_ and thread_
  std::condition_variable wake_;
  std::condition_variable drained_;  // a sync made bytes durable, or the syncing stopped
  Durable written_, durable_;
  Durable sealed_;                 // the last written commit a sync may publish (SEALS)
  bool records_follow_ = false;    // the writer placed records after written_'s COMMIT
  bool seal_next_record_ = false;  // ... must start its next record on a fresh block
  bool seal_next_commit_ = false;  // ... must end its next COMMIT's block
  bool syncing_for_seal_ = false;  // the next sync is the one a seal hurried
  uint64_t unsynced_bytes_ = 0;  // written, and no sync has taken them yet
  uint64_t syncing_bytes_ = 0;   // taken by syncs not yet ended
  DiskRate rate_;
  uint64_t budget_ = kLeastBudget;  // what the disk writes in an interval, as last measured
  uint64_t generation_ = 0;  // new_generation calls, so that an older sync publishes nothing
  Status failure_;
  bool hurry_ = false;
  bool stop_ = false;

  std::mutex sync_mu_;  // one sync at a time
  std::thread thread_;  // last: started once everything it reads is
};

// The files a commit's bytes are in, synced so that the journal's COMMITs
// are durable only after the bytes they name: the file, then the journal.
Status sync_in_commit_order(File& file, File& journal);

}  // namespace h5j
