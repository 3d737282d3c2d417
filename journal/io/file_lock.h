// Whole-file advisory locks that work where HPC users write.
//
// A lock is tried three ways, in order:
//   1. flock: local file systems, GPFS, NFS (which maps it to a byte-range
//      lock), Lustre mounted with -o flock.  HDF5's own file lock is an
//      flock too, so a sec2 writer and the driver see each other's.
//   2. An open file description lock (fcntl F_OFD_SETLK), where flock is
//      missing (ENOSYS, ENOLCK, EOPNOTSUPP).  It conflicts the same way:
//      between open file descriptions, even inside one process.
//   3. Where the file system has no lock at all (Lustre mounted -o noflock,
//      NFS without its lock daemon), a lock held within this process only,
//      so that HDF5's tentative second open of a file this process has open
//      still finds it locked; SQLite's unix VFS keeps its inode list for the
//      same reason.  The result is then kUnsupported: the caller decides
//      whether a lock other processes cannot see will do
//      (HDF5_USE_FILE_LOCKING).
//
// Every lock held is entered in the process table too, so that this
// process can ask what it holds without taking a lock (held_exclusively_in_process).
//
// A lock is this process's alone: a child fork() makes gets descriptions of
// its own for the locked descriptors it inherits (file_lock.cc,
// keep_locks_from_child), so that a forked worker that outlives a crashed
// writer never keeps the writer's files locked.
//
// Invariant: a FileLock's table entry is released when the FileLock is
// destroyed, whichever of the three ways held it.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "file.h"

namespace h5j {

class FileLock {
 public:
  FileLock() = default;
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() { release_in_process(); }

  // Locks `fd` (the file at `path`) in `mode`, or changes the mode held.
  // kBusy when another open file description, or this process's table,
  // holds a conflicting lock; kUnsupported, with the system's errno, when
  // only the process table could be used (and now holds the lock).
  Status try_lock(int fd, const std::string& path, LockMode mode);
  // The process holding the lock that try_lock last found busy, where the
  // system says (Linux: /proc/locks; this process for the process table).
  std::optional<int> holder(int fd) const;
  // Whether a FileLock in this process holds `fd`'s file exclusively.  It
  // takes no lock: another process's probe must never make a writer busy.
  static bool held_exclusively_in_process(int fd);

 private:
  // Enters the lock in the process table; `granted` is what try_lock then
  // returns (ok when the system holds the lock too).
  Status lock_in_process(FileId id, int fd, LockMode mode, const std::string& path, const Status& granted);
  void release_in_process();

  std::optional<FileId> in_process_;  // the table entry held, if any
  int fd_ = -1;                       // ... through this descriptor
  bool exclusive_ = false;
  bool busy_in_process_ = false;
};

// f.try_lock(mode), tried again while the lock's holder is exiting or
// cannot be named, for up to `patience`; a live holder is refused at once.
//
// A killed process lets go of its locks only once it has unmapped its
// memory: 2 to 6 ms here for a writer with 32 MiB of steps, or an h5py
// one.  Whoever killed it may not wait for that (a `kill -9` from a
// shell, `timeout -s KILL`, a scheduler ending a job step), so h5recover
// run, or the job started again, at once would find the file busy.
inline constexpr std::chrono::milliseconds kExitedHolderPatience{500};
Status try_lock_past_exited_holder(File& f, LockMode mode, std::chrono::milliseconds patience = kExitedHolderPatience);

// The refusal of `unsupported` (try_lock's kUnsupported: a lock only this
// process sees) where HDF5_USE_FILE_LOCKING=TRUE asks for a real one.
Status lock_required_error(const Status& unsupported);

}  // namespace h5j
