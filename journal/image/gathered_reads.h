// The journal bytes of an overlay's small extents, read in journal order.
//
// A checkpoint, a close and a replay write the overlay into the file in
// address order (apply_image.h).  A metadata block rewritten in part at
// every commit (last_writes.h) is hundreds of small extents, each from
// another commit, so in address order their sources jump all over the
// journal, and each jump reloads the journal's read-ahead window
// (JournalWriter::read_written) or costs a read of its own.  Measured on
// W4's 40,000 steps of 8 KiB under durable=100ms, where each commit starts
// a block of its own: 1,717 loads of the 256 KiB window served 36,475
// reads, 103 ms of the checkpoints' 115 ms of applying.
//
// So apply_image takes the overlay a slice at a time: it queues the
// sources of the slice's small extents here, reads them all in journal
// order, those close together in one call (each window loads once, and a
// replay, which has no window, makes a system call for each group rather
// than each extent), and writes the slice from memory.
//
// Who owns what: the bytes read are this object's, valid until clear();
// `journal` is only called inside read_all().  Its buffer outlives clear():
// a writer keeps one GatheredReads for all its applies (ApplyBuffers), so
// the buffer's pages are faulted in once a session.  Up to kSmallBuffer it
// comes from the heap; past that it is kBuffer, in huge pages, its first
// touch a fault for each 2 MiB rather than each 4 KiB (13 us each on the
// benchmark's virtual machines: a slice of 1 MiB cost 3.3 ms of faults at
// each early write-back of W4's 8 KiB steps).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "aligned_buffer.h"
#include "file.h"
#include "huge_pages.h"

namespace h5j {

class GatheredReads {
 public:
  // Extents at least this long are read where they are applied: one read
  // of their own costs less than copying them through here.
  static constexpr uint64_t kLargeExtent = uint64_t(64) << 10;
  // A slice queues at most about this many bytes, or this many ranges.
  static constexpr uint64_t kMaxBytes = uint64_t(4) << 20;
  static constexpr size_t kMaxRanges = size_t(1) << 16;
  // Sorted ranges this close are read in one call, gap and all, up to
  // kMaxJoined bytes: a commit's records lie together, and a recovery's
  // journal is read with a system call a read.  The joined buffer serves
  // every joined read of an apply, and kMaxJoined keeps it under malloc's
  // mmap threshold (128 KiB), so that the next apply takes it from the
  // heap's pages again: a larger one is a new mapping at every apply, each
  // page a fault at first touch (13 us on the benchmark's virtual machines,
  // 3.3 ms for 1 MiB), where a 64 KiB read is already a cheap system call.
  static constexpr uint64_t kJoinGap = uint64_t(4) << 10;
  static constexpr uint64_t kMaxJoined = uint64_t(64) << 10;

  // A slice queues less than kMaxBytes + kLargeExtent bytes: full() is
  // asked after each add.
  static constexpr size_t kSmallBuffer = size_t(64) << 10;
  static constexpr size_t kBuffer = (kMaxBytes + kLargeExtent + kHugePage - 1) / kHugePage * kHugePage;

  static bool gathers(uint64_t len) { return len < kLargeExtent; }

  // Queues journal bytes [src, src + len), gathers(len); they are range i
  // for the i-th call since clear().
  void add(uint64_t src, uint64_t len);
  bool full() const { return queued_ >= kMaxBytes || ranges_.size() >= kMaxRanges; }
  // Reads every queued range through `journal`, in increasing offset, into
  // a buffer from `memory` (the file the apply writes: its engine's seam,
  // which a test can make refuse).
  Status read_all(const ByteSource& journal, File& memory);
  // Range i's bytes, once read_all() succeeded.
  std::span<const std::byte> range(size_t i) const;
  void clear();

 private:
  struct Range {
    uint64_t src = 0, len = 0;
    uint64_t at = 0;  // where its bytes start in bytes_
  };
  std::vector<Range> ranges_;  // in the order queued
  Status read_joined(const ByteSource& journal, std::span<const uint32_t> which, uint64_t from, uint64_t to);
  Status make_room(File& memory);
  AlignedBuffer bytes_;  // holds queued_ bytes once read
  std::vector<std::byte> joined_;  // a joined read's bytes, gaps and all
  uint64_t queued_ = 0;  // bytes, in all
  bool read_ = false;
};

}  // namespace h5j
