// The io_uring engine.  Synchronous operations are inherited from PosixFile;
// submit_write and wait_write go through a private ring (except a small
// write with nothing in flight, made at once); sync_after_writes reaps them
// all, then calls fdatasync.
//
// Buffer ownership: submit_write() borrows the caller's bytes; they belong to
// the kernel until wait_write() for that ticket (or a later one) returns.
// Completions arrive in any order; tickets are retired in submission order.
#pragma once

#include <liburing.h>

#include <deque>

#include "posix_file.h"

namespace h5j {

class UringFile : public PosixFile {
 public:
  // Takes `fd`.  When io_uring is unavailable (EPERM under seccomp, ENOSYS,
  // io_uring_disabled) and `fallback` is set, returns a PosixFile instead.
  static Result<std::unique_ptr<File>> open(const std::string& path, UniqueFd fd, Syscalls& sys, bool fallback);
  ~UringFile() override;

  Result<uint64_t> submit_write(uint64_t offset, std::span<const std::byte> data) override;
  Status wait_write(uint64_t ticket) override;
  Status sync_after_writes() override;
  Status write_back() override;
  const char* engine_name() const override { return "uring"; }

 protected:
  bool ring_shares_descriptor() const override { return true; }

 private:
  // One write in flight: what is left of it, and how often it was retried.
  struct Pending {
    uint64_t ticket;
    uint64_t offset;
    std::span<const std::byte> rest;
    int retries = 0;
    bool done = false;       // finished, or failed (then sticky_ says why)
    bool in_kernel = false;  // an SQE for it is submitted and its CQE not yet reaped
  };

  UringFile(std::string path, UniqueFd fd, Syscalls& sys) : PosixFile(std::move(path), std::move(fd), sys) {}
  Status queue_write(Pending& p);
  Status reap_one();
  bool any_in_kernel() const;

  static constexpr unsigned kQueueDepth = 64;
  // Writes up to this size, submitted with nothing in flight, are made at
  // once.  A commit's last write is waited for at once, so the ring only
  // adds a kernel worker's wake-up to it: at 64 KiB, the W4 step of 64 KiB
  // (its records a little over) went through the ring, and its commit p50
  // was 187 to 274 us against 145 to 203 with io_engine=sync.  A buffer
  // filled mid-transaction (buffer_size, 1 MiB by default) still goes
  // through the ring, and HDF5 goes on while it is written.
  static constexpr size_t kInlineWriteMax = 256 << 10;

  io_uring ring_{};
  bool ring_ready_ = false;
  std::deque<Pending> pending_;  // in ticket order; front is the oldest
  uint64_t next_ticket_ = 1;
  Status sticky_;  // first write error: every later wait reports it
};

}  // namespace h5j
