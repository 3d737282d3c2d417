// Apply buffers (apply_image.h, ApplyBuffers) shared by the files a
// process writes.
//
// Why: a writer applies through the same buffers all session, so that
// their pages are faulted in once (13 us a 4 KiB page on the benchmark's
// virtual machines), and the large ones are huge pages, zeroed whole at
// their first touch.  Kept by each file, they held 2 to 4 MiB for every
// file open at once: 32 files taking 8 KiB steps, each flushed, peaked at
// 200 MiB of RSS against 94 with a set made at each apply.  HDF5 makes
// one call at a time, so one set serves every file of a process; a second
// is made only while two applies run at once (a thread-safe HDF5's
// threads, or a file without a shared pool beside one with).
//
// Who owns what: the pool owns its idle sets.  take() hands one over to a
// Lease, which owns it until the Lease ends and gives it back.  The pool
// must outlive every Lease it gave.
#pragma once

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "apply_image.h"

namespace h5j {

class ApplyBuffersPool {
 public:
  class Lease {
   public:
    Lease(ApplyBuffersPool& pool, std::unique_ptr<ApplyBuffers> buffers)
        : pool_(&pool), buffers_(std::move(buffers)) {}
    Lease(Lease&& o) noexcept : pool_(o.pool_), buffers_(std::move(o.buffers_)) {}
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    ~Lease() {
      if (buffers_) pool_->give_back(std::move(buffers_));
    }
    ApplyBuffers* get() const { return buffers_.get(); }
    ApplyBuffers& operator*() const { return *buffers_; }
    ApplyBuffers* operator->() const { return buffers_.get(); }

   private:
    ApplyBuffersPool* pool_;
    std::unique_ptr<ApplyBuffers> buffers_;
  };

  // An idle set if there is one (its buffers as the last apply left
  // them), else a new, empty one.
  Lease take() {
    std::unique_ptr<ApplyBuffers> buffers;
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        buffers = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (!buffers) buffers = std::make_unique<ApplyBuffers>();
    return Lease(*this, std::move(buffers));
  }

 private:
  void give_back(std::unique_ptr<ApplyBuffers> buffers) {
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(buffers));
  }

  std::mutex mutex_;
  std::vector<std::unique_ptr<ApplyBuffers>> idle_;  // at most as many as applies ever ran at once
};

}  // namespace h5j
