// The operating-system calls the real engines make, behind one interface, so
// the fault sweep can fail the N-th write, read, sync, truncate, io_uring
// setup or buffer allocation below the engines' own retry and short-write
// handling.  Each PosixFileSystem has one; real_syscalls() passes through.
// Calls in the POSIX style return -1 and set errno; uring_* return -errno.
#pragma once

#include <liburing.h>
#include <sys/types.h>

#include <cstddef>

namespace h5j {

class Syscalls {
 public:
  virtual ~Syscalls() = default;
  // Whether this seam counts or records the calls (a test's): they must
  // then come in one thread's order (FileSystem::deterministic).
  virtual bool deterministic() const { return false; }
  virtual ssize_t pread(int fd, void* buf, size_t n, off_t off);
  virtual ssize_t pwrite(int fd, const void* buf, size_t n, off_t off);
  virtual int fdatasync(int fd);
  virtual int fsync(int fd);
  // sync_file_range with WAIT_BEFORE | WRITE | WAIT_AFTER over the whole file.
  virtual int write_back(int fd);
  // sync_file_range with WRITE alone: starts writeback, waits for nothing.
  virtual int start_writeback(int fd, off_t offset, off_t length);
  virtual int ftruncate(int fd, off_t size);
  virtual int uring_setup(unsigned entries, io_uring* ring);
  // The result of a completed io_uring write, as the engine sees it.
  virtual int uring_result(int res) { return res; }
  // Memory for I/O buffers, aligned to `alignment` (a power of two, at
  // least a page); nullptr when none can be had.  It comes from the C
  // allocator and is freed with std::free, not through this seam: a buffer
  // may outlive the seam that made it (the process's pool of apply buffers,
  // apply_buffers_pool.h, keeps buffers a file's apply allocated after that
  // file and its file system are gone).
  virtual void* alloc_buffer(size_t size, size_t alignment);
};

Syscalls& real_syscalls();

}  // namespace h5j
