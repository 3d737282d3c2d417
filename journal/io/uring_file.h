// The io_uring engine.  Synchronous operations are inherited from PosixFile;
// submit_write and wait_write go through a private ring (except a small
// write with nothing in flight, made at once); sync_after_writes reaps them
// all, then calls fdatasync.
//
// Under io_engine=auto the ring is set up by the first write that needs it.
// A session that never fills a ring buffer (a file created, written with
// small metadata and closed; durable=false's commits) then pays neither the
// ring's setup nor its teardown, which waits for the kernel's workers: 60 us
// of a 490 us create-write-close of a 64 KiB file per time step.
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
  // Takes `fd`.  Without `fallback` (io_engine=uring) the ring is set up
  // now, and where io_uring is unavailable (EPERM under seccomp, ENOSYS,
  // io_uring_disabled) the open fails.  With it (auto) the ring waits for
  // the first write that needs one, and where io_uring is unavailable every
  // write is made at once, as PosixFile's are.
  static Result<std::unique_ptr<File>> open(const std::string& path, UniqueFd fd, Syscalls& sys, bool fallback);
  ~UringFile() override;

  Result<uint64_t> submit_write(uint64_t offset, std::span<const std::byte> data) override;
  Status wait_write(uint64_t ticket) override;
  Status sync_after_writes() override;
  Status write_back() override;
  // "auto" until a write needed the ring; then "uring", or "sync" without one.
  const char* engine_name() const override;

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

  enum class Ring { kNotYet, kReady, kUnavailable };

  UringFile(std::string path, UniqueFd fd, Syscalls& sys) : PosixFile(std::move(path), std::move(fd), sys) {}
  // Sets the ring up if no write has tried yet; its setup's result.
  int set_up_ring();
  // Whether writes go through the ring: set up now if it was not yet.
  bool ring_ready();
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
  Ring ring_state_ = Ring::kNotYet;
  std::deque<Pending> pending_;  // in ticket order; front is the oldest
  uint64_t next_ticket_ = 1;
  Status sticky_;  // first write error: every later wait reports it
};

}  // namespace h5j
