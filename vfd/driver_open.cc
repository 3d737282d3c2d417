// Opening, closing and deleting a file: the FAPL's configuration, HDF5's
// open flags and file locking, and the ranks' agreement under MPI.
#include <cstdlib>

#include "driver_file.h"
#include "file_lock.h"
#include "posix_file.h"
#include "recovery.h"
#include "superblock.h"

namespace h5j {

Result<FaplConfig> config_from_fapl(hid_t fapl) {
  // Set by H5Pset_fapl_journal; absent (and an error HDF5 would print) when
  // the driver was chosen by name, with a configuration string instead.
  const void* info = nullptr;
  H5E_BEGIN_TRY { info = H5Pget_driver_info(fapl); }
  H5E_END_TRY
  if (info != nullptr) {
    H5FD_journal_fapl_t c;
    std::memcpy(&c, info, sizeof c);
    H5J_RETURN_IF_ERROR(validate_config(c));
    return FaplConfig{c, false};
  }
  H5FD_journal_fapl_t c = default_config();
  ssize_t len = H5Pget_driver_config_str(fapl, nullptr, 0);
  if (len > 0) {
    std::string text(size_t(len) + 1, '\0');
    H5Pget_driver_config_str(fapl, text.data(), text.size());
    text.resize(size_t(len));
    H5J_RETURN_IF_ERROR(parse_config(text, c));
  }
  return FaplConfig{c, true};
}

namespace {

// A file with no journal whose superblock says it is open for writing was not
// closed cleanly by anyone: either not written through h5journal, or its
// journal was lost.  Reported, never silently accepted.
Status check_unjournaled_file_is_clean(FileSystem& fs, const std::string& name, const std::string& journal) {
  auto base = fs.open(name, OpenMode::kReadOnly, IoEngine::kSync);
  if (!base) return base.status().code() == Code::kMissing ? Status::ok() : base.status();
  auto size = (*base)->size();
  if (!size) return size.status();
  SuperblockGuardFile file(std::move(*base));  // a guarded superblock is read as HDF5 wrote it
  FileImageView view(file, *size);
  auto sb = find_superblock(view);
  if (!sb) return sb.status();
  if (sb->has_value() && marked_open_for_writing(**sb)) return left_open_without_journal(name, journal);
  return Status::ok();
}

Access access_for(unsigned flags) {
  if (!(flags & H5F_ACC_RDWR)) return Access::kReadOnly;
  if (flags & H5F_ACC_EXCL) return Access::kCreateExclusive;
  // HDF5's family driver opens members after the first with TRUNC but
  // without CREAT: a missing member must then fail the open, not appear.
  if (flags & H5F_ACC_TRUNC) return (flags & H5F_ACC_CREAT) ? Access::kCreateTruncate : Access::kTruncate;
  if (flags & H5F_ACC_CREAT) return Access::kCreate;
  return Access::kReadWrite;
}

// Opens one rank's handle: rank 0 (or a serial writer) as the file's owner,
// any other rank as a follower, once rank 0 has opened and recovered.
Result<std::unique_ptr<JournaledFile>> open_journaled(const char* name, Access access, JournalOptions opts,
                                                      RankGroup* ranks) {
  bool follower = ranks != nullptr && ranks->rank() != 0;
  FileSystem& fs = *opts.fs;
  if (ranks != nullptr && access != Access::kReadOnly) {
    opts.role = follower ? Role::kMpiFollower : Role::kMpiOwner;
    opts.data_log = uint32_t(ranks->rank());
    opts.ranks = uint32_t(ranks->size());
  }
  Status checked;
  if (!follower && !truncates(access) && !fs.exists(opts.journal_path))
    checked = check_unjournaled_file_is_clean(fs, name, opts.journal_path);
  // A follower writing the file opens it only once rank 0 has opened, and
  // recovered, it: a follower's open starts its data log afresh, which rank
  // 0's replay of a crashed job may still read.
  bool after_owner = follower && access != Access::kReadOnly;
  Result<std::unique_ptr<JournaledFile>> file =
      after_owner ? Status(Code::kInvalid, "not opened before rank 0") : checked ? JournaledFile::open(name, access, opts)
                                                                                : checked;
  if (ranks == nullptr || access == Access::kReadOnly) return file;
  Status owner = ranks->agree(follower ? Status::ok() : file.status());
  if (!owner) return owner;
  if (follower) file = JournaledFile::open(name, Access::kReadWrite, opts);
  Status all = ranks->agree(file.status());
  if (!all) return all;
  // Only now: a follower could not have opened the file for writing after it.
  Status taken = ranks->agree(follower ? Status::ok() : (*file)->protect_from_writers());
  if (!taken) return taken;
  return file;
}

// HDF5's file locking, done by the driver at open rather than through
// lock/unlock callbacks.  With a lock callback, HDF5 marks the superblock
// "open for writing" and flushes it by tag at open on every rank; under MPI
// rank 0's flush, outside a sync point, then enters its clean list while
// the others hold the entry clean, and the next sync point fails ("Listed
// entry not dirty"): no MPI driver of HDF5's has a lock callback.  The
// setting is HDF5's: HDF5_USE_FILE_LOCKING (FALSE, TRUE or BEST_EFFORT)
// over the FAPL's H5Pset_file_locking.  Under MPI rank 0 takes it for the
// job (the engine asks only the journal's owner): the other ranks' opens of
// the file take no lock, and a program without the driver is still refused.
Status lock_like_hdf5(File& base, hid_t fapl, bool read_write) {
  FileLocking locking = file_locking(fapl);
  if (!locking.use) return Status::ok();
  Status s = try_lock_past_exited_holder(base, read_write ? LockMode::kExclusive : LockMode::kShared);
  if (s.code() == Code::kUnsupported && locking.best_effort) return Status::ok();  // a file system without locks
  if (s.code() == Code::kUnsupported) s = lock_required_error(s);
  if (s.code() == Code::kBusy)
    if (std::optional<int> holder = base.lock_holder())
      s = Status(Code::kBusy, base.path() + " is in use: process " + std::to_string(*holder) + " holds its lock",
                 s.sys_errno());
  if (!s) return s.prefixed("unable to lock the file: ");
  return Status::ok();
}

// The file, its journal, every data log and the readers file.
Status remove_file_and_logs(FileSystem& fs, const char* name, const H5FD_journal_fapl_t& config) {
  if (!fs.exists(name)) return Status(Code::kMissing, std::string("no file ") + name);
  H5J_RETURN_IF_ERROR(fs.remove(name));
  std::string journal = journal_path_for(name, config);
  H5J_RETURN_IF_ERROR(fs.remove(journal));
  H5J_RETURN_IF_ERROR(remove_data_logs(fs, journal, /*sync=*/false));
  return fs.remove(readers_path_for(journal));
}

}  // namespace

H5FD_t* journal_open(const char* given_name, unsigned flags, hid_t fapl, haddr_t maxaddr) {
  return exceptions_as_errors("H5FD_journal_open", static_cast<H5FD_t*>(nullptr), [&]() -> H5FD_t* {
    static const char* fn = "H5FD_journal_open";
    if (given_name == nullptr || *given_name == '\0') return push_error(fn, H5E_BADVALUE, "no file name"), nullptr;
    if (maxaddr == 0 || maxaddr == HADDR_UNDEF) return push_error(fn, H5E_BADRANGE, "bogus maxaddr"), nullptr;
    auto config = config_from_fapl(fapl);
    if (!config) return push_error(fn, H5E_BADVALUE, config.status()), nullptr;
    FileSystem& fs = filesystem_for(fapl);
    // The file's and its journal's names are used again at checkpoints and
    // at the close, perhaps after the program changed its working directory.
    const std::string path = fs.absolute(given_name);
    const char* name = path.c_str();
    auto ranks = rank_group_for(name, fapl, config->from_string, config->values);
    if (!ranks) return push_error(fn, H5E_CANTOPENFILE, ranks.status()), nullptr;
    JournalOptions opts = journal_options_for(name, config->values, fs);
    opts.journal_path = fs.absolute(opts.journal_path);  // a relative journal_path, too
    const bool read_write = flags & H5F_ACC_RDWR;
    // A writer locks the file before the engine truncates or replays into it.
    if (read_write) opts.lock_base = [fapl](File& base) { return lock_like_hdf5(base, fapl, true); };
    // Where no lock works, HDF5's setting decides for the journal's lock too;
    // where one works, the journal is locked whatever the setting, since it
    // is what keeps a second writer from destroying committed data.
    opts.require_locks = file_locking(fapl).required();
    opts.reader_in_writer_passive = true;  // HDF5 merges such an open into the file it has open
    opts.journal_named_after_file = true;
    opts.closing_thread = closing_thread_for(fs);
    opts.apply_buffers = &shared_buffers().applies;
    opts.ring.pool = &shared_buffers().rings;
    auto file = open_journaled(name, access_for(flags), std::move(opts), ranks->get());
    if (!file) return push_error(fn, H5E_CANTOPENFILE, file.status()), nullptr;
    // A reader of a journaled file is registered with the writers through
    // the readers file (live_readers.h) and takes no lock of HDF5's, which a
    // live writer holds exclusively; a passive handle (HDF5's tentative
    // second open of a file it has open) takes none either.
    // An empty file without a journal is no HDF5 file (HDF5 says so when it
    // finds no signature), and may be one a writer has just created and not
    // yet locked: a reader takes no lock on it, which would make that
    // writer's open fail.
    bool empty_plain_file = !(*file)->report().journal_found && (*file)->size() == 0;
    if (!*ranks && !read_write && !(*file)->report().passive && !(*file)->report().live_snapshot &&
        !empty_plain_file) {
      if (Status s = lock_like_hdf5((*file)->base(), fapl, false); !s)
        return push_error(fn, H5E_CANTLOCKFILE, s), nullptr;
    }
    auto id = fs.id(name);
    if (!id) return push_error(fn, H5E_CANTOPENFILE, id.status()), nullptr;
    auto* f = new JournalDriverFile{};
    f->file = std::move(*file);
    f->config = config->values;
    f->config_from_string = config->from_string;
    f->id = *id;
    f->ranks = std::move(*ranks);
    return &f->pub;
  });
}

herr_t journal_close(H5FD_t* file) {
  return exceptions_as_errors("H5FD_journal_close", herr_t(-1), [&]() -> herr_t {
    std::unique_ptr<JournalDriverFile> f(self(file));
    if (forked_from_opener(*f)) {
      // Its descriptors, ring and locks are the parent's too, and its
      // engine expects a thread this process lacks: destroyed here, it
      // would release or wait on them.  Left to this process's exit.
      (void)f->file.release();
      (void)f->ranks.release();
      return 0;
    }
    Status s = f->ranks ? f->ranks->commit(*f->file, /*closing=*/true) : f->file->close();
    if (!s) return push_error("H5FD_journal_close", H5E_CANTCLOSEFILE, s);
    return 0;
  });
}

// Under MPI, H5Fdelete is collective, as with mpio: rank 0 removes, and
// every rank returns its outcome.
herr_t journal_delete(const char* name, hid_t fapl) {
  return exceptions_as_errors("H5FD_journal_delete", herr_t(-1), [&]() -> herr_t {
    auto config = config_from_fapl(fapl);
    if (!config) return push_error("H5FD_journal_delete", H5E_BADVALUE, config.status());
    auto ranks = rank_group_for(name, fapl, config->from_string, config->values);
    if (!ranks) return push_error("H5FD_journal_delete", H5E_CANTDELETEFILE, ranks.status());
    Status s = *ranks && (*ranks)->rank() != 0 ? Status::ok() : remove_file_and_logs(filesystem_for(fapl), name, config->values);
    if (*ranks) s = (*ranks)->agree(s);
    if (!s) return push_error("H5FD_journal_delete", H5E_CANTDELETEFILE, s);
    return 0;
  });
}

}  // namespace h5j
