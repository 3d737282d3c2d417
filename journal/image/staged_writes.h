// Small raw pieces in new space, held in memory and written in place later,
// adjacent runs coalesced.
//
// Why: under MPI a rank cannot gather its small pieces into sieve spans (their
// gaps may be other ranks'), and writing each alone queues the ranks on the
// file's inode lock; serially a sieve span costs a read of its gaps.  Staged, a
// strided block fills the gaps of the ones before it, and is written as a
// few large writes.  The write-ahead rule allows it: new space (at or above
// the protected end) holds nothing committed.
//
// Invariants (the owner, JournaledFile, keeps them):
//  - the image is base, then these bytes, then the data log's extents, then
//    the journal overlay: nothing older overlaps a staged extent (the raw
//    layer's and the overlay's extents end below the protected end these
//    were above, and staging does not raise it), and no in-place write lands
//    on one (it is journaled instead: write_by_rule);
//  - they are placed before the commit that covers them syncs the file.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "aligned_buffer.h"
#include "apply_image.h"
#include "file.h"
#include "raw_layer.h"

namespace h5j {

class StagedWrites {
 public:
  // Staged bytes are placed once there are this many (and at every commit).
  static constexpr uint64_t kMaxBytes = 16 << 20;

  bool empty() const { return layer_.empty(); }
  bool full() const { return bytes_.size() >= kMaxBytes; }
  // Whether a staged extent covers a byte of [addr, end).
  bool touches(uint64_t addr, uint64_t end) const { return layer_.touches(addr, end); }
  void add(const RawPattern& pattern, Gather bytes);
  // Lays the staged bytes inside [addr, addr + out.size()) onto `out`.
  Status lay_onto(uint64_t addr, std::span<std::byte> out) const {
    return layer_.lay_onto(addr, out, DataLogSource(bytes_));
  }
  // Writes the staged bytes below `limit` into `base` (not synced) and
  // forgets every staged byte; `gaps` says whether the bytes between
  // nearby runs may be written back with them (replay.h); with
  // `writeback`, a large placing starts on its way to the disk at once.
  // `kept` is the buffers to apply through (ApplyBuffers).
  Status place(File& base, uint64_t limit, GapFill gaps, bool writeback, ApplyBuffers& kept);

 private:
  RawLayer layer_;               // the staged extents, their bytes in bytes_
  std::vector<std::byte> bytes_;  // packed, in staging order; keeps its capacity between placings
};

}  // namespace h5j
