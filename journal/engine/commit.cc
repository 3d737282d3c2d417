// Commit points, checkpoints and close.
//
// A commit makes durable, in this order: staged bytes and in-place writes
// (the file), the data log, then the journal up to its COMMIT record
// (transaction.h, THE ORDER OF DURABILITY).  A checkpoint writes the image into the file and syncs it, and only
// then starts a new journal generation, whose header makes the old records
// stale.  A close does the same and removes the journal instead.
//
// Worked example, a crash inside a checkpoint: the image is half written
// into the file when the process dies.  The journal still holds the old
// generation, whose committed transactions recovery replays over the half-
// written bytes (replay is idempotent), so the file comes back at the last
// commit, as it would without the checkpoint.
#include <unistd.h>

#include <array>

#include "journaled_file.h"

namespace h5j {

std::string JournaledFile::session_note() const {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  // Where no lock other processes see worked, the journal says so: a second
  // writer elsewhere was not refused (file_lock.h).
  return "h5journal session: pid " + std::to_string(getpid()) + " on " + host + ", engine " +
         journal_->engine_name() + (report_.unlocked ? ", locked in this process only" : "");
}

Status JournaledFile::commit() {
  if (follower_) return Status(Code::kInvalid, "an MPI follower commits through rank 0 (collective_commit)");
  if (!txn_) return write_refusal();  // read-only, or passive: no journal of its own to commit to
  return guarded([&] { return commit_point(); });
}

// A failure after the COMMIT (writing committed bytes back into the file,
// or a checkpoint) leaves that commit made: recovery finds it.
Status JournaledFile::commit_point() {
  if (Status s = commit_transaction(); !s) return commit_failed(s);
  auto removed = journal_removed();
  if (!removed || *removed)
    return failed_after_commit(removed ? close_for_removed_journal() : removed.status(), "the writer's journal");
  Status s = write_back_after_commit();
  return s ? s : failed_after_commit(s, "the checkpoint after it");
}

Status JournaledFile::failed_after_commit(const Status& why, const std::string& what) const {
  if (why.message().find(kMadeThenFailed) != std::string::npos) return why;  // said once (a close inside step 5)
  // Under MPI every rank counts the job's collective commits; a serial
  // writer, which has none, its own.
  uint64_t made = commit_seq_ != 0 ? commit_seq_ : stats_.commits;
  return why.prefixed("commit " + std::to_string(made) + kMadeThenFailed + what + " failed: ");
}

Status JournaledFile::write_back_after_commit() {
  if (!checkpoint_due()) {
    if (!first_superblock_only_journaled()) return early_write_back_due() ? write_back_early() : Status::ok();
    if (may_write_back_early()) {  // unless a reader holds a snapshot
      auto written = try_write_back_early();
      if (!written || *written) return written.status();
    }
  }
  if (checkpoint_waits_for_sync()) return Status::ok();
  auto deferred = defer_checkpoint();
  if (!deferred || *deferred) return deferred.status();
  H5J_RETURN_IF_ERROR(begin_rewrite(/*wait=*/false));
  return checkpoint();
}

// Under durable_within a checkpoint first makes every commit durable
// (write_image_to_base).  Begun as soon as it is due, it would sync up to
// an interval's writes while its commit waits: 17 to 26 ms each for W4's
// 8 KiB steps, where a commit takes 17 us.  So, unless every commit is
// durable already, it has the thread sync now, up to kCheckpointSyncRounds
// times, each sync through the last commit before it, while the writer
// goes on and the journal grows; its own sync then covers only what was
// written during the last.  Each round syncs what was written during the
// one before, a fraction of it while the writer writes slower than the
// disk: W4's 8 KiB steps wrote 450 MB/s, and the rounds took 37 ms, then
// 13, and the checkpoint's own sync 3 to 6.  It waits no longer once the
// generation holds twice checkpoint_bytes.
bool JournaledFile::checkpoint_waits_for_sync() {
  if (!background_) return false;
  const uint64_t durable = background_durable().txn, last = txn_->records().last_committed_txn();
  if (durable >= last) return false;  // nothing left to sync
  if (durable >= checkpoint_sync_txn_ && checkpoint_sync_rounds_ < kCheckpointSyncRounds) {
    checkpoint_sync_txn_ = last;
    ++checkpoint_sync_rounds_;
    background_->hurry();
  }
  if (durable >= checkpoint_sync_txn_) return false;  // the rounds are done
  return logged_bytes() < 2 * opts_.checkpoint_bytes;
}

// A file created empty holds nothing on disk until its committed bytes are
// written into it, so the first commit that holds HDF5's superblock writes
// them: from then on the file passes netCDF's format check, which reads the
// signature itself, and readers without the driver find it guarded
// (superblock_guard.h).
//
// With durable=false and durable=100ms new space goes in place
// (write_routing.cc), the superblock with it, unless an earlier commit
// holds its bytes.  Where it went in place nothing more is written, and
// the file counts as written (base_empty_ cleared) from then on.  With
// durable=true HDF5's short metadata writes are journaled.  Where the
// journal alone holds the superblock, a serial writer under durable=true
// writes it back early (commit_point,
// early_write_back.cc), with no sync: the generation started on an empty
// file, so no fingerprint sample lies under it, and the journal holds it
// until a checkpoint.  Else, or with a live reader holding a snapshot,
// the commit is a checkpoint (put off for the reader as any is): two more
// flushes, the image's and the new generation's header's.

bool JournaledFile::first_superblock_only_journaled() {
  if (!base_empty_ || !first_commit_done_) return false;
  const uint64_t at = base_->superblock_offset();
  std::array<std::byte, kSuperblockHead> head{};
  if (image_.logical_size < at + head.size() || !read_layers(at, head) || !is_hdf5_head(head)) return false;
  base_empty_ = image_.overlay.intersects(at, at + head.size());  // else it went in place
  return base_empty_;
}

// A due checkpoint waits while live readers hold snapshots, so that a
// short read (an h5dump, a plot) is not cut off: for reader_wait after a
// reader registered (live_readers.h, THE WRITER'S RULE).  The writer goes
// on; only the journal grows.
Result<bool> JournaledFile::defer_checkpoint() {
  return readers_ ? readers_->put_off_checkpoint(opts_.reader_wait) : Result<bool>(false);
}

// A close or a recovery waits for the readers present, for reader_wait.
//
// Committed bytes are written back only over the file this writer left:
// one whose guarded superblock is gone was cut or rewritten by another
// process (as root, permission bits stop nobody: a program without the
// driver creating the file with H5F_ACC_TRUNC empties it before HDF5's lock
// refuses it).  Writing the image over what remains would leave a file
// that passes for whole; the writer stops instead, and the file stays for
// h5recover to refuse by its size and fingerprint.
Status JournaledFile::begin_rewrite(bool wait) {
  if (sharing_.records_file_identity()) {
    auto intact = base_->guard_intact();
    if (!intact) return intact.status();
    if (!*intact)
      return Status(Code::kBaseMismatch,
                    base_->path() + " lost the superblock this writer guarded: another process cut or rewrote it "
                                    "while the driver wrote it (as root, a program without the driver that "
                                    "created it with H5F_ACC_TRUNC). Nothing more is written to it");
  }
  base_->begin_rewrite();
  if (!readers_) return Status::ok();
  if (wait) H5J_RETURN_IF_ERROR(wait_for_readers());
  return readers_->begin_rewrite();
}

Status JournaledFile::wait_for_readers() {
  auto waiting = [this] {
    if (opts_.on_reader_wait)
      opts_.on_reader_wait("live readers have " + base_->path() + " open through h5journal: waiting up to " +
                           seconds_text(opts_.reader_wait) + " (reader_wait) for them to close");
  };
  auto waited = readers_->wait_for_readers(opts_.reader_wait, waiting);
  if (!waited) return waited.status();
  if (!waited->readers || !opts_.on_reader_wait) return Status::ok();
  opts_.on_reader_wait(waited->outlasted ? "live readers still had " + base_->path() + " open after " +
                                               seconds_text(waited->waited) + ": their snapshots expire"
                                         : "the live readers of " + base_->path() + " closed after " +
                                               seconds_text(waited->waited));
  return Status::ok();
}

Status JournaledFile::end_rewrite() {
  base_->end_rewrite();
  return readers_ ? readers_->end_rewrite() : Status::ok();
}

// Every log counts: a checkpoint also bounds the data logs (the followers'
// too) and the raw index, whose memory grows with the DATA records in the
// journal.
uint64_t JournaledFile::logged_bytes() const {
  return txn_->records().generation_bytes() + data_logs_.generation_bytes() + followers_log_bytes_;
}

bool JournaledFile::checkpoint_due() const { return txn_ && logged_bytes() >= opts_.checkpoint_bytes; }

Status JournaledFile::commit_transaction() {
  if (background_) H5J_RETURN_IF_ERROR(background_->failure());
  if (!txn_ || !txn_->dirty()) return Status::ok();
  H5J_RETURN_IF_ERROR(txn_->begin());
  // The first commit makes the journal's directory entry durable, and only
  // then sets the file's binding attribute (made durable by the fsync
  // below): a crash never leaves a binding naming a journal whose name might
  // not have reached the disk.
  //
  // The superblock is guarded then too (superblock_guard.h), before this
  // COMMIT can be durable: from the first commit the journal may hold what
  // the file lacks.  A file created empty gets its superblock, guarded, at
  // the first commit that holds one (first_superblock_only_journaled).
  if (!first_commit_done_) {
    if (opts_.ring.durable) H5J_RETURN_IF_ERROR(sync_names());
    // Under durable_within HDF5's new objects went in place, the superblock
    // among them (held back until now: open.cc).  Were the binding durable
    // and the journal's header not, recovery would take the file for one
    // committed before this session and let a reader have it, half written;
    // with the header, it finds a journal that committed nothing.
    if (opts_.ring.durable && !commits_wait_for_disk()) H5J_RETURN_IF_ERROR(journal_->sync_data());
    if (!binding_set_) H5J_RETURN_IF_ERROR(bind());
    H5J_RETURN_IF_ERROR(base_->guard());
    H5J_RETURN_IF_ERROR(base_->release_signature());  // guarded, in one write
  }
  H5J_RETURN_IF_ERROR(place_staged_below(UINT64_MAX));
  std::vector<UnwrittenSpace::Range> unwritten = unwritten_.declare(image_.logical_size);
  auto in_place = in_place_records(unwritten);
  if (!in_place) return in_place.status();
  if (!*in_place) H5J_RETURN_IF_ERROR(make_writes_durable(!first_commit_done_));
  // The file's bytes start on their way to the disk while the journal's
  // are written back: the one flush then waits for less.
  else if (one_flush_) base_->start_writeback(0, 0);
  if (!followers_synced_) {  // MPI: the COMMIT names their bytes too, and leaves them to the background
    if (!*in_place) in_place->emplace();
    (*in_place)->insert((*in_place)->end(), followers_in_place_.begin(), followers_in_place_.end());
  }
  H5J_RETURN_IF_ERROR(commit_declaring(unwritten, *in_place ? &**in_place : nullptr));
  const uint64_t told = base_->in_place().told_bytes();
  base_->forget_in_place();
  if (!first_commit_done_) base_->name_in_place();
  first_commit_done_ = true;
  image_.committed_size = image_.logical_size;
  ++stats_.commits;
  if (background_ && *in_place) {
    background_->written(txn_->records().last_committed_txn(), stats_.commits, untold_of(**in_place, told),
                         txn_->records().last_commit_sealed());
  } else if (opts_.ring.durable) {
    durable_commits_ = stats_.commits;
    if (background_) background_->made_durable({durable_txn_, durable_commits_});
  }
  return Status::ok();
}

// The open transaction's COMMIT, durable, with ZERO records declaring
// `unwritten`, what HDF5 allocated and never wrote: zeros at this commit,
// whatever later writes put there in place (unwritten_space.h).  With
// `in_place`, a commit of one flush: the file's fdatasync, after the
// COMMIT is written back, flushes both (transaction.h).
//
// The COMMIT names the last transaction whose bytes outside the journal are
// durable (kDurableTxn): this one if they were synced before it, the one
// before it in a commit of one flush.  Recovery checks the INPLACE records
// of the transactions after it.
Status JournaledFile::commit_declaring(const std::vector<UnwrittenSpace::Range>& unwritten,
                                       const std::vector<InPlacePayload>* in_place) {
  auto file_size = recorded_file_size();
  if (!file_size) return file_size.status();
  uint64_t txn = txn_->records().open_txn();
  bool in_background = in_place && background_;
  if (!in_place) durable_txn_ = txn;  // make_writes_durable ran
  if (in_background) {
    durable_txn_ = std::max(durable_txn_, background_durable().txn);
    *file_size = size_vouched_for(*file_size, *in_place);
  }
  using Sync = JournalWriter::CommitSync;
  H5J_RETURN_IF_ERROR(txn_->commit(pending_, in_place, unwritten, {image_.logical_size, *file_size, durable_txn_},
                                   !in_place ? Sync::kFlush : in_background ? Sync::kWritten : Sync::kWriteBack,
                                   [this] { return readers_ && readers_->readers_present(); }));
  durable_txn_recorded_ = durable_txn_;
  file_size_recorded_ = *file_size;
  if (in_background) {
    pending_.committed_unsynced();
    return Status::ok();
  }
  if (!in_place) return Status::ok();
  H5J_RETURN_IF_ERROR(make_writes_durable(false));
  durable_txn_ = txn;
  return Status::ok();
}

// A COMMIT whose transaction may be left out needs the file no longer than
// the bytes a recovery that keeps it has found: those it synced, the ranges
// its INPLACE records name (checked), and what an earlier COMMIT recorded
// (a transaction kept keeps those before it).  Recording less only weakens
// recovery's test of a file cut short (file_match.h); more would fail it.
uint64_t JournaledFile::size_vouched_for(uint64_t size, const std::vector<InPlacePayload>& in_place) const {
  uint64_t vouched = std::max(base_->synced_size().value_or(0), file_size_recorded_);
  for (const InPlacePayload& p : in_place) vouched = std::max(vouched, p.address + p.length);
  return std::min(size, vouched);
}

// A new generation holds none of the old one's ZERO records, so the ranges
// they declared would take no write in place until the next commit: the
// piece of a dataset written in parts after each checkpoint was journaled,
// and a piece of checkpoint_bytes or more then made every later piece a
// checkpoint of its own.  So the generation declares them again at once,
// in a transaction of its own (nothing else changed: the image is the
// checkpoint's), while the rewrite still holds readers off: a snapshot of
// the new generation without it would read whatever later lands in place
// there.  A close, which ends the journal, does not.
Status JournaledFile::declare_unwritten_again() {
  txn_->forbid_placed();
  if (closed_) return Status::ok();
  std::vector<UnwrittenSpace::Range> unwritten = unwritten_.declare(image_.logical_size);
  if (unwritten.empty()) return Status::ok();
  return commit_declaring(unwritten);
}

// The file's own size, for recovery to notice a file cut short behind the
// journal's back (check_file_matches).  Under MPI another rank's writes of
// the next transaction may already lengthen the file without being durable,
// so nothing is recorded there.
Result<uint64_t> JournaledFile::recorded_file_size() {
  if (!sharing_.records_file_identity()) return uint64_t(0);
  return base_->size_for_commits();
}

// kApplyingXattr (format.h): recovery compares every fingerprint sample
// while it is absent, and only the samples no committed record covers
// while it is set, since the writes it announces may have rewritten the
// others.  Durable before the first such write.
//
// It also names the last transaction whose bytes outside the journal are
// durable: the rewrite may lay a later transaction's journaled bytes over
// an earlier one's in-place bytes, which recovery must then not check
// (first_txn_missing_in_place).  Only the journal's last transaction is
// left to check when its last COMMIT names the one before: a rewrite never
// writes into that one's ranges.
//
// Nothing needs marking where neither holds: a generation without samples
// (its file held less than one when it started: a file created empty)
// whose journal leaves at most its last transaction unverified; and under
// MPI, where no fingerprint is taken.  The sync is then saved.
Status JournaledFile::mark_applying() {
  if (!sharing_.records_file_identity() || applying_marked_) return Status::ok();
  const JournalHeader* h = header_on_disk();
  assert(h != nullptr);
  bool several_unverified = durable_txn_ > durable_txn_recorded_ + 1;
  if (h->fingerprint.empty() && !several_unverified) return Status::ok();
  auto set = base_->set_xattr(kApplyingXattr, encode_applying(*h, durable_txn_));
  if (!set) return set.status();
  if (*set && opts_.ring.durable) H5J_RETURN_IF_ERROR(base_->sync_all());
  applying_marked_ = true;
  return Status::ok();
}

// Also removes a marker a crashed writer left: this session's writes of
// committed bytes, if any, are durable by now.
Status JournaledFile::unmark_applying() {
  applying_marked_ = false;
  return sharing_.records_file_identity() ? base_->remove_xattr(kApplyingXattr) : Status::ok();
}

// Every name a commit depends on: the journal's, and the file's own when the
// journal lives in another directory (journal_path=DIR/).  A file created in
// this session whose name never reached the disk would vanish at a power
// loss while its journal says committed.
Status JournaledFile::sync_names() {
  H5J_RETURN_IF_ERROR(opts_.fs->sync_dir(opts_.journal_path));
  if (split_directory(base_->path()).first == split_directory(opts_.journal_path).first) return Status::ok();
  return opts_.fs->sync_dir(base_->path());
}

// In-place bytes must be durable before the COMMIT that covers them can be;
// likewise the data log before the COMMIT whose DATA records index it.  The
// first commit syncs the file whole (the binding attribute with it).
Status JournaledFile::make_writes_durable(bool first_commit) {
  H5J_RETURN_IF_ERROR(place_staged_below(UINT64_MAX));
  return pending_.make_durable(*base_, data_logs_, opts_.ring.durable, first_commit);
}

// With durable=true every commit is durable already.  With durable=false
// nothing is, and this makes the commits so far so: the in-place bytes and
// the data log, then the journal, as a durable commit orders them.
Status JournaledFile::make_commits_durable() {
  if (background_) {
    // Records of the open transaction may follow an unsealed COMMIT: sealed
    // now, the sync publishes every commit (background_sync.h, SEALS).
    if (txn_) H5J_RETURN_IF_ERROR(txn_->records().seal_last_commit());
    H5J_RETURN_IF_ERROR(background_->sync_now());
    BackgroundSync::Durable d = background_durable();
    durable_txn_ = std::max(durable_txn_, d.txn);
    durable_commits_ = std::max(durable_commits_, d.commits);
    return Status::ok();
  }
  if (opts_.ring.durable || !txn_) return Status::ok();
  if (follower_ || sharing_.publishes_records())
    return Status(Code::kUnsupported, "waiting for durability under MPI needs durable=true");
  H5J_RETURN_IF_ERROR(place_staged_below(UINT64_MAX));
  if (data_logs_.appending()) H5J_RETURN_IF_ERROR(data_logs_.writer().sync());
  H5J_RETURN_IF_ERROR(sync_in_commit_order(*base_, *journal_));
  durable_commits_ = stats_.commits;
  return Status::ok();
}

Status JournaledFile::wait_durable() {
  return guarded([&] { return make_commits_durable(); });
}

JournaledFile::Stats JournaledFile::stats() const {
  Stats s = stats_;
  s.raw_index_bytes = image_.raw.memory_bytes();
  s.durable_commits = background_ ? std::max(durable_commits_, background_durable().commits) : durable_commits_;
  return s;
}

// Under durable_within the commits it writes may be in the page cache only:
// durable first (design.md §9a), which mark_applying then records.
Status JournaledFile::write_image_to_base(const RawLayer& raw) {
  if (background_) H5J_RETURN_IF_ERROR(make_commits_durable());
  H5J_RETURN_IF_ERROR(mark_applying());
  return apply_to_base(raw, image_.committed_size);
}

// The copies of rewritten blocks hold what the image reads (last_writes.h,
// THE INVARIANT): written from there, their runs' records are not read back.
Status JournaledFile::apply_to_base(const RawLayer& raw, uint64_t size) {
  auto kept = apply_buffers().take();
  return apply_image(
      raw, image_.overlay_to_apply(), size,
      [this](uint64_t off, std::span<std::byte> out) { return read_journal(off, out); },
      [this](uint32_t log, uint64_t off, std::span<std::byte> out) { return data_logs_.read(log, off, out); }, *base_,
      opts_.progress, kept.get(), [this](uint64_t addr, uint64_t len) { return last_writes_.held(addr, len); });
}

Status JournaledFile::checkpoint() {
  assert(!txn_->open() && !txn_->dirty() && staged_.empty());
  H5J_RETURN_IF_ERROR(write_image_to_base(image_.raw));
  if (opts_.ring.durable) H5J_RETURN_IF_ERROR(base_->sync_data());
  return end_checkpoint();
}

// The image is durable in the file: a new generation, whose journal and
// data logs start empty.
Status JournaledFile::end_checkpoint() {
  // The file is synced: what commits left to the background is durable.
  if (background_) H5J_RETURN_IF_ERROR(pending_.make_durable(*base_, data_logs_, /*durable=*/false, false));
  image_.start_generation();
  base_empty_ = false;
  unwritten_.forget_declared();  // the new generation has no ZERO records for them
  ++stats_.checkpoints;
  const JournalHeader& h = txn_->header();
  H5J_RETURN_IF_ERROR(start_generation(h.generation + 1, txn_->records().next_txn(), h.uuid));
  H5J_RETURN_IF_ERROR(bind());
  H5J_RETURN_IF_ERROR(unmark_applying());
  followers_log_bytes_ = 0;  // their logs are emptied as they follow
  // Before readers are let in: every snapshot of the new generation holds
  // the declaring commit, whatever goes in place after it.
  H5J_RETURN_IF_ERROR(declare_unwritten_again());
  return end_rewrite();
}

Status JournaledFile::close() {
  if (closed_) return Status::ok();
  closed_ = true;
  if (follower_) {  // rank 0 commits, materializes and removes every log
    data_logs_.stop();
    return failed_;
  }
  snapshot_.release();  // a reader's snapshot holds off the writer no longer
  return guarded([&] {
    if (!txn_) return Status::ok();  // read-only or passive: nothing to do
    txn_->records().stop_zeros_ahead();  // the close's commit is the journal's last
    return opts_.materialize_at_close ? close_materialized() : close_in_log_form();
  });
}

// The close's commit is never a checkpoint: the close writes the image into
// the file itself, and a checkpoint first would cost two more flushes (its
// image, then the new generation's header) and, for a file created empty,
// the marker's too.  A job that writes a file and closes it, with no
// commit before, commits nothing to the journal (close_uncommitted.cc).
Status JournaledFile::close_materialized() {
  if (may_close_uncommitted()) return close_uncommitted();
  if (Status s = commit_transaction(); !s) return commit_failed(s);
  Status s = materialize();
  return s ? s : failed_after_commit(s, "the close after it");
}

// The image into the file, then the journal retired and removed.
Status JournaledFile::materialize() {
  if (first_commit_done_) {
    H5J_RETURN_IF_ERROR(begin_rewrite(/*wait=*/true));
    H5J_RETURN_IF_ERROR(write_image_to_base(image_.raw));
  }
  return end_close();
}

// The journal and data log stay, bound to the file as after a crash, and
// the superblock's guard says so (superblock_guard.h): h5recover tells this
// file from a crashed one by it, and readers without the driver refuse it.
Status JournaledFile::close_in_log_form() {
  H5J_RETURN_IF_ERROR(commit_point());
  // A close is durable whatever the setting: under durable_within the
  // journal it leaves holds commits the background has not synced yet.
  if (background_) H5J_RETURN_IF_ERROR(make_commits_durable());
  H5J_RETURN_IF_ERROR(base_->guard(/*log_form=*/true));
  if (opts_.ring.durable) H5J_RETURN_IF_ERROR(base_->sync_data());
  end_records();
  data_logs_.stop();
  return Status::ok();
}

// The image is in the file (not yet durable).
//
// A session that never bound the file (it committed nothing and found no
// journal) leaves nothing a crash could misread: just drop the journal.
// Otherwise the order matters: file contents durable first, then the
// guard's and the binding's removal, then the journal's, then the data
// logs'.  A journal without a binding is replayed harmlessly (idempotent);
// a binding without a journal would be reported as a missing journal; a
// journal whose data log is gone cannot be replayed.  A data log a crash
// left alone after its journal went is emptied by the next session that
// journals this file, and removed at its close if that session has a rank
// of its number; one a larger job left stays, harmless, as its records
// name a generation no journal has.  Under MPI rank 0 removes every rank's,
// after the last commit that needed them.
//
// Where one cache flush covers the file and the journal, the journal is
// retired before the binding's sync, which flushes its new header too:
// a journal the crash keeps after its removal then holds no transaction,
// and its removal needs no directory sync.  So a close costs the image's
// flush and the binding's, where the journal's removal would add a third.
//
// Worked example.  A file committed at generation 3 is closed; its image
// is durable.  Retiring writes generation 4's header, no record after it,
// into slot 0, and writes it back; the binding's fsync flushes it.  The
// journal is unlinked and the power fails before the directory reaches
// the disk.  The journal comes back: generation 4, no transaction, its
// fingerprint taken from the closed file.  The next open replays nothing
// and starts generation 5.  Had the power failed before the fsync
// completed, the journal would hold generation 3 or 4: the first replays
// the image's own bytes again, the second nothing.
Status JournaledFile::end_close() {
  closed_ = true;
  bool bound = binding_set_ || report_.journal_found;
  bool durable = opts_.ring.durable;
  bool synced = durable && (bound || first_commit_done_);
  // The guard comes off once the image is durable, and before the journal
  // goes: a plain reader then reads exactly the last commit.
  if (synced) H5J_RETURN_IF_ERROR(base_->sync_data());
  H5J_RETURN_IF_ERROR(base_->unguard());
  H5J_RETURN_IF_ERROR(base_->restore_write_permission());
  if (bound) H5J_RETURN_IF_ERROR(remove_binding(*base_));
  bool retired = synced && bound && shares_flush_;
  if (retired) H5J_RETURN_IF_ERROR(retire_journal());
  if (synced) H5J_RETURN_IF_ERROR(base_->sync_all());
  return remove_journal_files(/*sync_journal=*/durable && bound && !retired, /*sync_logs=*/durable);
}

Status JournaledFile::retire_journal() {
  const JournalHeader& h = txn_->header();
  auto next = next_header(h.generation + 1, txn_->records().next_txn(), h.uuid);
  if (!next) return next.status();
  return txn_->records().retire(*next);
}

// Moved away with its directory while the file was open (mv run/ run.old/),
// the journal's name leads nowhere, or to another writer's journal if the
// job was started again in a new run/.  The system knows the name the
// journal has now, and its files are removed there; a leftover journal
// would make h5recover --check report a file that closed whole as needing
// recovery.
void JournaledFile::follow_moved_journal() {
  if (!journal_ || leads_to(*opts_.fs, opts_.journal_path, journal_id_)) return;
  std::string now = journal_->current_name();
  if (now.empty() || !leads_to(*opts_.fs, now, journal_id_)) return;
  opts_.journal_path = now;
  if (readers_) readers_->moved_to(readers_path_for(now));
}

void JournaledFile::end_records() {
  if (txn_) txn_->records().give_back_ring();
  txn_.reset();
}

// Only by names that still lead to this writer's journal: another writer's
// journal may have taken its name (above), whose commits a removal by name
// would take.  Where the system cannot tell where the journal went, it is
// left there, beside its file, holding only what the close has put in the
// file (retired, when the close could retire it), and so are its readers
// file and data logs.
Status JournaledFile::remove_journal_files(bool sync_journal, bool sync_logs) {
  follow_moved_journal();
  end_records();
  std::vector<std::unique_ptr<File>> handles = data_logs_.take_files();
  handles.push_back(std::move(journal_));
  // The background sync's own handle on the journal (durable=100ms) may be
  // the journal's last.
  if (background_)
    for (auto& handle : background_->stop()) handles.push_back(std::move(handle));
  // With a closing thread they stay open until their names are gone, so
  // that their last close, which frees their blocks, is the thread's.
  if (opts_.closing_thread == nullptr) handles.clear();
  if (leads_elsewhere(*opts_.fs, opts_.journal_path, journal_id_)) return unmark_applying();
  H5J_RETURN_IF_ERROR(opts_.fs->remove(opts_.journal_path));
  if (sync_journal) H5J_RETURN_IF_ERROR(opts_.fs->sync_dir(opts_.journal_path));
  // The applying marker goes last: while the journal may still be found
  // with the generation the close applied, its fingerprint predates the
  // image just written, so the marker must be there.  (A retired journal's
  // generation was fingerprinted after the image.)  If a crash loses this
  // removal, the marker stays on a clean file, and the next session's first
  // checkpoint or close removes it.
  H5J_RETURN_IF_ERROR(unmark_applying());
  // A session that found a journal may be left data logs by a job of more
  // ranks: it lists them.  Any other removes its own ranks' by name.
  H5J_RETURN_IF_ERROR(report_.journal_found
                          ? remove_data_logs(*opts_.fs, opts_.journal_path, sync_logs)
                          : remove_data_logs_of_ranks(*opts_.fs, opts_.journal_path, opts_.ranks, sync_logs));
  for (auto& handle : handles)
    if (handle) opts_.closing_thread->close_later(std::move(handle));
  // Last: a reader that finds the journal finds the readers file too.
  if (!readers_) return Status::ok();
  H5J_RETURN_IF_ERROR(readers_->close_for_readers());
  return opts_.fs->remove(readers_->path());
}

}  // namespace h5j
