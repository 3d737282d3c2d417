// The I/O seam.  Every byte the journal engine and the driver move to or from
// disk goes through a File: the HDF5 file, the journal, and (later) the data
// log.  The real engines are PosixFile (pread/pwrite/fdatasync) and UringFile
// (io_uring); test engines wrap a File to record or fail operations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "aligned_buffer.h"
#include "status.h"

namespace h5j {

enum class IoEngine { kAuto, kUring, kSync };
enum class LockMode { kShared, kExclusive };

class File {
 public:
  virtual ~File() = default;
  File() = default;
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  virtual const std::string& path() const = 0;

  // Reads up to out.size() bytes at `offset`; returns how many were read,
  // fewer only at end of file.
  virtual Result<size_t> read_at(uint64_t offset, std::span<std::byte> out) = 0;
  // Writes all of `data` at `offset`, continuing after short writes.
  virtual Status write_at(uint64_t offset, std::span<const std::byte> data) = 0;
  // fdatasync.  A failure is final: the caller must stop (see design.md).
  virtual Status sync_data() = 0;
  // Asks the kernel to start writing [offset, offset + length) back now,
  // without waiting, so that a later sync_data has less left to do.  Advisory:
  // errors surface at that sync_data, not here.
  // Callers start it only for writes of at least kEarlyWritebackMin bytes:
  // HDF5 rewrites smaller ones (its sieve buffer), and a page under
  // writeback makes the next write to it wait.
  virtual void start_writeback(uint64_t /*offset*/, uint64_t /*length*/) {}
  static constexpr size_t kEarlyWritebackMin = 1 << 20;
  // Writes every completed write's dirty pages to the device and waits for
  // them, without flushing the device's cache and without the file's
  // metadata (sync_file_range).  The bytes are durable at the device's next
  // cache flush, which any file's sync_data on the same device issues
  // (FileSystem::shares_cache_flush), provided their space's allocation is
  // durable already.  The default, sync_data, is stronger.
  virtual Status write_back() { return sync_after_writes(); }
  virtual Status truncate(uint64_t size) = 0;
  virtual Result<uint64_t> size() = 0;
  // Whether the file's last name is gone: removed while this handle holds
  // it open.  False where that cannot be told.
  virtual Result<bool> removed() { return false; }
  // The file's next run that may hold bytes other than zeros, at or after
  // `offset`: [first, end), with first == end == kNoData where none does.
  // The rest are holes, which read as zeros without taking space: zeros
  // need not be written over them, and a copy need not write them
  // (apply_image.cc, h5recover's copies).  Where the file system cannot
  // tell, or the question fails, all of the file may hold data: the answer
  // only ever saves work, so it is never an error.  Writes submitted and
  // not yet waited for (submit_write) may not count.
  struct DataRun {
    uint64_t first, end;
  };
  static constexpr uint64_t kNoData = UINT64_MAX;
  virtual DataRun data_run(uint64_t offset) { return {offset, kNoData}; }
  // The name the file has now, as the system keeps it for an open file
  // (Linux's /proc/self/fd): where a rename of its directory moved it.
  // Empty where that cannot be told, or no name is left.
  virtual std::string current_name() { return {}; }
  // Advisory whole-file lock that conflicts between open file descriptions,
  // even inside one process.  Fails with kBusy when someone else holds it.
  virtual Status try_lock(LockMode mode) = 0;
  // The process holding the lock try_lock found busy, where the system
  // says (Linux: /proc/locks); nullopt where it cannot be told.
  virtual std::optional<int> lock_holder() { return std::nullopt; }
  // Whether a handle in this process holds this file's exclusive lock.
  // Asks without locking.
  virtual bool locked_by_this_process() { return false; }
  // A shared lock on the one byte at `offset`: an open file description
  // lock, independent of try_lock's, that goes when this handle closes.
  // kUnsupported where the file system has no byte-range lock.
  virtual Status lock_byte_shared(uint64_t /*offset*/) { return Status(Code::kUnsupported, "no byte-range locks"); }
  // Whether another handle holds a lock on the byte at `offset`.  Asks
  // without locking.  kUnsupported as above.
  virtual Result<bool> byte_locked(uint64_t /*offset*/) { return Status(Code::kUnsupported, "no byte-range locks"); }
  // Extended attributes: nullopt when absent or unsupported by the filesystem.
  virtual Result<std::optional<std::string>> get_xattr(const std::string& name) = 0;
  // Returns false (not an error) when the filesystem has no xattrs.
  virtual Result<bool> set_xattr(const std::string& name, const std::string& value) = 0;
  virtual Status remove_xattr(const std::string& name) = 0;
  // fsync: data and metadata (xattrs included).
  virtual Status sync_all() = 0;
  // Write protection (format.h, kWriteBitsXattr): clears the file's write
  // permission bits, recorded first, so that no other program can open it
  // for writing by name while the driver writes it through this handle.
  // False where the file system, or who owns the file, does not allow it.
  virtual Result<bool> remove_write_permission() { return false; }
  // Gives back the bits remove_write_permission recorded, if any, and drops
  // the record.
  virtual Status restore_write_permission() { return Status::ok(); }

  // Asynchronous writes.  The caller keeps `data` alive and untouched until
  // wait_write() has returned for the ticket.  Tickets complete in order: when
  // wait_write(t) returns ok, every write with a ticket <= t is complete.
  // Engines without asynchrony write at submit time.
  virtual Result<uint64_t> submit_write(uint64_t offset, std::span<const std::byte> data) = 0;
  virtual Status wait_write(uint64_t ticket) = 0;
  // Waits for every submitted write, then fdatasyncs.
  virtual Status sync_after_writes() = 0;
  virtual const char* engine_name() const = 0;
  // Memory for I/O buffers, from the engine (which may align or register it).
  virtual Result<AlignedBuffer> allocate_buffer(size_t size, Pages pages);
};

// No mode truncates a file that exists but kCreateTruncate (new files of
// h5recover and the tests): a file HDF5 truncates may be another writer's,
// so the engine empties it only under its lock (journaled_file.cc).
enum class OpenMode { kReadOnly, kReadWrite, kCreate, kCreateTruncate, kCreateExclusive };

// Identifies a file across opens (device and inode for real files), so the
// driver can tell two handles on one file apart from handles on two files.
struct FileId {
  uint64_t device = 0, inode = 0;
  auto operator<=>(const FileId&) const = default;
};

// The rest of the seam: every operation on names rather than open files.
// The engine and the driver reach the disk only through a FileSystem and the
// Files it opens, so a recording or fault-injecting FileSystem sees all of it.
class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // kAuto tries io_uring and falls back to the pwrite engine when the kernel
  // or sandbox refuses io_uring; kUring fails if io_uring is unavailable.
  virtual Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode, IoEngine engine) = 0;
  virtual bool exists(const std::string& path) = 0;
  virtual Result<FileId> id(const std::string& path) = 0;
  // Removing a file that does not exist is not an error.
  virtual Status remove(const std::string& path) = 0;
  // fsync of the directory holding `path`, so that a create or unlink is durable.
  virtual Status sync_dir(const std::string& path) = 0;
  // Whether a sync_data of either file flushes the cache of the device that
  // holds both, making the other's written-back bytes (File::write_back)
  // durable too: the same block device, under a file system whose fdatasync
  // always sends the device a cache flush (ext4, XFS).  False when unsure.
  virtual bool shares_cache_flush(const std::string& /*a*/, const std::string& /*b*/) { return false; }
  // The name of the file system holding `path`'s directory if a reboot
  // empties it (tmpfs, ramfs), else empty: no sync makes a file there
  // survive a power loss.
  virtual std::string empties_at_reboot(const std::string& /*path*/) { return {}; }
  // What `path` is when it exists and is not a regular file ("a directory",
  // "a character device", ...), else empty.
  virtual std::string not_a_regular_file(const std::string& /*path*/) { return {}; }
  // `path` as a name that leads to the same file whatever the working
  // directory becomes (absolute_name, below); as it is where names are not
  // relative to one (a file system in memory).
  virtual std::string absolute(const std::string& path) { return path; }
  // Whether its operations must come in an order fixed by the caller's
  // alone: a recording to replay, or faults injected by count.  The engine
  // then starts no thread, and does its background work inline
  // (background_sync.h).
  virtual bool deterministic() const { return false; }
  // Every existing path that begins with `prefix` and lies in the directory
  // that `prefix` names (its part before the last '/'), in no set order.
  virtual Result<std::vector<std::string>> paths_with_prefix(const std::string& prefix) = 0;
};

// Whether `path` still names `id`, the file opened under it earlier.
inline bool leads_to(FileSystem& fs, const std::string& path, const std::optional<FileId>& id) {
  auto now = fs.id(path);
  return id && now && *now == *id;
}

// Whether `path` now names a file other than `id`, the one opened under it
// earlier: moved away (with its directory, say), its name may have been
// taken by another file since.  False when nothing is there or nothing is
// known.
inline bool leads_elsewhere(FileSystem& fs, const std::string& path, const std::optional<FileId>& id) {
  auto now = fs.id(path);
  return id && now && *now != *id;
}

// The real file system (stateless; safe to share).
FileSystem& posix_filesystem();

// The directory holding `path` ("." for a bare name), and `path`'s name
// within it.  Textual: "d/f" and "./d/f" name the same directory differently.
std::pair<std::string, std::string> split_directory(const std::string& path);

// `path` from the root, made so from the working directory now (textually:
// symbolic links and ".." stay).  A name kept for later use must be: the
// program may change its working directory while a file is open.  As given
// when the absolute name would be too long to open (PATH_MAX).
std::string absolute_name(const std::string& path);

// An AlignedBuffer from `sys`, or kNoSpace ("out of memory") naming `what`.
Result<AlignedBuffer> allocate_buffer(Syscalls& sys, size_t size, Pages pages, const std::string& what);

// Reads bytes [offset, offset + out.size()) of some file (a journal, a data
// log), exactly, or fails.
using ByteSource = std::function<Status(uint64_t offset, std::span<std::byte> out)>;

// Bytes given in pieces, written or appended as one.
using Gather = std::span<const std::span<const std::byte>>;

// Reads exactly out.size() bytes or fails (end of file is an error here).
Status read_exact(File& file, uint64_t offset, std::span<std::byte> out);

}  // namespace h5j
