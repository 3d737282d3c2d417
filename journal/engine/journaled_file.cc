// A journaled file's life apart from opening (open.cc) and writing
// (write_routing.cc, commit.cc): fail-stop, loading and replaying a
// journal, starting a generation, and reading through the image.
#include "journaled_file.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "file_match.h"

namespace h5j {
namespace {

void random_bytes(void* out, size_t n) {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    ssize_t got = ::getrandom(p, n, 0);
    if (got <= 0) continue;  // EINTR; getrandom does not fail otherwise once seeded
    p += got;
    n -= size_t(got);
  }
}

}  // namespace

JournaledFile::JournaledFile(std::unique_ptr<File> base, JournalOptions opts, bool read_only)
    : base_(std::make_unique<WriteAheadFile>(std::move(base), image_, unwritten_)),
      opts_(std::move(opts)),
      read_only_(read_only),
      sharing_(opts_.role),
      data_logs_(*opts_.fs, opts_.journal_path, opts_.data_log, opts_.engine, read_only),
      image_(opts_.raw_bucket_shift, writes_back_early()),
      peers_(opts_.data_log, opts_.ranks, opts_.raw_bucket_shift) {}

JournaledFile::~JournaledFile() {
  txn_.reset();  // waits for the journal's writes in flight before the buffers go
  data_logs_.stop();
}

// --- fail-stop ---------------------------------------------------------------

// A file changed behind the writer's back (kBaseMismatch) no longer holds
// its last commit, and the message must not say it does.
Status JournaledFile::fail_stop(const Status& why) {
  if (!failed_.is_ok()) return failed_;
  std::string where = why.code() == Code::kBaseMismatch ? "" : "; " + base_->path() + " stays at its last commit";
  if (why.message().ends_with(where)) where.clear();  // another rank's poison, told to this one
  failed_ = Status(why.code() == Code::kNoSpace ? Code::kNoSpace : Code::kFailStopped, why.message() + where,
                   why.sys_errno());
  return failed_;
}

Status JournaledFile::write_refusal() const {
  if (read_only_) return Status(Code::kInvalid, base_->path() + " is open read-only");
  if (report_.passive) return busy_error();
  return Status::ok();
}

std::string JournaledFile::held_for_writing(const std::string& path, const std::string& journal_path,
                                            std::optional<int> holder) {
  std::string who = holder ? "process " + std::to_string(*holder) : "another handle or process";
  return path + " is open for writing through h5journal by " + who + " (" + journal_path + " is locked)";
}

Status JournaledFile::busy_error(std::optional<int> holder) const {
  return Status(Code::kBusy, held_for_writing(base_->path(), opts_.journal_path, holder), EWOULDBLOCK);
}

// --- loading a journal, and generations -------------------------------------

Status JournaledFile::bind() {
  H5J_RETURN_IF_ERROR(write_binding(*base_, txn_->header(), opts_.journal_path));
  binding_set_ = true;
  return Status::ok();
}

std::string JournaledFile::target_name() const { return target_name_for(base_->path(), opts_); }

std::string JournaledFile::target_name_for(const std::string& path, const JournalOptions& opts) {
  return opts.target_name.empty() ? journal_target_name(path) : opts.target_name;
}

Status JournaledFile::load_journal() {
  auto reader = JournalReader::open(*journal_);
  if (!reader) {
    // A journal whose header never became durable held no commit.
    if (reader.status().code() == Code::kMissing) {
      auto size = base_->size();
      if (!size) return size.status();
      return *size == 0 ? never_committed() : Status::ok();
    }
    return Status(Code::kCorrupt, reader.status().message() + ": journal_path names a file that is not a journal, "
                                  "or this is a damaged journal, whose file h5recover recovers (h5recover " +
                                  base_->path() + ")");
  }
  const JournalHeader& header = (*reader)->header();
  H5J_RETURN_IF_ERROR(check_journal_belongs(*base_, header, opts_.journal_path, target_name()));
  DataLogAccess data_log;
  data_log.matches = [this](const Record& r) { return data_logs_.matches(r); };
  data_log.records_of = [this, &header](uint64_t first, uint64_t last) {
    return data_logs_.records_of(header, first, last);
  };
  auto plan = plan_replay(**reader, opts_.recovery_mode, data_log);
  const std::string end_detail = (*reader)->end_detail();  // before a look past damage moves the reader
  if (plan) {
    Status past = look_past_damage(**reader, *plan);
    if (!past) plan = past;
  }
  if (plan) plan = without_unacknowledged(std::move(*plan), data_log);
  if (!plan) return plan.status().prefixed(journal_->path() + ": ");
  // The first generation of a file created empty, with no commit: the last
  // commit is "before the create".  Replaying that would empty the file,
  // and its bytes are all anyone has of the run, so it is left as it is.
  if (header.generation == 1 && header.base_size == 0 && plan->summary.committed_txns == 0) return never_committed();
  // Salvage writes to a copy and takes what it can get.
  if (opts_.recovery_mode != RecoveryMode::kSalvage) H5J_RETURN_IF_ERROR(check_file_matches(*base_, opts_.journal_path, header, *plan));
  report_.replayed_txns = plan->summary.committed_txns;
  report_.last_txn = plan->summary.last_committed_txn;
  report_.discarded_records = plan->summary.discarded_records;
  report_.generation = plan->summary.header.generation;
  report_.bytes_applied = plan->bytes_to_apply;
  report_.logical_size = plan->logical_size;
  report_.end = plan->summary.end;
  report_.end_detail = plan->unacknowledged_txn == 0 ? end_detail
                                                      : "transaction " + std::to_string(plan->unacknowledged_txn) + ": " +
                                                            stream_end_name(StreamEnd::kInPlaceMissing);
  report_.skipped = plan->skipped;
  report_.past_stop = plan->past_stop;
  report_.rebuilt_txns = plan->rebuilt_txns;
  // Recovery is needed if any transaction committed, or if the file is not at
  // the size the generation started from (uncommitted in-place writes).
  auto size = base_->size();
  if (!size) return size.status();
  bool needs_replay = plan->summary.committed_txns > 0 || *size != plan->logical_size;
  // A journal with a valid header means the file was not closed cleanly, even
  // when nothing waits in it (a crash right after a checkpoint): recovery's
  // fix-ups (after_replay) are still due.
  report_.recovered = true;
  if (needs_replay && !opts_.recover_on_open)
    return Status(Code::kNeedsRecovery,
                  base_->path() + " has " + std::to_string(plan->summary.committed_txns) +
                      " committed transaction(s) in journal " + opts_.journal_path +
                      " that are not yet in the file (recovery=refuse); run h5recover " + base_->path());
  plan_ = std::move(*plan);
  return Status::ok();
}

// A point-in-time replay that stopped at damage, a damaged record or a
// transaction whose data fails its CRC, would drop the committed
// transactions after it.  When they show the stop had been durable
// (commits_past_stop.h), that is damage, and a writer, which would retire
// the journal, refuses instead.
Status JournaledFile::look_past_damage(JournalReader& reader, ReplayPlan& plan) const {
  using PastDamage = JournalOptions::PastDamage;
  if (opts_.recovery_mode != RecoveryMode::kPointInTime) return Status::ok();
  if (opts_.past_damage == PastDamage::kRefuseWhenWriting && read_only_) return Status::ok();
  CommitsPastStop& past = plan.past_stop;
  if (plan.refused_txn == 0) {
    if (clean_end(plan.summary.end)) return Status::ok();
    past.at = plan.summary.end_offset;
    past.why = plan.summary.end;
    H5J_RETURN_IF_ERROR(find_commits_past_damage(reader, plan.summary.last_committed_txn + 1, past));
  }
  past.stopped_txn = std::max(plan.summary.last_committed_txn + 1, plan.summary.header.first_txn);
  if (opts_.past_damage == PastDamage::kLeaveOut || !past.proves_damage()) return Status::ok();
  std::string what = plan.refused_txn != 0
                         ? "transaction " + std::to_string(past.stopped_txn) + "'s raw data in the data log fails its CRC"
                         : std::string(stream_end_name(past.why)) + " at offset " + std::to_string(past.at) +
                               ", in transaction " + std::to_string(past.stopped_txn);
  std::string last = plan.summary.committed_txns > 0 ? "transaction " + std::to_string(plan.summary.last_committed_txn)
                                                     : "the start of this journal";
  return Status(Code::kCorrupt,
                "journal damaged in the middle: " + what + ", whose commit had returned, and " + past.text() +
                    " follow it: damage, not a crash's unfinished writes. Nothing was changed. 'h5recover --mode "
                    "salvage --output COPY " + base_->path() + "' recovers every transaction that validates into "
                    "COPY; 'h5recover --output COPY " + base_->path() + "' recovers the file as of " + last +
                    ", before the damage");
}

// A transaction whose in-place bytes never reached the disk never became
// durable whole (transaction.h), and no later one can stand without it: the
// plan is made again without them.  The applying marker, set before a
// rewrite of committed bytes began, may know more of what was durable than
// the journal's last durable COMMIT (format.h, THE APPLYING MARKER).
Result<ReplayPlan> JournaledFile::without_unacknowledged(ReplayPlan plan, const DataLogAccess& data_log) {
  uint64_t marked = 0;
  if (!plan.unverified_in_place.empty()) {
    auto marker = base_->get_xattr(kApplyingXattr);
    if (!marker) return marker.status();
    if (*marker) marked = applying_durable_txn(**marker, plan.summary.header);
  }
  auto missing = first_txn_missing_in_place(plan, *base_, std::max(plan.durable_txn, marked));
  if (!missing) return missing.status();
  if (*missing == 0) return recovered_durable(std::move(plan), marked);
  auto reader = JournalReader::open(*journal_);
  if (!reader) return reader.status();
  auto without = plan_replay(**reader, opts_.recovery_mode, data_log, *missing);
  if (!without) return without.status();
  return recovered_durable(std::move(*without), marked);
}

// Every transaction `plan` applies is durable or was found whole in the
// file.  What stays on disk to say so, once the replay cuts the journal
// back to them: their own COMMITs' word, and the applying marker's
// (`marked`).  mark_applying names the rest before the replay writes.
ReplayPlan JournaledFile::recovered_durable(ReplayPlan plan, uint64_t marked) {
  durable_txn_ = plan.last_applied_txn;
  durable_txn_recorded_ = std::min(std::max(plan.durable_txn, marked), durable_txn_);
  return plan;
}

Status JournaledFile::never_committed() const {
  // The writer held HDF5's signature back (superblock_guard.h) and left
  // before its first commit, so the file held no HDF5 file then.  One that
  // holds it now, unguarded, was written whole since by a program without
  // the driver (sec2 as root passes over the write protection): the journal
  // holds nothing of it, and the file is not to be removed.
  auto plain = base_->holds_plain_superblock();
  if (!plain) return plain.status();
  if (*plain)
    return Status(Code::kNeverCommitted,
                  base_->path() + " holds an HDF5 file written without h5journal since its journal " +
                      opts_.journal_path +
                      " was left by a writer that stopped before its first commit. That journal holds nothing of "
                      "the file: h5recover --discard-journal " + base_->path() +
                      " removes it and keeps the file as it is");
  // A reader cannot tell a writer still at work from one that died.
  if (read_only_)
    return Status(Code::kNeverCommitted,
                  base_->path() + " has no commit yet: the process that created it has not reached its first "
                                  "H5Fflush or H5Fclose (if it is still running, open the file again once it has; if "
                                  "it stopped, there is nothing to recover)");
  std::string readers = readers_path_for(opts_.journal_path);
  bool has_readers = opts_.fs->exists(readers);
  return Status(Code::kNeverCommitted,
                base_->path() + " was never committed: the process that created it stopped before its first "
                                "H5Fflush, or before its H5Fclose finished, so there is nothing to recover. " +
                    base_->path() + ", its journal " + opts_.journal_path +
                    (has_readers ? " and its readers file " + readers + " are" : " is") +
                    " left as they are; remove them, or create the file again");
}

Status JournaledFile::replay_into_base() {
  // What a killed writer left may be whole in the page cache only: a
  // COMMIT written but not yet synced, a checkpoint's new header, the
  // transactions found whole in the file rather than durable by the
  // journal's word (durable_within).  A power loss during the replay would
  // take them back and leave the file with their bytes over an older
  // commit's.  So what the replay stands on is made durable first, in
  // commit order, before anything is cut or rewritten (mark_applying then
  // names the last transaction).
  if (opts_.ring.durable) {
    H5J_RETURN_IF_ERROR(base_->sync_data());
    H5J_RETURN_IF_ERROR(data_logs_.sync_every_log());
    H5J_RETURN_IF_ERROR(journal_->sync_data());
  }
  // Past its last commit the journal holds nothing recovery needs (the zeros
  // written ahead of the records, an uncommitted tail, stale records).
  // Giving that space back first lets a full disk take the replayed bytes.
  auto journal_size = journal_->size();
  if (!journal_size) return journal_size.status();
  if (*journal_size > plan_->summary.committed_end)
    H5J_RETURN_IF_ERROR(journal_->truncate(plan_->summary.committed_end));
  image_.take(std::move(plan_->raw), std::move(plan_->overlay));
  image_.committed_size = image_.logical_size = plan_->logical_size;
  H5J_RETURN_IF_ERROR(write_image_to_base(image_.raw));
  image_.start_generation();
  if (opts_.after_replay) H5J_RETURN_IF_ERROR(opts_.after_replay(*this));
  if (opts_.ring.durable) return base_->sync_data();
  return Status::ok();
}

Result<JournalHeader> JournaledFile::next_header(uint64_t generation, uint64_t first_txn,
                                                 std::array<uint8_t, 16> uuid) {
  if (uuid == std::array<uint8_t, 16>{}) random_bytes(uuid.data(), uuid.size());  // a new journal's identity
  JournalHeader h;
  h.generation = generation;
  const JournalHeader* old = header_on_disk();
  const uint32_t old_salt = old ? old->salt : 0;
  do random_bytes(&h.salt, sizeof h.salt);
  while (h.salt == old_salt);
  h.uuid = uuid;
  h.block_size = opts_.ring.durable ? kBlockSize : kUnalignedCommits;
  h.first_txn = first_txn;
  h.created_ns = now_ns();
  h.base_size = image_.committed_size;
  h.target_name = target_name();
  if (sharing_.records_file_identity()) {
    auto fingerprint = fingerprint_file(*base_, h.base_size);
    if (!fingerprint) return fingerprint.status();
    h.fingerprint = std::move(*fingerprint);
  }
  return h;
}

Status JournaledFile::start_generation(uint64_t generation, uint64_t first_txn, std::array<uint8_t, 16> uuid) {
  auto next = next_header(generation, first_txn, uuid);
  if (!next) return next.status();
  const JournalHeader& h = *next;
  image_.journal_high_water = 0;
  written_back_at_ = 0;
  // The new generation's transactions may be numbered as the old one's
  // were; none of them is durable yet, and all of the old one's are (a
  // checkpoint or a replay made them so).
  durable_txn_ = durable_txn_recorded_ = first_txn - 1;
  checkpoint_sync_rounds_ = 0;
  checkpoint_sync_txn_ = 0;
  if (background_) background_->new_generation(first_txn);
  if (txn_) {
    H5J_RETURN_IF_ERROR(txn_->start_generation(h));
    return data_logs_.appending() ? data_logs_.writer().reset(h) : Status::ok();
  }
  // Reusing a journal that held records: the new header must be durable
  // before any record of the new generation.  A fresh journal's header
  // becomes durable with its first commit.
  bool reused = report_.journal_found;
  auto w = JournalWriter::start(*journal_, h, opts_.ring, reused && opts_.ring.durable);
  if (!w) return w.status();
  if (commits_synced_in_background()) (*w)->stop_zeros_ahead();  // a sync covers many commits (JournalWriter::reserve)
  txn_ = std::make_unique<Transaction>(std::move(*w), session_note(), sharing_.publishes_records());
  if (!sharing_.keeps_data_log(opts_.raw_mode)) return Status::ok();
  return data_logs_.start(h, /*fresh=*/!reused, opts_.ring);
}

// --- reading -----------------------------------------------------------------

Status JournaledFile::read(uint64_t addr, std::span<std::byte> out) {
  // Without the journal a read could miss committed bytes: refuse rather than
  // serve a wrong view.  (HDF5 never reads through its tentative handle.)
  if (report_.passive) return busy_error();
  // A failed read poisons the file too: HDF5 may carry on with a metadata
  // cache that missed what it could not read, and must not commit that.
  // A reader's read that fails may have failed because its snapshot is
  // gone (a data log emptied by a checkpoint): it is told so.
  return guarded([&] {
    Status read = read_layers(addr, out);
    if (!snapshot_.live()) return read;
    Status holds = snapshot_.check(report_.last_txn);
    return holds ? read : holds;
  });
}

// The layers of image_layers.h, bottom up, then the patches of a read-only
// recovery.
Status JournaledFile::read_layers(uint64_t addr, std::span<std::byte> out) {
  if (follower_) H5J_RETURN_IF_ERROR(catch_up());
  // Under MPI no rank knows the size the others' writes reached: HDF5
  // reads below its EOA, and the file's own end zero-fills the rest.
  uint64_t limit = sharing_.read_limit(image_.logical_size);
  uint64_t visible = addr >= limit ? 0 : std::min<uint64_t>(out.size(), limit - addr);
  auto read_data_log = [this](uint32_t log, uint64_t off, std::span<std::byte> o) { return data_logs_.read(log, off, o); };
  Status status;
  image_.overlay.for_each_piece(addr, visible, [&](uint64_t a, uint64_t n, std::optional<uint64_t> src) {
    if (!status) return;
    auto dst = out.subspan(a - addr, n);
    if (src == ExtentMap::kZeroSource) {
      std::fill(dst.begin(), dst.end(), std::byte(0));
      return;
    }
    if (src) {
      status = read_journal(*src, dst);
      return;
    }
    auto got = base_->read_at(a, dst);
    if (!got) {
      status = got.status();
      return;
    }
    std::fill(dst.begin() + ptrdiff_t(*got), dst.end(), std::byte(0));  // past the physical end
    status = staged_.lay_onto(a, dst);
    if (status) status = image_.raw.lay_onto(a, dst, read_data_log);
  });
  if (status && !peers_.empty()) status = peers_.lay_onto(addr, out.first(visible), data_logs_);
  H5J_RETURN_IF_ERROR(status);
  std::fill(out.begin() + ptrdiff_t(visible), out.end(), std::byte(0));  // past the logical end
  snapshot_.lay_patches_onto(addr, out);
  return Status::ok();
}

Status JournaledFile::read_journal(uint64_t offset, std::span<std::byte> out) {
  return txn_ ? txn_->records().read(offset, out) : read_exact(*journal_, offset, out);
}

Status JournaledFile::patch(uint64_t addr, std::span<const std::byte> bytes) {
  if (read_only_) {
    snapshot_.patch(addr, bytes);
    return Status::ok();
  }
  return base_->write_at(addr, bytes);
}

}  // namespace h5j
