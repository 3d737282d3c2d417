// What a journaled file reads as between two checkpoints, and its sizes.
//
// The image is layered, newest on top:
//     the journal overlay    bytes journaled this generation (WRITE, ZERO)
//     the raw layer          data-log extents this generation (DATA)
//     staged bytes           JournaledFile's StagedWrites, not yet in place
//     the base file          everything older, and in-place writes
// A checkpoint writes the layers into the base file and empties them.
//
// THE PROTECTED END.  The driver does not see HDF5's frees, so every byte
// below the committed size may be live.  Bytes below
//     protected_end = max(committed size, highest byte journaled this generation)
// may be changed only through the journal (the write-ahead rule, in
// write_routing.cc); the second term keeps replay from laying an older
// journaled copy over a newer in-place write.
#pragma once

#include <algorithm>
#include <cstdint>

#include "apply_image.h"
#include "extent_map.h"
#include "raw_layer.h"

namespace h5j {

struct ImageLayers {
  explicit ImageLayers(unsigned raw_bucket_shift) : raw(raw_bucket_shift) {}

  ExtentMap overlay;             // file range -> journal offset (this generation)
  RawLayer raw;                  // data-log extents (this generation), under the overlay
  uint64_t logical_size = 0;     // the size HDF5 sees
  uint64_t committed_size = 0;   // the size at the last commit
  uint64_t journal_high_water = 0;  // the highest byte journaled or logged this generation

  uint64_t protected_end() const { return std::max(committed_size, journal_high_water); }

  // [addr, addr + length) journaled at journal offset `at`.
  void journaled(uint64_t addr, uint64_t length, uint64_t at) {
    overlay.insert(addr, length, at);
    journal_high_water = std::max(journal_high_water, addr + length);
  }
  // [addr, addr + length) reads as zeros (a ZERO record).
  void zeroed(uint64_t addr, uint64_t length) {
    overlay.insert(addr, length, ExtentMap::kZeroSource);
    journal_high_water = std::max(journal_high_water, addr + length);
  }
  // The pattern's bytes are at `offset` of data log `log`.  Like a journaled
  // write it raises the high water: replay must never lay these bytes over a
  // newer in-place write.
  void logged(const RawPattern& pattern, uint32_t log, uint64_t offset) {
    add_to_image(raw, overlay, pattern, log, offset);
    journal_high_water = std::max(journal_high_water, pattern.end());
  }
  // A new generation: the layers are in the base file.
  void start_generation() {
    raw.clear();
    overlay.clear();
    journal_high_water = 0;
  }
};

}  // namespace h5j
