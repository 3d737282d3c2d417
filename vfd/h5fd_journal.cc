// The HDF5 glue: H5FD_class_t callbacks over a JournaledFile, the public
// H5Pset_fapl_journal API, and the plugin entry points.  Everything about
// journaling lives in journal/; this file maps HDF5's calls onto it.
//
// Commit points (see docs/design.md): HDF5's H5Fflush calls
// truncate(closing=false) and then flush(closing=false); that pair commits.
// H5Dflush/H5Oflush reach flush() without a truncate and do not.  H5Fclose
// writes the final superblock after its last flush(), so close() commits.
#include <H5FDdevelop.h>
#include <hdf5.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "config.h"
#include "driver.h"
#include "recovery.h"
#include "h5journal.h"
#include "journaled_file.h"
#include "posix_file.h"
#include "rank_group.h"
#include "selection_pieces.h"
#include "superblock.h"

namespace h5j {
namespace {

// Registration state, the only globals: the default driver id, and the
// instances registered over other file systems (tests).
hid_t g_driver_id = H5I_INVALID_HID;
std::vector<std::pair<hid_t, FileSystem*>> g_instances;

// The file system of the driver a FAPL selects.
FileSystem& filesystem_for(hid_t fapl) {
  hid_t driver = H5Pget_driver(fapl);
  for (const auto& [id, fs] : g_instances)
    if (id == driver) return *fs;
  return posix_filesystem();
}

struct JournalDriverFile {
  H5FD_t pub;  // must be first: HDF5 fills it after open()
  std::unique_ptr<JournaledFile> file;
  H5FD_journal_fapl_t config;
  // Chosen by name with a configuration string, the FAPL carries no driver
  // info, and H5Fget_access_plist must return one that compares equal.
  bool config_from_string = false;
  haddr_t eoa = 0;
  FileId id;
  bool commit_pending = false;  // truncate(closing=false) seen: the next flush() commits
  std::unique_ptr<RankGroup> ranks;  // null: opened by this process alone
  // The raw pieces of write_vector and write_selection, kept between
  // calls: a strided selection brings a million pieces, and a fresh vector
  // each call costs its page faults again.
  std::vector<RawPiece> raw_pieces;
};

// A commit: the file's own, or the ranks' collective one.
Status commit(JournalDriverFile& f) { return f.ranks ? f.ranks->commit(*f.file, false) : f.file->commit(); }

JournalDriverFile* self(H5FD_t* f) { return reinterpret_cast<JournalDriverFile*>(f); }
const JournalDriverFile* self(const H5FD_t* f) { return reinterpret_cast<const JournalDriverFile*>(f); }

herr_t push_error(const char* func, hid_t minor, const std::string& message) {
  H5Epush2(H5E_DEFAULT, __FILE__, func, __LINE__, H5E_ERR_CLS, H5E_VFL, minor, "%s", message.c_str());
  return -1;
}

// An error with the errno the system gave, written as sec2 writes it
// ("errno = 2, error message = '...'"): h5py raises FileNotFoundError,
// BlockingIOError and the like by it.
herr_t push_error(const char* func, hid_t minor, const Status& s, const std::string& context = "") {
  std::string message = context + s.message();
  if (s.sys_errno() != 0)
    message += ", errno = " + std::to_string(s.sys_errno()) + ", error message = '" + std::strerror(s.sys_errno()) + "'";
  return push_error(func, minor, message);
}

// Runs a callback body; an exception (std::bad_alloc from a growing map, say)
// must not unwind through HDF5's C frames, so it becomes an HDF5 error.
template <typename R, typename F>
R exceptions_as_errors(const char* fn, R on_error, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    push_error(fn, H5E_CANTALLOC, "out of memory");
  } catch (const std::exception& e) {
    push_error(fn, H5E_SYSTEM, std::string("unexpected error: ") + e.what());
  }
  return on_error;
}

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

struct FaplConfig {
  H5FD_journal_fapl_t values;
  bool from_string;  // HDF5_DRIVER_CONFIG or H5Pset_driver_by_name, not H5Pset_fapl_journal
};

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

Access access_for(unsigned flags) {
  if (!(flags & H5F_ACC_RDWR)) return Access::kReadOnly;
  if (flags & H5F_ACC_EXCL) return Access::kCreateExclusive;
  // HDF5's family driver opens members after the first with TRUNC but
  // without CREAT: a missing member must then fail the open, not appear.
  if (flags & H5F_ACC_TRUNC) return (flags & H5F_ACC_CREAT) ? Access::kCreateTruncate : Access::kTruncate;
  if (flags & H5F_ACC_CREAT) return Access::kCreate;
  return Access::kReadWrite;
}

// --- callbacks ------------------------------------------------------------------

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
  Result<std::unique_ptr<JournaledFile>> file = checked ? JournaledFile::open(name, access, opts) : checked;
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
  Status s = base.try_lock(read_write ? LockMode::kExclusive : LockMode::kShared);
  if (s.code() == Code::kUnsupported && locking.best_effort) return Status::ok();  // a file system without locks
  if (s.code() == Code::kUnsupported) s = lock_required_error(s);
  if (s.code() == Code::kBusy)
    if (std::optional<int> holder = base.lock_holder())
      s = Status(Code::kBusy, base.path() + " is in use: process " + std::to_string(*holder) + " holds its lock",
                 s.sys_errno());
  if (!s) return s.prefixed("unable to lock the file: ");
  return Status::ok();
}

H5FD_t* journal_open(const char* name, unsigned flags, hid_t fapl, haddr_t maxaddr) {
  return exceptions_as_errors("H5FD_journal_open", static_cast<H5FD_t*>(nullptr), [&]() -> H5FD_t* {
    static const char* fn = "H5FD_journal_open";
    if (name == nullptr || *name == '\0') return push_error(fn, H5E_BADVALUE, "no file name"), nullptr;
    if (maxaddr == 0 || maxaddr == HADDR_UNDEF) return push_error(fn, H5E_BADRANGE, "bogus maxaddr"), nullptr;
    auto config = config_from_fapl(fapl);
    if (!config) return push_error(fn, H5E_BADVALUE, config.status()), nullptr;
    FileSystem& fs = filesystem_for(fapl);
    auto ranks = rank_group_for(name, fapl, config->from_string, config->values);
    if (!ranks) return push_error(fn, H5E_CANTOPENFILE, ranks.status()), nullptr;
    JournalOptions opts = journal_options_for(name, config->values, fs);
    const bool read_write = flags & H5F_ACC_RDWR;
    // A writer locks the file before the engine truncates or replays into it.
    if (read_write) opts.lock_base = [fapl](File& base) { return lock_like_hdf5(base, fapl, true); };
    // Where no lock works, HDF5's setting decides for the journal's lock too;
    // where one works, the journal is locked whatever the setting, since it
    // is what keeps a second writer from destroying committed data.
    opts.require_locks = file_locking(fapl).required();
    opts.reader_in_writer_passive = true;  // HDF5 merges such an open into the file it has open
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
    Status s = f->ranks ? f->ranks->commit(*f->file, /*closing=*/true) : f->file->close();
    if (!s) return push_error("H5FD_journal_close", H5E_CANTCLOSEFILE, s);
    return 0;
  });
}

int journal_cmp(const H5FD_t* a, const H5FD_t* b) {
  auto order = self(a)->id <=> self(b)->id;
  return order < 0 ? -1 : order > 0 ? 1 : 0;
}

herr_t journal_query(const H5FD_t* file, unsigned long* flags) {
  // The same choices as sec2 (aggregation, metadata accumulation, sieving),
  // plus DEFAULT_VFD_COMPATIBLE because a closed file is a canonical HDF5
  // file.  Not POSIX_COMPAT_HANDLE: writing through the descriptor would
  // bypass the journal.  Under MPI, mpio's choices: no accumulation or
  // sieving (each rank would hold its own stale copy), and HAS_MPI.
  if (flags == nullptr) return 0;
  *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_AGGREGATE_SMALLDATA | H5FD_FEAT_DEFAULT_VFD_COMPATIBLE;
  if (file != nullptr && self(file)->ranks) *flags |= H5FD_FEAT_HAS_MPI;
  else *flags |= H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE;
  return 0;
}

haddr_t journal_get_eoa(const H5FD_t* file, H5FD_mem_t) { return self(file)->eoa; }

herr_t journal_set_eoa(H5FD_t* file, H5FD_mem_t, haddr_t addr) {
  self(file)->eoa = addr;
  return 0;
}

haddr_t journal_get_eof(const H5FD_t* file, H5FD_mem_t) { return self(file)->file->size(); }

// H5Fget_journal_stats asks through H5Fget_vfd_handle (the only way from
// a file id to its driver) with a FAPL holding this property: a pointer to
// a StatsRequest.  Only this driver fills it; any other returns its handle
// and leaves `filled` false.
constexpr const char* kStatsRequest = "h5journal.stats_request";
struct StatsRequest {
  bool filled = false;
  H5FD_journal_stats_t stats{};
};

herr_t journal_get_handle(H5FD_t* file, hid_t fapl, void** handle) {
  if (handle != nullptr && fapl != H5P_DEFAULT && H5Pexist(fapl, kStatsRequest) > 0) {
    StatsRequest* request = nullptr;
    if (H5Pget(fapl, kStatsRequest, &request) < 0 || request == nullptr) return -1;
    JournaledFile::Stats s = self(file)->file->stats();
    request->stats = {s.commits, s.checkpoints, s.raw_bytes_logged, s.raw_index_bytes, s.raw_index_peak_bytes};
    request->filled = true;
    *handle = request;
    return 0;
  }
  // The descriptor of the HDF5 file, for reading or fsync only.
  auto* posix = dynamic_cast<PosixFile*>(&self(file)->file->base().inner());
  if (handle == nullptr || posix == nullptr) return push_error("H5FD_journal_get_handle", H5E_BADVALUE, "no handle");
  static thread_local int fd;
  fd = posix->fd();
  *handle = &fd;
  return 0;
}

// The pieces of a raw transfer under MPI's collective layout, or none.
Result<std::vector<CollectivePiece>> collective_transfer(JournalDriverFile& f, haddr_t addr, size_t size) {
  if (!f.ranks) return std::vector<CollectivePiece>();
  return f.ranks->transfer_pieces(addr, size);
}

// A raw write's end: under MPI, what the ranks' collective call needs.
Status end_of_raw_write(JournalDriverFile& f, bool raw, const Status& local) {
  return f.ranks && raw ? f.ranks->end_raw_write(*f.file, local) : local;
}

Status read_pieces(JournaledFile& f, std::span<const CollectivePiece> pieces, std::byte* buf) {
  for (const CollectivePiece& p : pieces) H5J_RETURN_IF_ERROR(f.read(p.addr, std::span(buf + p.memory, p.length)));
  return Status::ok();
}

Status write_pieces(JournaledFile& f, H5FD_mem_t type, std::span<const CollectivePiece> pieces, const std::byte* buf) {
  std::vector<RawPiece> raw;
  for (const CollectivePiece& p : pieces) {
    auto bytes = std::span(buf + p.memory, p.length);
    if (type == H5FD_MEM_DRAW) raw.push_back({p.addr, bytes});
    else H5J_RETURN_IF_ERROR(f.write(p.addr, bytes, uint32_t(type)));
  }
  return raw.empty() ? Status::ok() : f.write_raw(raw, uint32_t(type));
}

// One read, without taking in the other ranks' data logs first.
Status read_one(JournalDriverFile& file, H5FD_mem_t type, haddr_t addr, size_t size, std::byte* out) {
  // As mpio: only raw data reads take the collective layout.
  auto pieces = type == H5FD_MEM_DRAW ? collective_transfer(file, addr, size) : std::vector<CollectivePiece>();
  if (!pieces) return pieces.status();
  return pieces->empty() ? file.file->read(addr, std::span(out, size)) : read_pieces(*file.file, *pieces, out);
}

herr_t journal_read(H5FD_t* file, H5FD_mem_t type, hid_t, haddr_t addr, size_t size, void* buf) {
  return exceptions_as_errors("H5FD_journal_read", herr_t(-1), [&]() -> herr_t {
    // Raw data another rank wrote since the last commit is in its data log.
    Status s = type == H5FD_MEM_DRAW ? self(file)->file->refresh_peers() : Status::ok();
    if (s) s = read_one(*self(file), type, addr, size, static_cast<std::byte*>(buf));
    if (!s) return push_error("H5FD_journal_read", H5E_READERROR, s);
    return 0;
  });
}

herr_t journal_write(H5FD_t* file, H5FD_mem_t type, hid_t, haddr_t addr, size_t size, const void* buf) {
  return exceptions_as_errors("H5FD_journal_write", herr_t(-1), [&]() -> herr_t {
    auto in = static_cast<const std::byte*>(buf);
    auto bytes = std::span(in, size);
    JournaledFile& f = *self(file)->file;
    auto pieces = collective_transfer(*self(file), addr, size);
    Status s = !pieces              ? pieces.status()
               : !pieces->empty()   ? write_pieces(f, type, *pieces, in)
               : type == H5FD_MEM_DRAW ? f.write_raw(addr, bytes, uint32_t(type))
                                       : f.write(addr, bytes, uint32_t(type));
    s = end_of_raw_write(*self(file), type == H5FD_MEM_DRAW, s);
    if (!s) return push_error("H5FD_journal_write", H5E_WRITEERROR, s);
    return 0;
  });
}

// Vector I/O.  Having these callbacks turns on HDF5's selection I/O: a
// hyperslab write arrives as one vector of all its pieces (a 32^3 box of a
// 3-D array: 1024 runs) instead of through the sieve buffer, so raw data
// can be logged as one pattern.  In the arrays (these and write_selection's
// below), a size of 0, a type of H5FD_MEM_NOLIST or a null buffer means
// "as the previous element" from there on.

// One of those arrays, read in order: from the first element past the
// first that holds `sentinel` on, every element is the one before it.
template <typename T>
class ExtendedArray {
 public:
  ExtendedArray(const T* values, T sentinel) : values_(values), sentinel_(sentinel) {}
  T at(size_t i) {
    fixed_ = fixed_ || (i > 0 && values_[i] == sentinel_);
    if (!fixed_) current_ = values_[i];
    return current_;
  }

 private:
  const T* values_;
  T sentinel_;
  bool fixed_ = false;
  T current_{};
};

template <typename F>
void for_each_element(uint32_t count, const H5FD_mem_t types[], const size_t sizes[], F&& f) {
  ExtendedArray<H5FD_mem_t> type(types, H5FD_MEM_NOLIST);
  ExtendedArray<size_t> size(sizes, 0);
  for (uint32_t i = 0; i < count; i++) f(i, type.at(i), size.at(i));
}

herr_t journal_read_vector(H5FD_t* file, hid_t, uint32_t count, H5FD_mem_t types[], haddr_t addrs[],
                           size_t sizes[], void* bufs[]) {
  return exceptions_as_errors("H5FD_journal_read_vector", herr_t(-1), [&]() -> herr_t {
    bool raw = false;
    for_each_element(count, types, sizes, [&](uint32_t, H5FD_mem_t type, size_t) { raw = raw || type == H5FD_MEM_DRAW; });
    Status s = raw ? self(file)->file->refresh_peers() : Status::ok();  // once for the whole vector
    for_each_element(count, types, sizes, [&](uint32_t i, H5FD_mem_t type, size_t size) {
      if (s) s = read_one(*self(file), type, addrs[i], size, static_cast<std::byte*>(bufs[i]));
    });
    if (!s) return push_error("H5FD_journal_read_vector", H5E_READERROR, s);
    return 0;
  });
}

// Runs of raw pieces go to write_raw together; metadata one by one.
herr_t journal_write_vector(H5FD_t* file, hid_t, uint32_t count, H5FD_mem_t types[], haddr_t addrs[],
                            size_t sizes[], const void* bufs[]) {
  return exceptions_as_errors("H5FD_journal_write_vector", herr_t(-1), [&]() -> herr_t {
    JournaledFile& f = *self(file)->file;
    std::vector<RawPiece>& raw = self(file)->raw_pieces;
    raw.clear();
    Status s;
    bool all_raw = true;
    auto flush_raw = [&]() {
      if (s && !raw.empty()) s = f.write_raw(raw, uint32_t(H5FD_MEM_DRAW));
      raw.clear();
    };
    for_each_element(count, types, sizes, [&](uint32_t i, H5FD_mem_t type, size_t size) {
      auto bytes = std::span(static_cast<const std::byte*>(bufs[i]), size);
      if (type == H5FD_MEM_DRAW) {
        raw.push_back({addrs[i], bytes});
        return;
      }
      all_raw = false;
      flush_raw();
      if (s) s = f.write(addrs[i], bytes, uint32_t(type));
    });
    flush_raw();
    s = end_of_raw_write(*self(file), all_raw, s);
    if (!s) return push_error("H5FD_journal_write_vector", H5E_WRITEERROR, s);
    return 0;
  });
}

// Selection I/O: the same as the vector write, the pieces walked here in
// batches (selection_pieces.h) instead of built into a vector by HDF5.
herr_t journal_write_selection(H5FD_t* file, H5FD_mem_t type, hid_t, size_t count, hid_t mem_spaces[],
                               hid_t file_spaces[], haddr_t offsets[], size_t element_sizes[], const void* bufs[]) {
  return exceptions_as_errors("H5FD_journal_write_selection", herr_t(-1), [&]() -> herr_t {
    JournaledFile& f = *self(file)->file;
    auto write_batch = [&](std::span<const RawPiece> pieces) -> Status {
      if (type == H5FD_MEM_DRAW) return f.write_raw(pieces, uint32_t(type));
      for (const RawPiece& p : pieces) H5J_RETURN_IF_ERROR(f.write(p.addr, p.bytes, uint32_t(type)));
      return Status::ok();
    };
    Status s;
    ExtendedArray<size_t> element_size(element_sizes, 0);
    ExtendedArray<const void*> buf(bufs, nullptr);
    for (size_t i = 0; i < count && s; ++i)
      s = for_each_selection_batch(mem_spaces[i], file_spaces[i], offsets[i], element_size.at(i), buf.at(i),
                                   self(file)->raw_pieces, write_batch);
    s = end_of_raw_write(*self(file), type == H5FD_MEM_DRAW, s);
    if (!s) return push_error("H5FD_journal_write_selection", H5E_WRITEERROR, s);
    return 0;
  });
}

herr_t journal_flush(H5FD_t* file, hid_t, hbool_t closing) {
  return exceptions_as_errors("H5FD_journal_flush", herr_t(-1), [&]() -> herr_t {
    JournalDriverFile* f = self(file);
    if (closing || !f->commit_pending) return 0;  // H5Dflush, H5Oflush, or close (close() commits)
    f->commit_pending = false;
    Status s = commit(*f);
    if (!s) return push_error("H5FD_journal_flush", H5E_CANTFLUSH, s, "commit failed: ");
    return 0;
  });
}

herr_t journal_truncate(H5FD_t* file, hid_t, hbool_t closing) {
  return exceptions_as_errors("H5FD_journal_truncate", herr_t(-1), [&]() -> herr_t {
    JournalDriverFile* f = self(file);
    Status s = f->file->set_size(f->eoa);
    if (!s) return push_error("H5FD_journal_truncate", H5E_CANTUPDATE, s);
    if (!closing) f->commit_pending = true;
    return 0;
  });
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

void* journal_fapl_get(H5FD_t* file) {
  if (self(file)->config_from_string) return nullptr;  // the string travels in the FAPL itself
  auto* copy = static_cast<H5FD_journal_fapl_t*>(std::malloc(sizeof(H5FD_journal_fapl_t)));
  if (copy != nullptr) *copy = self(file)->config;
  return copy;
}

void* journal_fapl_copy(const void* fapl) {
  auto* copy = static_cast<H5FD_journal_fapl_t*>(std::malloc(sizeof(H5FD_journal_fapl_t)));
  if (copy != nullptr) std::memcpy(copy, fapl, sizeof(H5FD_journal_fapl_t));
  return copy;
}

herr_t journal_fapl_free(void* fapl) {
  std::free(fapl);
  return 0;
}

// The MPI queries HDF5 makes of a driver with H5FD_FEAT_HAS_MPI.
herr_t journal_ctl(H5FD_t* file, uint64_t op, uint64_t flags, const void*, void** output) {
  RankGroup* ranks = self(file)->ranks.get();
  if (ranks != nullptr && ranks->answer_ctl(op, output)) return 0;
  if (flags & H5FD_CTL_FAIL_IF_UNKNOWN_FLAG)
    return push_error("H5FD_journal_ctl", H5E_FCNTL, "unknown op code " + std::to_string(op));
  return 0;
}

herr_t journal_terminate() {
  g_driver_id = H5I_INVALID_HID;
  g_instances.clear();
  return 0;
}

const H5FD_class_t kJournalClass = {
    H5FD_CLASS_VERSION,
    H5FD_JOURNAL_VALUE,
    H5FD_JOURNAL_NAME,
    HADDR_MAX,
    H5F_CLOSE_WEAK,
    journal_terminate,
    nullptr, nullptr, nullptr,  // sb_size, sb_encode, sb_decode
    sizeof(H5FD_journal_fapl_t),
    journal_fapl_get,
    journal_fapl_copy,
    journal_fapl_free,
    0, nullptr, nullptr,        // dxpl
    journal_open,
    journal_close,
    journal_cmp,
    journal_query,
    nullptr,                    // get_type_map
    nullptr, nullptr,           // alloc, free: HDF5's defaults
    journal_get_eoa,
    journal_set_eoa,
    journal_get_eof,
    journal_get_handle,
    journal_read,
    journal_write,
    journal_read_vector,
    journal_write_vector,
    nullptr,                    // read_selection: HDF5 translates to read_vector
    journal_write_selection,
    journal_flush,
    journal_truncate,
    nullptr, nullptr,           // lock, unlock: open locks (lock_like_hdf5)
    journal_delete,
    journal_ctl,
    H5FD_FLMAP_DICHOTOMY,
};

}  // namespace

const H5FD_class_t& journal_driver_class() { return kJournalClass; }

hid_t register_driver_with(FileSystem& fs) {
  H5FD_class_t cls = kJournalClass;
  cls.value = H5FD_JOURNAL_VALUE + 1;  // distinct from the plugin's, so lookups by value stay unambiguous
  cls.name = "journal_instrumented";
  hid_t id = H5FDregister(&cls);
  if (id >= 0) g_instances.emplace_back(id, &fs);
  return id;
}

}  // namespace h5j

// --- public C API and plugin entry points ---------------------------------------

extern "C" {

hid_t H5FD_journal_init(void) {
  if (H5Iget_type(h5j::g_driver_id) != H5I_VFL) h5j::g_driver_id = H5FDregister(&h5j::kJournalClass);
  return h5j::g_driver_id;
}

herr_t H5Pget_fapl_journal_defaults(H5FD_journal_fapl_t* config) {
  if (config == nullptr) return h5j::push_error("H5Pget_fapl_journal_defaults", H5E_BADVALUE, "config is NULL");
  *config = h5j::default_config();
  return 0;
}

herr_t H5Pset_fapl_journal(hid_t fapl_id, const H5FD_journal_fapl_t* config) {
  H5FD_journal_fapl_t c = config != nullptr ? *config : h5j::default_config();
  if (h5j::Status s = h5j::validate_config(c); !s)
    return h5j::push_error("H5Pset_fapl_journal", H5E_BADVALUE, s);
  hid_t id = H5FD_journal_init();
  if (id < 0) return h5j::push_error("H5Pset_fapl_journal", H5E_CANTREGISTER, "unable to register the driver");
  return H5Pset_driver(fapl_id, id, &c);
}

herr_t H5Pget_fapl_journal(hid_t fapl_id, H5FD_journal_fapl_t* config) {
  if (config == nullptr) return h5j::push_error("H5Pget_fapl_journal", H5E_BADVALUE, "config is NULL");
  if (H5Pget_driver(fapl_id) != H5FD_journal_init())
    return h5j::push_error("H5Pget_fapl_journal", H5E_BADTYPE, "the file access property list does not use the journal driver");
  auto c = h5j::config_from_fapl(fapl_id);
  if (!c) return h5j::push_error("H5Pget_fapl_journal", H5E_BADVALUE, c.status());
  *config = c->values;
  return 0;
}

herr_t H5Fget_journal_stats(hid_t file_id, H5FD_journal_stats_t* stats) {
  if (stats == nullptr) return h5j::push_error("H5Fget_journal_stats", H5E_BADVALUE, "stats is NULL");
  h5j::StatsRequest request;
  h5j::StatsRequest* pointer = &request;
  void* handle = nullptr;
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0) return -1;
  herr_t status = H5Pinsert2(fapl, h5j::kStatsRequest, sizeof pointer, &pointer, nullptr, nullptr, nullptr, nullptr,
                             nullptr, nullptr);
  if (status >= 0) status = H5Fget_vfd_handle(file_id, fapl, &handle);
  H5Pclose(fapl);
  if (status < 0) return -1;
  if (!request.filled)
    return h5j::push_error("H5Fget_journal_stats", H5E_BADTYPE, "the file is not open through the journal driver");
  *stats = request.stats;
  return 0;
}


}  // extern "C"
