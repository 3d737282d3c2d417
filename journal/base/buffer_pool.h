// Buffers kept for the next user of the same size and pages: the journal's
// ring (journal_writer.h), given back at a session's end, serves the next
// session the process opens.
//
// Why: a ring of 4 MiB is allocated at a session's first record and, kept
// by its writer, freed at its close.  The free unmaps it, and with a second
// thread in the process (the closing thread, a background sync) that
// flushes the other cores' TLBs; the next session's ring then faults its
// pages in again, at 13 us a 4 KiB page on the benchmark's virtual
// machines.  A loop of files, each created, written, flushed and closed,
// spent 152 to 216 us on its first commit and 304 to 418 us on its close
// with a ring each; 46 to 55 and 198 to 239 us with the ring kept here
// (sec2: 5 and 10 us; design.md §4).
//
// At most kMaxIdle buffers wait, so that a program that had many files
// open at once keeps no more than that once it has closed them.
//
// Who owns what: give_back() takes a buffer, take() hands one over.  A
// taken buffer holds whatever its last user left in it: a taker must not
// count on zeros.  Thread-safe.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "aligned_buffer.h"

namespace h5j {

class BufferPool {
 public:
  static constexpr size_t kMaxIdle = 2;

  // A kept buffer of exactly `size` bytes in `pages`, or none.
  std::optional<AlignedBuffer> take(size_t size, Pages pages) {
    std::lock_guard lock(mutex_);
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      if (it->buffer.size() != size || it->pages != pages) continue;
      AlignedBuffer taken = std::move(it->buffer);
      idle_.erase(it);
      return taken;
    }
    return std::nullopt;
  }

  // Keeps `buffer`, allocated in `pages`, for a later take(); past kMaxIdle,
  // frees the one kept longest.
  void give_back(AlignedBuffer buffer, Pages pages) {
    if (!buffer.valid()) return;
    AlignedBuffer dropped;  // freed outside the lock
    std::lock_guard lock(mutex_);
    if (idle_.size() == kMaxIdle) {
      dropped = std::move(idle_.front().buffer);
      idle_.erase(idle_.begin());
    }
    idle_.push_back({std::move(buffer), pages});
  }

  size_t idle() const {
    std::lock_guard lock(mutex_);
    return idle_.size();
  }

 private:
  struct Kept {
    AlignedBuffer buffer;
    Pages pages;
  };
  mutable std::mutex mutex_;
  std::vector<Kept> idle_;  // oldest first
};

}  // namespace h5j
