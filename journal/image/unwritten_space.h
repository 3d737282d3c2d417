// Space HDF5 allocated in this session and has never written.
//
// The driver sees no allocation, only writes and the size HDF5 sets at each
// commit.  A contiguous dataset is allocated whole at its first write, so
// from the first commit on its unwritten rest lies below the committed end,
// where the write-ahead rule sends every write to the journal: a dataset
// written in parts with a commit after each would go to the disk twice.
// But bytes above the size the file had when this session opened it, which
// no write of this session touched, hold nothing HDF5 ever wrote: zeros (a
// file grows with holes).
//
// THE RULE.  At each commit the unwritten ranges (UnwrittenSpace::declare)
// are journaled as ZERO records in the committing transaction: "at this
// commit these bytes are zeros".  Until the next checkpoint, a write that
// lies wholly in a declared range, still unwritten, may go in place below
// the protected end; it is journaled as a PLACED record, which replay reads
// as "the file holds the newest bytes here" (it erases the range from the
// overlay, ZERO included).  So a crash brings back exactly the last commit:
//   - the PLACED write's transaction committed: the file holds its bytes,
//     durable before its COMMIT like every in-place write, and replay
//     leaves them;
//   - it did not: replay lays the last commit's ZERO over whatever of it
//     reached the disk.
// A checkpoint starts a generation without those ZERO records, so it ends
// the declared ranges (forget_declared), and the new generation declares
// them again at once, in a commit of its own, before readers are let in.
// The live image never takes these ZERO records into its overlay: its bytes
// there are zeros already, and a PLACED write must be read back.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "extent_map.h"
#include "raw_pattern.h"

namespace h5j {

class UnwrittenSpace {
 public:
  struct Range {
    uint64_t addr, len;
  };
  // At most this many ranges are declared at a commit (the largest): each
  // is a 48-byte record in every commit, so at most 12 KiB a commit.  A
  // dataset written in interleaved passes (every 8th block of rows, say)
  // leaves a gap per block: 16 covered one pass in eight of 128 blocks.
  static constexpr size_t kMaxDeclared = 256;

  UnwrittenSpace() = default;
  // `base_end`: the file's size when the session opened it; bytes below it
  // are never counted unwritten.  Ranges shorter than `min` bytes are never
  // declared.
  UnwrittenSpace(uint64_t base_end, uint64_t min) : base_end_(base_end), min_(std::max<uint64_t>(min, 1)) {}

  // Every write, whatever its route (journal, in place, staged, data log).
  void written(uint64_t addr, uint64_t len);
  // A strided write: its runs, or where the gaps between them are too short
  // to be declared, its groups or its whole span (one entry, not a million
  // for a million 8-byte elements).
  void written(const RawPattern& pattern);
  // At a commit of the file at `size`: the unwritten ranges of [base_end,
  // size) of at least `min` bytes, at most kMaxDeclared of them (the
  // largest), in address order.  They are the declared ranges from now on.
  std::vector<Range> declare(uint64_t size);
  // A checkpoint: no range is declared in the new generation yet.
  void forget_declared() { declared_.clear(); }
  // Whether [addr, end) lies wholly in one declared range and no write has
  // touched it since.
  bool declared(uint64_t addr, uint64_t end) const;

 private:
  uint64_t base_end_ = UINT64_MAX;  // default: nothing is unwritten
  uint64_t min_ = 1;
  // The written ranges above base_end_, as a set: every range maps to
  // kZeroSource, a source with no meaning here, which ExtentMap joins
  // across adjacent ranges.
  ExtentMap written_;
  std::vector<Range> declared_;  // address order
};

}  // namespace h5j
