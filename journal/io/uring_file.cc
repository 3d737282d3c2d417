#include "uring_file.h"

#include <cerrno>
#include <climits>

#include "open_files_limit.h"

namespace h5j {

Result<std::unique_ptr<File>> UringFile::open(const std::string& path, UniqueFd fd, Syscalls& sys, bool fallback) {
  std::unique_ptr<UringFile> f(new UringFile(path, std::move(fd), sys));
  if (!fallback)
    if (int rc = f->set_up_ring(); rc < 0)
      return Status::from_errno(-rc, "io_uring setup for " + path + " (set io_engine=sync or auto)");
  return std::unique_ptr<File>(std::move(f));
}

UringFile::~UringFile() {
  // Buffers must not be freed while the kernel may still write from them:
  // reap every SQE still in the kernel, whatever its outcome.
  while (any_in_kernel()) (void)reap_one();
  if (ring_state_ == Ring::kReady) io_uring_queue_exit(&ring_);
}

int UringFile::set_up_ring() {
  int rc = sys_.uring_setup(kQueueDepth, &ring_);
  while (rc == -EMFILE && raise_open_files_limit()) rc = sys_.uring_setup(kQueueDepth, &ring_);
  ring_state_ = rc < 0 ? Ring::kUnavailable : Ring::kReady;
  return rc;
}

bool UringFile::ring_ready() {
  if (ring_state_ == Ring::kNotYet) set_up_ring();
  return ring_state_ == Ring::kReady;
}

const char* UringFile::engine_name() const {
  switch (ring_state_) {
    case Ring::kReady: return "uring";
    case Ring::kUnavailable: return "sync";
    case Ring::kNotYet: break;
  }
  return "auto";
}

bool UringFile::any_in_kernel() const {
  for (const auto& p : pending_)
    if (p.in_kernel) return true;
  return false;
}

Status UringFile::queue_write(Pending& p) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) {
    io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) return error(EBUSY, "io_uring queue full for write to");
  }
  unsigned len = unsigned(std::min<size_t>(p.rest.size(), 1u << 30));
  io_uring_prep_write(sqe, fd(), p.rest.data(), len, p.offset);
  io_uring_sqe_set_data64(sqe, p.ticket);
  p.in_kernel = true;
  int rc = io_uring_submit(&ring_);
  if (rc < 0) {
    p.in_kernel = false;
    p.done = true;
    return sticky_ = error(-rc, "io_uring submit write to");
  }
  return Status::ok();
}

Result<uint64_t> UringFile::submit_write(uint64_t offset, std::span<const std::byte> data) {
  if (!sticky_.is_ok()) return sticky_;
  if ((pending_.empty() && data.size() <= kInlineWriteMax) || !ring_ready()) {
    // Nothing in flight to overlap with, and little to copy: the ring would
    // hand this buffered write to a kernel worker thread, which costs more
    // than writing it now (a small commit's last write, typically).  Or no
    // ring at all.  Its ticket is complete on return.
    if (Status s = PosixFile::write_at(offset, data); !s) return sticky_ = s;
    return next_ticket_++;
  }
  while (pending_.size() >= kQueueDepth - 1) H5J_RETURN_IF_ERROR(reap_one());
  pending_.push_back(Pending{next_ticket_++, offset, data});
  H5J_RETURN_IF_ERROR(queue_write(pending_.back()));
  return pending_.back().ticket;
}

// Waits for one completion and applies it to its write: finished, continued
// after a short write, retried after EAGAIN/EINTR/ECANCELED, or failed.
Status UringFile::reap_one() {
  io_uring_cqe* cqe = nullptr;
  int rc;
  do rc = io_uring_wait_cqe(&ring_, &cqe);
  while (rc == -EINTR);
  if (rc < 0) return error(-rc, "io_uring wait on");
  uint64_t ticket = io_uring_cqe_get_data64(cqe);
  int res = sys_.uring_result(cqe->res);
  io_uring_cqe_seen(&ring_, cqe);

  Status status;
  for (auto& p : pending_) {
    if (p.ticket != ticket || !p.in_kernel) continue;
    p.in_kernel = false;
    if (!sticky_.is_ok()) {
      p.done = true;  // an earlier write failed: nothing more is continued
    } else if (res == -EAGAIN || res == -EINTR || res == -ECANCELED) {
      if (++p.retries > kMaxRetries) status = sticky_ = error(-res, "write (retries exhausted)");
      else status = queue_write(p);
    } else if (res < 0) {
      status = sticky_ = error(-res, "write");
    } else if (res == 0) {
      status = sticky_ = error(EIO, "write (no progress)");
    } else {
      p.offset += uint64_t(res);
      p.rest = p.rest.subspan(size_t(res));
      if (!p.rest.empty()) status = queue_write(p);  // short write: continue
      else p.done = true;
    }
    if (!status.is_ok()) p.done = true;
    break;
  }
  while (!pending_.empty() && pending_.front().done && !pending_.front().in_kernel) pending_.pop_front();
  return status;
}

Status UringFile::wait_write(uint64_t ticket) {
  while (sticky_.is_ok() && !pending_.empty() && pending_.front().ticket <= ticket) {
    if (!pending_.front().in_kernel) break;  // cannot happen while sticky_ is ok; never wait on nothing
    H5J_RETURN_IF_ERROR(reap_one());
  }
  return sticky_;
}

Status UringFile::sync_after_writes() {
  // An fsync covers only writes that have completed, so every write is
  // reaped (and short writes finished) first.  The fdatasync itself is a
  // plain system call: the caller waits for it anyway, and through the ring
  // it would run on a kernel worker thread, a context switch dearer.
  H5J_RETURN_IF_ERROR(wait_write(UINT64_MAX));
  return sync_data();
}

// Like sync_after_writes: only completed writes are written back.
Status UringFile::write_back() {
  H5J_RETURN_IF_ERROR(wait_write(UINT64_MAX));
  return PosixFile::write_back();
}

}  // namespace h5j
