// A file's bytes read ahead of where they are asked for: a window, refilled
// from the offset asked for at each miss.  A miss reads `first` bytes at
// first, twice as many at each miss after it, up to the window's size, and
// never past the `limit` its caller knows the file to hold.  What the
// window holds is what the file held when it was read: drop() it once the
// file may hold other bytes there.
//
// The window's buffer grows, by doubling, only as its misses need, so a
// small file costs a small buffer: a live reader's open of a journal of a
// few KiB, or its recovery, takes 16 KiB from the heap rather than a
// mapping of 1 MiB made and unmade at each open.
//
// The journal's reader scans records through one (journal_reader.h), and
// its writer serves a checkpoint's reads of records below its ring with
// another (journal_writer.h).
//
// Who owns what: the window's buffer is this object's, allocated at a miss
// that needs more room (File::allocate_buffer); a span read() returns
// lives until the next call.
#pragma once

#include <cstdint>
#include <span>

#include "aligned_buffer.h"
#include "file.h"

namespace h5j {

class ReadAhead {
 public:
  // A window of up to `size` bytes, whose misses read `first` bytes, then
  // more.
  explicit ReadAhead(size_t size, size_t first) : size_(size), first_(first), ahead_(first) {}
  explicit ReadAhead(size_t size) : ReadAhead(size, size) {}

  // Bytes [offset, offset + n) of `file`, n <= the window's size.  A short
  // read (the file cut below `limit`) leaves the window short, and the
  // bytes asked for are then read exactly, to fail as a plain read would.
  Result<std::span<const std::byte>> read(File& file, uint64_t offset, size_t n, uint64_t limit);
  void drop() {
    len_ = 0;
    ahead_ = first_;
  }

 private:
  Status make_room(File& file, size_t need);

  AlignedBuffer room_;
  size_t size_, first_, ahead_;  // ahead_: what the next miss reads
  uint64_t base_ = 0;            // the window holds the file's [base_, base_ + len_)
  size_t len_ = 0;
};

}  // namespace h5j
