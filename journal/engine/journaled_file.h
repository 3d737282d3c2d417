// A file whose changes are journaled: the engine the HDF5 driver wraps.  It
// knows nothing of HDF5 or MPI: it sees byte writes, a size, and commit
// points, and is told which role it has among the processes writing a file.
//
// Where each concern lives:
//   open.cc               opening: for reading, for writing, the locks
//   journaled_file.cc     fail-stop, loading and replaying a journal,
//                         generations, reading through the image
//   snapshot.h            a read-only open's snapshot, checked after every read
//   write_routing.cc      where each write goes: the write-ahead rule,
//                         sieve spans, raw modes, staging, the data log
//   transaction.h         the open transaction and the order of durability
//   commit.cc             commit points, checkpoint, close, log form
//   write_ahead_file.h    the HDF5 file, every write checked against the rule
//   rank_steps.cc         an MPI rank's part: following rank 0, the steps
//                         of the collective commit (collective_commit.h)
//   file_sharing.h        what sharing the file with other ranks changes
//   journal_options.h     what open takes (JournalOptions, Access) and reports
//   image_layers.h        the image between checkpoints, the protected end
//   staged_writes.h       small raw pieces in new space, placed later
//   data_logs.h           the data logs: naming, reading, appending, salvage
//   binding.h             which journal a file belongs to
//   journal_follower.h    an MPI follower's view of rank 0's journal
//   peer_logs.h           an MPI rank's view of the other ranks' data logs
//
// FAIL-STOP.  After any failed write, sync or read, HDF5 has moved on in
// memory, so a later commit could commit a state missing that write, or
// built on what it could not read.  So the first error poisons the file:
// every later call returns it, and the file stays at its last commit.  This
// is kept by structure: each public entry point that can change the file
// runs its work through guarded(), which returns the poison if there is one
// and poisons the file with any error the work returns.  No helper poisons
// the file or checks the poison itself.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "apply_buffers_pool.h"
#include "background_sync.h"
#include "binding.h"
#include "data_logs.h"
#include "live_readers.h"
#include "file.h"
#include "file_sharing.h"
#include "followers_durable.h"
#include "image_layers.h"
#include "journal_options.h"
#include "journal_follower.h"
#include "rank_exchange.h"
#include "recovered_image.h"
#include "journal_writer.h"
#include "peer_logs.h"
#include "replay.h"
#include "snapshot.h"
#include "staged_writes.h"
#include "transaction.h"
#include "last_writes.h"
#include "unwritten_space.h"
#include "write_ahead_file.h"

namespace h5j {

struct PieceShape;  // what write_raw learns of its pieces in one pass (write_routing.cc)

class JournaledFile : private RecoveredImage {
 public:
  static Result<std::unique_ptr<JournaledFile>> open(const std::string& path, Access access,
                                                     const JournalOptions& opts);
  // Releases the files without committing: what a crash would leave.
  ~JournaledFile() override;

  Status read(uint64_t addr, std::span<std::byte> out) override;
  // Metadata.  Rank 0 writes all of it under MPI; a follower's are dropped.
  Status write(uint64_t addr, std::span<const std::byte> data, uint32_t tag);
  // Under durable_within, the background hears of in-place bytes as they
  // are written, a MiB at a time (tell_background_in_place).
  static constexpr uint64_t kTellInPlaceEvery = uint64_t(1) << 20;
  // Raw data, one vector write: pieces in the order HDF5 gives them.
  // Appended to the data log (RawMode::kLog, and kAuto for pieces that are
  // small or overwrite), else by the write-ahead rule, nearby pieces
  // gathered into sieve spans as HDF5's sieve buffer would.
  Status write_raw(std::span<const RawPiece> pieces, uint32_t tag);
  Status write_raw(uint64_t addr, std::span<const std::byte> data, uint32_t tag) {
    RawPiece piece{addr, data};
    return write_raw({&piece, 1}, tag);
  }
  // HDF5's truncate: the file's size becomes `size`.  Takes effect at commit.
  Status set_size(uint64_t size);
  uint64_t size() const override { return image_.logical_size; }
  // A durable transaction boundary.  Afterwards, a crash brings the file back
  // exactly as it is now.  (Serial files and rank 0; under MPI every rank
  // runs collective_commit instead.)
  Status commit();
  // How a commit that failed before its COMMIT reports it, serial or
  // collective (design.md §7).
  static Status commit_failed(const Status& why) { return why.prefixed("commit failed: "); }
  // And one that failed after it, in `what` (the checkpoint that followed,
  // the ranks' steps after the COMMIT): the commit stands, and recovery
  // finds it, so a program told its H5Fflush failed must not take the file
  // to stand at the commit before.
  Status failed_after_commit(const Status& why, const std::string& what) const;
  static constexpr char kMadeThenFailed[] = " of this session is made; ";
  // The most bytes of a write one record takes, in the journal (WRITE) or
  // the data log (a pattern): a longer write, such as HDF5 rewriting a
  // dataset of gigabytes in one H5Dwrite, is cut into records of this size,
  // all in its transaction.  Under the format's kMaxPayload, and small
  // enough that recovery's reads of one record stay short.
  static constexpr uint64_t kMaxRecordBytes = uint64_t(64) << 20;
  // Commit, checkpoint, remove the journal: the file is a plain file again.
  // With materialize_at_close false: commit and leave the file in log form.
  Status close();
  // Takes the file's write permission while this handle writes it
  // (write_protection.cc).  Serial writers do so at open; under MPI rank 0
  // does once every rank has opened the file for writing.
  Status protect_from_writers();

  // --- an MPI rank's part (rank_steps.cc; the steps: collective_commit.h) ---
  Result<PreparedIndex> step1_follower_prepare(bool closing);
  Result<OwnerWord> step1_owner_hear(const PreparedIndex& followers, bool closing);
  Status step1_follower_sync();
  Result<OwnerWord> step2_owner_commit(const PreparedIndex& followers, bool closing);
  void step2_follower_hear(OwnerWord said) { sync_next_commit_ = said.next_durable; }
  Status step3_follower_follow();
  // Buckets are split by the data logs that touch them, which every rank
  // knows alike once it has followed the journal to the commit: those of
  // one rank's log alone are that rank's; the rest (several logs) are rank
  // 0's.  No rank reads another's data log but rank 0.
  Status step4_write_raw_share();
  // The overlay over every rank's share, then a new generation or, when
  // `closing`, the journal's removal; with nothing to write, a close if
  // `closing`.
  Status step5_owner_materialize(bool materialize, bool closing);
  // This rank's staged bytes in place now, at the end of a raw write in
  // collective mode: HDF5 fills chunks in one (each rank its share) and
  // writes their data in the next, perhaps from another rank, and the fill
  // must land first.
  Status place_staged();
  // Before a raw read: takes in what the other ranks appended to their data
  // logs since the last call (peer_logs.h).
  Status refresh_peers();
  // Poisons the file with `why` unless it is poisoned already (guarded()
  // does this with any error; collective_commit with another rank's): the
  // file stays at its last commit.  Returns the poison.
  Status fail_stop(const Status& why);

  const OpenReport& report() const { return report_; }
  // What this session has done (H5Fget_journal_stats).
  struct Stats {
    uint64_t commits = 0;
    uint64_t checkpoints = 0;
    uint64_t early_write_backs = 0;  // early_write_back.cc
    uint64_t raw_bytes_logged = 0;
    uint64_t raw_index_bytes = 0;
    uint64_t raw_index_peak_bytes = 0;
    uint64_t durable_commits = 0;  // of `commits`, durable
  };
  Stats stats() const;
  // Waits until every commit so far is durable (H5Fwait_journal_durable).
  // Under MPI every rank calls it (collective_wait_durable): a follower's
  // makes its own writes durable; then rank 0's, after the followers', its
  // file and journal.
  Status wait_durable();
  Status wait_durable_after_followers();
  // The HDF5 file, its superblock guarded on disk while this writer works
  // (superblock_guard.h); reads through it see HDF5's bytes, and every write
  // into it is checked against the write-ahead rule (write_ahead_file.h).
  SuperblockGuardFile& base() { return *base_; }
  const std::string& journal_path() const { return opts_.journal_path; }
  // "uring" or "sync" (io_uring may be unavailable); "none" without a journal open.
  const char* journal_engine() const { return journal_ ? journal_->engine_name() : "none"; }

 private:
  JournaledFile(std::unique_ptr<File> base, JournalOptions opts, bool read_only);
  Status patch(uint64_t addr, std::span<const std::byte> bytes) override;

  // --- fail-stop (journaled_file.cc) ---
  // Runs `work` unless the file is poisoned; poisons it with any error
  // `work` returns.  A read-only handle is never poisoned: it commits
  // nothing, so there is nothing to protect.
  template <typename Work>
  auto guarded(Work&& work) -> decltype(work());
  // Why a write is refused before it starts (read-only, passive), or ok.
  Status write_refusal() const;
  // The error of a passive handle, or of an open refused for `holder`'s lock.
  Status busy_error(std::optional<int> holder = std::nullopt) const;
  // "PATH is open for writing through h5journal by WHO (JOURNAL is locked)".
  static std::string held_for_writing(const std::string& path, const std::string& journal_path,
                                      std::optional<int> holder);
  // An exclusive create refused with EEXIST, naming the writer that holds
  // the file's journal lock, if one does (open.cc).
  static Status name_the_writer(const std::string& path, const JournalOptions& opts, const Status& exists);
  Status refuse_if_bound_elsewhere();

  // --- opening and recovery (journaled_file.cc) ---
  Status open_for_read();
  Status open_for_write(bool truncated);
  Status refuse_volatile_journal();
  Status open_as_follower();
  // The journal's writer lock (exclusive).
  Status lock_journal();
  // A writer that owns the journal of a file a crashed writer left
  // write-protected gives the permission back and opens it for writing.
  Status take_over_protected_file();
  Status drop_new_journal(bool existed, const Status& why);
  // Empties the file and its journal for H5F_ACC_TRUNC, under the lock.
  Status truncate_for_create();
  Status refuse_journal_of_file_gone();
  // Ok if the journal `holder` writes may be this file's; else the refusal
  // that names whose it is (open.cc).
  Status refuse_journal_of_another_file(std::optional<int> holder, bool made_here);
  // The name of the file a journal was written for; nullopt: it has no header.
  static std::optional<std::string> written_for(File& journal);
  // "JOURNAL is the journal of "NAME", which WHO has open for writing", and
  // what journal_path to use instead.
  static std::string journal_of_another_file_text(const std::string& journal_path, const std::string& name,
                                                  std::optional<int> holder);
  Status start_writing();
  // Reads, validates and binds an existing journal; fills plan_.
  Status load_journal();
  Status look_past_damage(JournalReader& reader, ReplayPlan& plan) const;
  Result<ReplayPlan> without_unacknowledged(ReplayPlan plan, const DataLogAccess& data_log);
  ReplayPlan recovered_durable(ReplayPlan plan, uint64_t marked);
  Status replay_into_base();
  // Before the file's committed bytes are rewritten (a checkpoint, a close, a
  // recovery): with `wait`, live readers get up to reader_wait to leave;
  // then their snapshots expire.  end_rewrite once the new generation is in place.
  Status begin_rewrite(bool wait);
  // begin_rewrite's wait, told to on_reader_wait.
  Status wait_for_readers();
  Status end_rewrite();
  // Whether a due checkpoint is put off for live readers (live_readers.h).
  Result<bool> defer_checkpoint();
  // The error for a file created empty whose journal never committed.
  Status never_committed() const;
  Status start_generation(uint64_t generation, uint64_t first_txn, std::array<uint8_t, 16> uuid);
  // The header of a generation starting now, over the file as it is.
  Result<JournalHeader> next_header(uint64_t generation, uint64_t first_txn, std::array<uint8_t, 16> uuid);
  std::string target_name() const;
  // The name a journal of `path`, opened with `opts`, records.
  static std::string target_name_for(const std::string& path, const JournalOptions& opts);
  Status bind();
  Status read_layers(uint64_t addr, std::span<std::byte> out);
  // Journal bytes: through the writer's ring, which may hold them yet.
  Status read_journal(uint64_t offset, std::span<std::byte> out);

  // --- routing writes (write_routing.cc) ---
  // The in-place threshold (journal_options.h).  Where a commit waits for
  // no sync (durable=false, durable_within) journaling a write saves none,
  // only costs its bytes twice: every write in new space goes in place.
  uint64_t inplace_min() const { return commits_wait_for_disk() ? opts_.inplace_min_bytes : 0; }
  bool commits_wait_for_disk() const { return opts_.ring.durable && opts_.durable_within.count() == 0; }
  // durable_within: a thread makes the commits durable (background_sync.h).
  bool commits_synced_in_background() const { return opts_.ring.durable && opts_.durable_within.count() > 0; }
  // write() with the in-place threshold given: the part below the protected
  // end journaled, the rest in place unless shorter than inplace_min.
  Status write_by_rule(uint64_t addr, std::span<const std::byte> data, uint32_t tag, uint64_t inplace_min);
  Status write_raw_by_mode(std::span<const RawPiece> pieces, const PieceShape& shape, uint32_t tag);
  Status write_piece_under_mpi(const RawPiece& p, uint32_t tag);
  Status write_sieved(std::span<const RawPiece> pieces, const PieceShape& shape, uint32_t tag);
  // Pieces `in_place` picks are written by `write_in_place`; the runs of
  // pieces between them go to the data log, in order.
  Status log_all_but(std::span<const RawPiece> pieces, const std::function<bool(const RawPiece&)>& in_place,
                     const std::function<Status(const RawPiece&)>& write_in_place);
  // Raw pieces into the data log, as few patterns as their layout allows.
  Status append_raw(std::span<const RawPiece> pieces);
  Status append_pattern(const RawPattern& pattern, Gather bytes);
  // Whether a pattern about to be logged is staged rather than indexed.
  bool stages(const RawPattern& pattern) const;
  // Into a range HDF5 allocated and never wrote, declared at the last
  // commit: in place, with a PLACED record (unwritten_space.h).
  Status write_placed(uint64_t addr, std::span<const std::byte> data);
  // Straight into the file, made durable at the next commit.
  Status write_in_place(uint64_t addr, std::span<const std::byte> data);
  // Appends [addr, addr + data.size()) to the open transaction and the overlay.
  Status journal_bytes(uint64_t addr, std::span<const std::byte> data, uint32_t tag);
  // journal_bytes for the runs that differ from a copy of the block's last
  // write, if one is kept (last_writes.h); else for all of it.
  Status journal_changes(uint64_t addr, std::span<const std::byte> data, uint32_t tag);
  Status resize(uint64_t size);
  // The staged bytes below `limit` in place (not yet durable).
  Status place_staged_below(uint64_t limit);

  // --- commit, checkpoint, close (commit.cc) ---
  // The COMMIT record, durable, after the writes it covers; no checkpoint.
  Status commit_transaction();
  Status commit_declaring(const std::vector<UnwrittenSpace::Range>& unwritten,
                          const std::vector<InPlacePayload>* in_place = nullptr);
  // --- the commit of one flush (commit_in_one_flush.cc) ---
  // The INPLACE records naming this transaction's in-place bytes, if this
  // commit may be made in one flush; nullopt if the file must be synced
  // before the COMMIT is written.
  Result<std::optional<std::vector<InPlacePayload>>> in_place_records(
      const std::vector<UnwrittenSpace::Range>& unwritten);
  // An extent's pieces that only the file holds in this commit's image.
  std::vector<InPlaceWrites::Extent> only_in_file(const InPlaceWrites::Extent& e,
                                                  const std::vector<UnwrittenSpace::Range>& unwritten) const;
  // Who wrote this journal, for anyone reading it after a crash.
  std::string session_note() const;
  // After a checkpoint: the unwritten ranges declared again (a commit).
  Status declare_unwritten_again();
  // A commit point (commit(), and a close in log form): the commit, then
  // the first superblock written back, or a checkpoint if one is due.
  Status commit_point();
  // Early write-back or a checkpoint, as the commit point calls for.
  Status write_back_after_commit();
  // --- a journal removed while the file is open (removed_journal.cc) ---
  // Whether the journal's last name is gone, looked at once a millisecond
  // at most.
  Result<bool> journal_removed();
  // The file written to the commit just made and closed as a plain HDF5
  // file; the error that stops the writer.
  Status close_for_removed_journal();
  // The directory entries of the journal and of the file, at the first commit.
  Status sync_names();
  // durable_within: the thread that makes commits durable (open.cc); a
  // follower's syncs the file alone, without `journal`.
  Status start_background_sync(bool journal);
  // What the background made durable, no further than every MPI follower's
  // syncs (followers_durable.h).
  BackgroundSync::Durable background_durable() const { return followers_durable_.cap(background_->durable()); }
  // Tells the background of the bytes written in place, once a MiB of them
  // piles up, so that its syncs take them before their commit
  // (background_sync.h, WRITTEN AHEAD).  Below that a commit tells them:
  // W4's steps of 8 KiB take no lock a write.
  void tell_background_in_place();
  // Of the bytes a commit's INPLACE records name, those the writer has not
  // told: the last MiB's worth, and the followers'.  `told` counts a
  // rewrite again, so it may pass what the records name.
  static uint64_t untold_of(std::span<const InPlacePayload> in_place, uint64_t told) {
    uint64_t named = bytes_named(in_place);
    return named - std::min(named, told);
  }
  // A follower's step 1 under durable_within: its in-place bytes named in
  // `mine.in_place` and left to its thread, or durable now.
  Status hand_over_writes(PreparedIndex& mine);
  // Its in-place bytes and data log durable, for this commit.
  Status sync_own_writes();
  // Rank 0's step 2: the commit, with the followers' records; its word.
  Status commit_with_followers(const PreparedIndex& followers);
  Result<OwnerWord> owner_word(bool closing);
  // Whether INPLACE records can vouch for every rank's in-place bytes in
  // this commit (OwnerWord::sync_now).
  bool ranks_may_vouch(const PreparedIndex& followers) const;
  // Every commit so far durable: the file, the data log and the journal
  // synced in that order (H5Fwait_journal_durable, and before a rewrite).
  Status make_commits_durable();
  // What a COMMIT written in the background's care records as the file's
  // size: no more than the bytes recovery can find checked or synced.
  uint64_t size_vouched_for(uint64_t size, const std::vector<InPlacePayload>& in_place) const;
  // The file's own size for a COMMIT record (0 under MPI).
  Result<uint64_t> recorded_file_size();
  // kApplyingXattr around writes of committed bytes into the file.
  Status mark_applying();
  Status unmark_applying();
  // Staged bytes placed, then pending_ durable: before a COMMIT names them.
  Status make_writes_durable(bool first_commit);
  // The bytes the generation logged, which a checkpoint bounds.
  uint64_t logged_bytes() const;
  bool checkpoint_due() const;
  bool checkpoint_waits_for_sync();
  bool first_superblock_only_journaled();
  // Committed overlay extents into the file before the checkpoint
  // (early_write_back.cc): due every checkpoint_bytes / kEarlyWriteBacks.
  static constexpr uint64_t kEarlyWriteBacks = 16;
  // A serial writer whose commits are durable when they return writes back
  // early, and keeps what it has not written back (ImageLayers::
  // not_in_file).  Under durable_within it would write over the in-place
  // bytes of transactions waiting unverified (first_txn_missing_in_place),
  // so it keeps no second map either: a first superblock the journal alone
  // holds is a checkpoint there.
  bool writes_back_early() const { return commits_wait_for_disk() && !read_only_ && sharing_.writes_back_early(); }
  bool all_commits_durable() const { return txn_ && durable_txn_ >= txn_->records().last_committed_txn(); }
  // Whether the generation's first superblock or its growth may be written
  // back now: its raw layer empty (early_write_back.cc).
  bool may_write_back_early() const;
  bool early_write_back_due() const;
  Status write_back_early();
  // False, with nothing written, if a live reader holds a snapshot.
  Result<bool> try_write_back_early();
  Status checkpoint();
  // checkpoint()'s end, once the image is durable in the file.
  Status end_checkpoint();
  Status close_materialized();
  // close_materialized()'s part after the close's COMMIT.
  Status materialize();
  Status close_in_log_form();
  // close()'s end, once the image is in the file.
  Status end_close();
  // A close's journal, once the image is durable: the next generation's
  // header, with no record, written back for the file's sync to flush.
  Status retire_journal();
  // The session's records ended by a clean close: the ring goes back to
  // the process's pool for its next file (buffer_pool.h).
  void end_records();
  // The journal, the data logs and the readers file removed; with
  // `sync_journal` the journal's removal durable before the logs go, with
  // `sync_logs` theirs after.
  Status remove_journal_files(bool sync_journal, bool sync_logs);
  // The journal's and readers file's names made the ones they have now,
  // where a rename of their directory moved them.
  void follow_moved_journal();
  // A close that committed nothing, of a file that held nothing committed:
  // the image straight into the file, its signature last
  // (close_uncommitted.cc).
  bool may_close_uncommitted();
  Status close_uncommitted();
  std::optional<std::pair<FileId, FileId>> names_lead_to();
  static constexpr size_t kSignatureBytes = 8;
  // The image of `raw` (this generation's extents, or a layer already
  // written) and the overlay over it, into the file; not synced.
  Status write_image_to_base(const RawLayer& raw);
  // write_image_to_base's writes alone, the file set to `size`.
  Status apply_to_base(const RawLayer& raw, uint64_t size);
  // The header of the generation the journal holds now: this session's, or
  // while an open replays, the crashed session's; nullptr before either.
  const JournalHeader* header_on_disk() const {
    return txn_ ? &txn_->header() : plan_ ? &plan_->summary.header : nullptr;
  }

  // --- an MPI rank (rank_steps.cc) ---
  uint64_t generation() const { return follower_ ? follower_->header().generation : txn_->header().generation; }
  // The transaction a data-log record belongs to.
  uint64_t current_txn() const { return follower_ ? follower_->open_txn() : txn_->records().open_txn(); }
  // Follower: starts following the journal's current generation.
  Status follow_generation();
  Status catch_up();

  // The files.
  std::unique_ptr<WriteAheadFile> base_;  // refers to image_ and unwritten_
  std::unique_ptr<File> journal_;
  // The journal this writer opened, as the file system names files: its
  // name may lead elsewhere by the close (remove_journal_files).
  std::optional<FileId> journal_id_;
  std::unique_ptr<Transaction> txn_;  // serial and rank 0, while writing: this generation's records
  JournalOptions opts_;
  bool read_only_;
  FileSharing sharing_;  // what sharing the file with other ranks changes
  DataLogSet data_logs_;

  // The image (image_layers.h, staged_writes.h).
  ImageLayers image_;
  StagedWrites staged_;
  UnwrittenSpace unwritten_;  // serial writers only: space allocated this session, never written
  LastWrites last_writes_;    // serial writers only: copies of metadata blocks as the image reads them
  std::vector<LastWrites::Run> changed_runs_;  // journal_changes', kept between calls
  // Every apply's buffers: the process's (JournalOptions::apply_buffers),
  // or the file's own, kept between calls.
  ApplyBuffersPool own_apply_buffers_;
  ApplyBuffersPool& apply_buffers() { return opts_.apply_buffers ? *opts_.apply_buffers : own_apply_buffers_; }
  // write_sieved's span, kept between calls and never zeroed: a strided
  // write brings a batch a call, and a fresh zeroed MiB each cost 3% of it.
  std::unique_ptr<std::byte[]> sieve_span_;
  // append_raw's pieces, kept between calls: a strided pass of 8-byte
  // elements brings 32,768 of them, and a vector grown afresh each call
  // cost 30,000 page faults in 16 MiB of stride 64 (0.35 s here).
  std::vector<std::span<const std::byte>> raw_gathered_;

  // What open found.
  OpenReport report_;
  // Live readers (live_readers.h): the writer's readers file; a read-only
  // handle's snapshot.
  std::unique_ptr<ReadersFile> readers_;
  Snapshot snapshot_;
  Status write_denied_;  // base_ is open read-only: opening it for writing failed with this
  bool file_made_ = false;  // this open created the file: any journal found is another file's (open.cc)
  std::optional<ReplayPlan> plan_;

  // The session.
  PendingWrites pending_;           // outside the journal since the last commit (both roles)
  bool first_commit_done_ = false;  // journal's directory entry and the binding are durable
  bool one_flush_ = false;          // commits may be made in one flush (open: commit_in_one_flush.cc)
  bool shares_flush_ = false;       // durable, and one cache flush covers the file and the journal
  // The last transaction whose bytes outside the journal (in place, in the
  // data log) are durable, as this writer knows it; and as the journal's
  // last COMMIT records it (kDurableTxn).
  uint64_t durable_txn_ = 0;
  uint64_t durable_txn_recorded_ = 0;
  uint64_t durable_commits_ = 0;     // of stats_.commits, durable (all, unless durable_within or durable=false)
  uint64_t file_size_recorded_ = 0;  // what the last COMMIT recorded as the file's size
  // durable_within: a due checkpoint waits for the thread's syncs, rounds
  // of them, each through the commit named here (checkpoint_waits_for_sync).
  static constexpr int kCheckpointSyncRounds = 2;
  int checkpoint_sync_rounds_ = 0;
  uint64_t checkpoint_sync_txn_ = 0;
  bool base_empty_ = false;         // the file holds nothing committed yet (created empty): first_superblock_only_journaled
  std::optional<std::pair<FileId, FileId>> names_at_open_;  // the file's and the journal's, while the signature is held
  bool binding_set_ = false;        // this session set the binding attribute
  bool applying_marked_ = false;    // this session set kApplyingXattr
  uint64_t written_back_at_ = 0;    // the generation's bytes at its last early write-back
  std::chrono::steady_clock::time_point next_removal_look_{};  // journal_removed()
  bool closed_ = false;
  Stats stats_;
  Status failed_;  // fail-stop: the first error that poisoned the file

  // MPI.
  std::unique_ptr<JournalFollower> follower_;  // a follower's view of rank 0's journal
  uint64_t followers_log_bytes_ = 0;           // rank 0: the followers' data logs, as of the last commit
  PeerLogs peers_;
  // durable_within: the collective commits so far; whether this one is
  // durable on every rank (rank 0's word, OwnerWord::next_durable, or a
  // close), and the next; rank 0's followers' durability and INPLACE
  // records for this commit.
  uint64_t commit_seq_ = 0;
  bool durable_now_ = false;
  bool sync_next_commit_ = true;  // the first commit binds the file
  FollowersDurable followers_durable_;
  std::vector<InPlacePayload> followers_in_place_;
  bool followers_synced_ = true;
  bool left_to_background_ = false;  // a follower's writes of this commit, named in `in_place`

  // durable_within: makes commits durable in the background.  Last: its
  // thread stops before anything it syncs goes.
  std::unique_ptr<BackgroundSync> background_;
};

template <typename Work>
auto JournaledFile::guarded(Work&& work) -> decltype(work()) {
  if (!failed_.is_ok()) return failed_;
  auto result = work();
  if (!result && !read_only_) return fail_stop(status_of(result));
  return result;
}

}  // namespace h5j
