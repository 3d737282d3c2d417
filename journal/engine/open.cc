// Opening a file: for reading (a snapshot, or a passive handle), for
// writing (the locks, a takeover of a crashed writer's protected file, a
// truncating create, recovery of what the journal holds), or as an MPI
// follower (rank_steps.cc).
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "file_lock.h"
#include "file_match.h"
#include "journaled_file.h"

namespace h5j {
namespace {

Status truncate_unless_empty(File& file) {
  auto size = file.size();
  if (!size) return size.status();
  return *size == 0 ? Status::ok() : file.truncate(0);
}

// The base is never opened with O_TRUNC: another process may be writing
// it through the driver, and its committed bytes live partly in place.  A
// truncating open truncates only once it holds the journal's lock
// (open_for_write).  Access::kTruncate opens like O_TRUNC without O_CREAT:
// a missing file is an error.
OpenMode open_mode(Access a) {
  switch (a) {
    case Access::kReadOnly: return OpenMode::kReadOnly;
    case Access::kReadWrite: return OpenMode::kReadWrite;
    case Access::kTruncate: return OpenMode::kReadWrite;
    case Access::kCreate: return OpenMode::kCreate;
    case Access::kCreateTruncate: return OpenMode::kCreate;
    case Access::kCreateExclusive: return OpenMode::kCreateExclusive;
  }
  return OpenMode::kReadOnly;
}

// The base, opened for `access`.  A create by the file's owner (a serial
// writer, or MPI rank 0, whose followers open only once it has) opens
// exclusively first, to learn whether it makes the file: `made` is then
// the file's identity.
Result<std::unique_ptr<File>> open_base(const std::string& path, Access access, const JournalOptions& opts,
                                        std::optional<FileId>& made) {
  OpenMode mode = open_mode(access);
  bool creates = mode == OpenMode::kCreate || mode == OpenMode::kCreateExclusive;
  if (!creates || opts.role == Role::kMpiFollower) return opts.fs->open(path, mode, IoEngine::kSync);
  auto fresh = opts.fs->open(path, OpenMode::kCreateExclusive, IoEngine::kSync);
  if (!fresh && (mode == OpenMode::kCreateExclusive || fresh.status().sys_errno() != EEXIST)) return fresh;
  if (!fresh) return opts.fs->open(path, mode, IoEngine::kSync);
  if (auto id = opts.fs->id(path)) made = *id;
  return fresh;
}

// What a user who never asked for a journal needs to know when one cannot
// be made beside the file: why a writer needs it, and how to put it elsewhere.
Status with_journal_path_hint(const Status& s) {
  switch (s.sys_errno()) {
    case EACCES:
    case EROFS:
      return s.appended(": a writer needs a journal it can create and write, beside the file unless journal_path "
                        "names a directory it can write");
    case ENAMETOOLONG:
      return s.appended(": a writer makes a journal, named as the file with \".jnl\" added unless journal_path "
                        "names another, and that name with \".readers\" added; journal_path can name a shorter one");
    default:
      return s;
  }
}

// A create that fails leaves no file behind, as sec2's failed
// open(O_CREAT) leaves none: a rerun with H5F_ACC_EXCL would otherwise
// hear "File exists" of an empty file.  Only the file this open made, and
// only while it is still empty under its name, and not when another writer
// holds its journal (kBusy): that one opened the file since, and it is its
// own now.  The open's own error is what the caller hears.
void remove_made_file(FileSystem& fs, File& base, FileId made, const Status& why) {
  if (why.code() == Code::kBusy) return;
  auto size = base.size();
  auto id = fs.id(base.path());
  if (size && *size == 0 && id && *id == made) (void)fs.remove(base.path());
}

// A journal_path that cannot hold a journal, a slip in HDF5_DRIVER_CONFIG:
//  - the file itself: the journal's lock would refuse the file's own,
//    naming this process, and a create would write a journal over it;
//  - a directory not ended by '/', which would be opened as the journal;
//  - a device, a FIFO or a socket (journal_path=/dev/null, to do without
//    a journal): commits would go nowhere, and the close would unlink it.
Status refuse_unfit_journal_path(const std::string& path, const JournalOptions& opts) {
  const std::string& journal = opts.journal_path;
  auto journal_id = opts.fs->id(journal);
  auto file_id = journal_id ? opts.fs->id(path) : journal_id;  // no journal: only the names can tell
  bool same = file_id && journal_id ? *file_id == *journal_id : opts.fs->absolute(path) == opts.fs->absolute(journal);
  if (same)
    return Status(Code::kInvalid,
                  path + " not opened: journal_path " + journal + " names the file itself. A journal is a file of "
                  "its own: by default the file's name with \".jnl\" added",
                  EINVAL);
  std::string kind = journal_id ? opts.fs->not_a_regular_file(journal) : std::string();
  if (kind.empty()) return Status::ok();
  std::string hint = kind == "a directory" ? "; end it with '/' to keep each file's journal in that directory"
                                           : ". A writer through h5journal always keeps a journal; without one, "
                                             "open the file with another driver (sec2)";
  return Status(Code::kInvalid, path + " not opened: journal_path " + journal + " is " + kind + ", where a journal "
                "is a regular file" + hint, EINVAL);
}

}  // namespace

// h5py's mode "a" opens for writing and, on any error from a driver that
// is not HDF5's own, creates with H5F_ACC_EXCL: a second copy of a job
// heard only "File exists", where sec2's users hear of the first copy's
// lock.  An exclusive create refused so names the writer that holds the
// journal's lock, as the open for writing did.
Status JournaledFile::name_the_writer(const std::string& path, const JournalOptions& opts, const Status& exists) {
  if (exists.sys_errno() != EEXIST) return exists;
  auto journal = opts.fs->open(opts.journal_path, OpenMode::kReadOnly, IoEngine::kSync);
  if (!journal) return exists;
  std::optional<int> holder = (*journal)->lock_holder();
  if (!holder) return exists;
  std::optional<std::string> name = written_for(**journal);
  if (name && *name != target_name_for(path, opts))
    return Status(exists.code(),
                  exists.message() + ": " + journal_of_another_file_text(opts.journal_path, *name, holder), EEXIST);
  if (*holder == getpid()) return exists;
  return Status(exists.code(), exists.message() + ": " + held_for_writing(path, opts.journal_path, holder),
                EEXIST);
}

Result<std::unique_ptr<JournaledFile>> JournaledFile::open(const std::string& path, Access access,
                                                           const JournalOptions& opts) {
  if (opts.journal_path.empty()) return Status(Code::kInvalid, "no journal path for " + path);
  H5J_RETURN_IF_ERROR(refuse_unfit_journal_path(path, opts));
  if (opts.ring.buffers < 2) return Status(Code::kInvalid, "ring_buffers must be at least 2");
  bool read_only = access == Access::kReadOnly;
  std::optional<FileId> made;
  auto base = open_base(path, access, opts, made);
  // Denied: perhaps write-protected by a writer, live or crashed, which the
  // journal's lock tells apart (open_for_write).
  Status denied = base ? Status::ok() : base.status();
  if (!read_only && denied.sys_errno() == EACCES)
    if (auto readable = opts.fs->open(path, OpenMode::kReadOnly, IoEngine::kSync)) base = std::move(readable);
  if (!base) return access == Access::kCreateExclusive ? name_the_writer(path, opts, base.status()) : base.status();
  std::unique_ptr<JournaledFile> f(new JournaledFile(std::move(*base), opts, read_only));
  f->write_denied_ = denied;
  f->file_made_ = made.has_value();
  auto size = f->base_->size();
  Status s = size ? Status::ok() : size.status();
  if (s) f->image_.logical_size = f->image_.committed_size = *size;
  if (s)
    s = read_only                           ? f->open_for_read()
        : opts.role == Role::kMpiFollower ? f->open_as_follower()
                                          : f->open_for_write(truncates(access) || made.has_value());
  if (s) return f;
  if (made) remove_made_file(*opts.fs, *f->base_, *made, s);
  return s;
}

Status JournaledFile::open_for_read() {
  H5J_RETURN_IF_ERROR(refuse_if_bound_elsewhere());
  auto journal = opts_.fs->open(opts_.journal_path, OpenMode::kReadOnly, IoEngine::kSync);
  if (!journal && journal.status().code() == Code::kMissing)
    return check_binding_not_missing(*base_, opts_.journal_path);  // else a plain file
  if (!journal) return journal.status();
  journal_ = std::move(*journal);
  report_.journal_found = true;
  // This process holding the journal's writer lock: the open is HDF5's
  // tentative second open of a file it writes, passive as a second
  // writer's would be (HDF5 then uses the open file).  Asked of the
  // process's own table: a lock taken to find out would, for its instant,
  // refuse a writer starting in another process.
  if (opts_.reader_in_writer_passive && journal_->locked_by_this_process() &&
      refuse_journal_of_another_file(getpid(), file_made_)) {
    report_.passive = true;
    journal_.reset();
    return Status::ok();
  }
  auto snapshot = Snapshot::load(*opts_.fs, opts_.journal_path, base_->path(), opts_.reader_wait, [this] {
    plan_.reset();
    return load_journal();
  });
  if (!snapshot) return snapshot.status();
  snapshot_ = std::move(*snapshot);
  report_.live_snapshot = snapshot_.live();
  if (!plan_) return Status::ok();
  image_.take(std::move(plan_->raw), std::move(plan_->overlay));
  image_.logical_size = image_.committed_size = plan_->logical_size;
  if (opts_.after_replay && report_.recovered) H5J_RETURN_IF_ERROR(opts_.after_replay(*this));
  return Status::ok();
}

Status JournaledFile::open_for_write(bool truncated) {
  H5J_RETURN_IF_ERROR(refuse_if_bound_elsewhere());
  bool existed = opts_.fs->exists(opts_.journal_path);
  if (!existed && !truncated) H5J_RETURN_IF_ERROR(check_binding_not_missing(*base_, opts_.journal_path));
  if (!existed) H5J_RETURN_IF_ERROR(refuse_volatile_journal());
  auto journal = opts_.fs->open(opts_.journal_path, OpenMode::kCreate, opts_.engine);
  if (!journal && journal.status().code() == Code::kMissing)  // only its directory can be
    return Status(Code::kMissing, "the journal's directory " + split_directory(opts_.journal_path).first +
                                      " does not exist (journal_path): create it, or set journal_path to one that "
                                      "does (" + journal.status().message() + ")", journal.status().sys_errno());
  // Another's journal, this one may not write (a crashed job of another
  // user's): no journal_path would help, as the file is bound to it.
  if (!journal) return existed ? journal.status() : with_journal_path_hint(journal.status());
  journal_ = std::move(*journal);
  if (auto id = opts_.fs->id(opts_.journal_path)) journal_id_ = *id;
  if (Status s = lock_journal(); !s) {
    if (s.code() != Code::kBusy) return drop_new_journal(existed, s);
    // A writer in another process: refused now, so that HDF5 never takes
    // the file for an empty one (its bytes may all be in the journal yet).
    // One in this process: HDF5's tentative second open of a file it has
    // open, which HDF5 closes once it finds the open one (passive).  A
    // holder the system cannot name (no /proc, a lock of fcntl's) is
    // another process's: taken for this one's, h5recover would leave a
    // crashed file unrecovered and report success.
    if (!journal_->locked_by_this_process()) {
      std::optional<int> holder = journal_->lock_holder();  // read from /proc/locks: only for a refusal
      if (holder != getpid()) {
        Status refused = refuse_journal_of_another_file(holder, /*made_here=*/false);
        return refused ? busy_error(holder) : refused;
      }
    }
    H5J_RETURN_IF_ERROR(refuse_journal_of_another_file(getpid(), file_made_));
    report_.passive = true;
    journal_.reset();
    return Status::ok();
  }
  // Readers register with it from now on.  (MPI followers never rewrite.)
  auto readers = ReadersFile::open(*opts_.fs, opts_.journal_path);
  if (!readers) return drop_new_journal(existed, existed ? readers.status() : with_journal_path_hint(readers.status()));
  readers_ = std::move(*readers);
  Status s = existed && file_made_ ? refuse_journal_of_file_gone() : Status::ok();
  if (s && !write_denied_) s = take_over_protected_file();
  // A file being truncated, and its journal, are emptied only once we own
  // the locks: until then either may belong to a live writer.
  if (s && opts_.lock_base) s = opts_.lock_base(*base_);
  // A file this open made, beside a journal it made, holds nothing to empty.
  if (s && truncated && !(file_made_ && !existed)) s = truncate_for_create();
  // Any journal that exists, even an empty one, means the last session did
  // not close cleanly.
  report_.journal_found = existed && !truncated;
  if (s) s = start_writing();
  if (s && sharing_.protects_at_open()) s = protect_from_writers();
  return s ? s : drop_new_journal(existed, s);
}

// A durable journal on storage that a reboot empties (journal_path=/dev/shm/),
// for a file on storage that keeps it: after a power loss the file would
// be at its last checkpoint, or half way through one, and the journal that
// holds the commits since, or completes the checkpoint, gone.  Refused when
// the journal would be made; one already there is used for what it holds.
// Without durability the promise is a process crash's, which tmpfs keeps.
Status JournaledFile::refuse_volatile_journal() {
  if (!opts_.ring.durable) return Status::ok();
  std::string fs = opts_.fs->empties_at_reboot(opts_.journal_path);
  if (fs.empty() || !opts_.fs->empties_at_reboot(base_->path()).empty()) return Status::ok();
  return Status(Code::kInvalid,
                "the journal " + opts_.journal_path + " would be on " + fs + ", which a reboot empties, while " +
                    base_->path() + " is not: a power loss would take the commits that durable promises, and could "
                    "leave the file half checkpointed. Keep the journal on storage that survives a reboot "
                    "(journal_path), or set durable=false, which promises to survive a process crash only",
                EINVAL);
}

// A file written through h5journal under another name, or left so by a
// crash (binding.h, journal_bound_elsewhere): this name's journal would be
// a second one, and a truncating create through it would destroy what the
// other holds, whatever HDF5_USE_FILE_LOCKING says.
Status JournaledFile::refuse_if_bound_elsewhere() {
  if (!opts_.journal_named_after_file) return Status::ok();
  auto elsewhere = journal_bound_elsewhere(*opts_.fs, *base_, opts_.journal_path);
  if (!elsewhere) return elsewhere.status();
  if (!*elsewhere) return Status::ok();
  const std::string& other = (*elsewhere)->path();
  std::optional<int> holder = (*elsewhere)->lock_holder();
  if (holder)
    return Status(Code::kBusy,
                  base_->path() + " is open for writing through h5journal by process " + std::to_string(*holder) +
                      " under another name or journal_path (its journal " + other + " is locked)",
                  EWOULDBLOCK);
  return Status(Code::kNeedsRecovery, base_->path() + " was being written through h5journal under another name " +
                                          "or journal_path, and its journal " + other + " holds what it committed: " +
                                          "open the file as it was opened then, or recover it with h5recover");
}

Status JournaledFile::take_over_protected_file() {
  auto record = base_->get_xattr(kWriteBitsXattr);
  if (!record) return record.status();
  if (!*record) return write_denied_;  // read-only, but not by h5journal
  H5J_RETURN_IF_ERROR(base_->restore_write_permission());
  auto base = opts_.fs->open(base_->path(), OpenMode::kReadWrite, IoEngine::kSync);
  if (!base) return base.status();
  base_ = std::make_unique<WriteAheadFile>(std::move(*base), image_, unwritten_);
  write_denied_ = Status::ok();
  // Protected again at once, so that an open refused further on (a file
  // that never committed) leaves the file as it found it.
  return sharing_.protects_at_open() ? protect_from_writers() : Status::ok();
}

Status JournaledFile::protect_from_writers() {
  auto taken = base_->remove_write_permission();
  if (!taken) return taken.status();
  report_.write_protected = *taken;
  return Status::ok();
}

// A failed open leaves no journal of its own behind: it would hide the
// failure next time, as a crash.
Status JournaledFile::drop_new_journal(bool existed, const Status& why) {
  if (!existed) {
    journal_.reset();
    (void)opts_.fs->remove(opts_.journal_path);
  }
  // A readers file this open made is dropped with it, even beside a
  // journal that stays: one beside a file journal_path named by mistake
  // would be litter.
  if (readers_ && (!existed || readers_->found_empty())) (void)opts_.fs->remove(readers_->path());
  return why;
}

// The journal's lock, or, on a file system without locks, the lock this
// process alone honours (file_lock.h), where the options accept it.
Status JournaledFile::lock_journal() {
  // A deterministic file system has no other process to outwait.
  Status s = try_lock_past_exited_holder(*journal_, LockMode::kExclusive,
                                         opts_.fs->deterministic() ? std::chrono::milliseconds(0)
                                                                   : kExitedHolderPatience);
  if (s.code() != Code::kUnsupported) return s;
  if (opts_.require_locks)
    return lock_required_error(s.prefixed("unable to lock " + opts_.journal_path + ": "));
  report_.unlocked = true;
  return Status::ok();
}

// The create's committed state is the empty file: what the file held is
// discarded by the caller's H5F_ACC_TRUNC, now that no other writer has it.
//
// A file or journal already empty (a new one) is not truncated: ext4
// (auto_da_alloc) takes a truncate to 0 for a rewrite of the file and
// writes back all its dirty pages at close, 0.4 s for 1 GiB.
//
// The journal must be this file's, or one a crash left for a file of this
// name (created again after it was removed): a journal_path naming one
// file for several writes another's journal, which holds commits of its
// own file that this create would destroy.  And it must be a journal: a
// journal_path that names a file of the user's (a typo) finds bytes in the
// header's place that are no header, and a header no write of the
// driver's leaves so (each slot is one sector, written whole or not at
// all) is a damaged journal, whose commits are not this create's to
// destroy either.
Status JournaledFile::truncate_for_create() {
  image_.logical_size = image_.committed_size = 0;
  auto reader = JournalReader::open(*journal_);
  if (!reader && reader.status().code() == Code::kCorrupt)
    return Status(Code::kCorrupt, base_->path() + " not created: " + reader.status().message() +
                                      ": its journal_path names a file that is not a journal, or a damaged one, "
                                      "which the create would overwrite. Set journal_path to another name, or "
                                      "recover a damaged journal's file with h5recover");
  if (reader) {
    Status ours = check_journal_belongs(*base_, (*reader)->header(), opts_.journal_path, target_name());
    if (!ours)
      return Status(ours.code(), base_->path() + " not created: " + ours.message() +
                                     ", whose commits the create would destroy; recover that file with h5recover, "
                                     "or remove the journal");
  }
  H5J_RETURN_IF_ERROR(truncate_unless_empty(*base_));
  // The old journal's binding would make the new one look foreign.
  H5J_RETURN_IF_ERROR(remove_binding(*base_));
  H5J_RETURN_IF_ERROR(base_->remove_xattr(kApplyingXattr));
  return truncate_unless_empty(*journal_);
}

// A crashed session's journal found by a create that made its file: the
// journal's file is no longer under this name.  It was moved or renamed
// after the crash (mv run.h5 run_crashed.h5, then the job run again), or
// deleted.  Its commits are the moved file's: a truncating create would
// destroy them, and any other would replay them into a new, empty file
// (H5F_ACC_EXCL, h5py's mode "a") that is not theirs.  A journal holding
// no COMMIT since its last checkpoint holds nothing that file lacks: any
// create that made its file starts it over, as a truncating one does.  One
// written for a file of another name is refused as foreign further on.
Status JournaledFile::refuse_journal_of_file_gone() {
  auto reader = JournalReader::open(*journal_);
  if (!reader) return Status::ok();  // no header: never committed
  if ((*reader)->header().target_name != target_name()) return Status::ok();
  for (;;) {
    auto record = (*reader)->next();
    if (!record) return record.status();
    if (!record->has_value()) return Status::ok();
    if ((*record)->header.type == RecordType::kCommit) break;
  }
  return Status(Code::kForeign,
                base_->path() + " not created: journal " + opts_.journal_path +
                    " holds the commits of a crashed session of a file named \"" + (*reader)->header().target_name +
                    "\" that is no longer here (moved, renamed or deleted since the crash): recover the moved file with "
                    "h5recover first, or, if it was deleted, remove the journal");
}

// HDF5's tentative second open is of a file this process has open, and
// finds the journal locked by its writer.  A journal_path naming one file,
// given to two files written at once (HDF5_DRIVER_CONFIG applies to every
// file), leads a second file to the first one's journal: taken for the
// tentative open, its handle would be passive, HDF5 would take it for a file
// of its own, and the first write would fail.  It is not the tentative open
// if this open made the file (no handle had it open), or if the journal's
// header names a file of another name.  From another process, only the
// second tells this refusal from a second writer's.
Status JournaledFile::refuse_journal_of_another_file(std::optional<int> holder, bool made_here) {
  std::optional<std::string> name = written_for(*journal_);
  if (!made_here && !(name && *name != target_name())) return Status::ok();
  return Status(Code::kForeign,
                base_->path() + " not opened: " + journal_of_another_file_text(opts_.journal_path, name.value_or(""),
                                                                              holder),
                EWOULDBLOCK);
}

std::optional<std::string> JournaledFile::written_for(File& journal) {
  auto reader = JournalReader::open(journal);
  if (!reader) return std::nullopt;
  return (*reader)->header().target_name;
}

std::string JournaledFile::journal_of_another_file_text(const std::string& journal_path, const std::string& name,
                                                        std::optional<int> holder) {
  std::string who = holder == getpid() ? "this process"
                    : holder            ? "process " + std::to_string(*holder)
                                        : "another process";
  return journal_path + " is the journal of " + (name.empty() ? "another file" : "\"" + name + "\"") + ", which " +
         who + " has open for writing. A journal_path naming a file serves one file at a time; one ending in '/' "
         "names a directory, where each file gets a journal of its own";
}

Status JournaledFile::start_writing() {
  std::array<uint8_t, 16> uuid{};
  uint64_t generation = 1, first_txn = 1;
  // A journal found may have a name only the page cache holds: a writer
  // killed before its first commit never synced it.  It is made durable
  // before anything here counts on it: the superblock's guard, a replay,
  // the binding.
  if (report_.journal_found && opts_.ring.durable) H5J_RETURN_IF_ERROR(sync_names());
  if (report_.journal_found) {
    H5J_RETURN_IF_ERROR(load_journal());
    if (plan_) {
      generation = plan_->summary.header.generation + 1;
      first_txn = std::max(plan_->summary.last_committed_txn + 1, plan_->summary.header.first_txn);
      uuid = plan_->summary.header.uuid;
      H5J_RETURN_IF_ERROR(begin_rewrite(/*wait=*/true));
      // The file was guarded when the journal got its first commit; a
      // replay keeps it so (superblock_guard.h).
      H5J_RETURN_IF_ERROR(base_->guard());
      H5J_RETURN_IF_ERROR(replay_into_base());
    }
  }
  // A journal found without a header (its first commit crashed before the
  // header was durable, though the binding was) keeps the binding's identity
  // and moves past its generation, so the two keep agreeing through any
  // crash that follows.
  auto binding = read_binding(*base_);
  if (!binding) return binding.status();
  if (binding->has_value() && report_.journal_found && !plan_) {
    uuid = (*binding)->uuid;
    generation = (*binding)->generation + 1;
  }
  base_empty_ = image_.committed_size == 0;
  // Until its first commit a file created empty starts with no signature
  // on disk, whatever goes in place: its close may then need no journal
  // (close_uncommitted.cc), and a crash before it leaves no half-written
  // HDF5 file.
  if (base_empty_ && !report_.journal_found && sharing_.holds_signature_until_commit()) {
    base_->hold_signature();
    names_at_open_ = names_lead_to();
  }
  H5J_RETURN_IF_ERROR(start_generation(generation, first_txn, uuid));
  H5J_RETURN_IF_ERROR(end_rewrite());
  H5J_RETURN_IF_ERROR(unmark_applying());  // a replay's writes are behind the new generation
  // What this session will allocate past the file's end, HDF5 writes
  // through it.  Under MPI another rank may write any byte: nothing counts.
  if (sharing_.tracks_unwritten_space()) unwritten_ = UnwrittenSpace(image_.committed_size, opts_.inplace_min_bytes);
  // One device's cache flush must cover the journal and the file for a
  // commit of one flush (commit_in_one_flush.cc).
  // A close retires its journal on the same condition (commit.cc, end_close);
  // without durability nothing is flushed, and statfs is not asked.
  shares_flush_ = opts_.ring.durable && opts_.fs->shares_cache_flush(base_->path(), opts_.journal_path);
  one_flush_ = commits_wait_for_disk() && sharing_.commits_in_one_flush() && shares_flush_;
  if (commits_synced_in_background()) {
    H5J_RETURN_IF_ERROR(start_background_sync(true));
    if (sharing_.packs_commits()) txn_->records().pack_commits(background_.get());
  }
  // Serially the extents and their CRCs wait for the first commit
  // (file_sharing.h).  W1, h5bench and any file written whole and then
  // closed commit only at the close: the CRCs of h5bench's CC 2-D were 2 of
  // its 45 ms of CPU time, and 2.8% of its CPU samples under durable_within.
  if (one_flush_ || background_) base_->track_in_place(!sharing_.names_in_place_from_first_commit());
  // A journal that was found is bound now (its name durable, above); a new
  // journal is bound at its first commit, once its name is durable.
  return report_.journal_found ? bind() : Status::ok();
}

// The thread's own handles on the file and the journal: it syncs through
// them while the writer writes through its own (background_sync.h).  In a
// recording or a fault sweep it runs no thread (FileSystem::deterministic).
Status JournaledFile::start_background_sync(bool journal) {
  auto file = opts_.fs->open(base_->path(), OpenMode::kReadOnly, IoEngine::kSync);
  if (!file) return file.status();
  std::unique_ptr<File> journal_handle;
  if (journal) {
    auto opened = opts_.fs->open(opts_.journal_path, OpenMode::kReadOnly, IoEngine::kSync);
    if (!opened) return opened.status();
    journal_handle = std::move(*opened);
  }
  background_ = std::make_unique<BackgroundSync>(std::move(*file), std::move(journal_handle), opts_.durable_within,
                                                 !opts_.fs->deterministic());
  return Status::ok();
}

}  // namespace h5j
