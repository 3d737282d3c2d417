// What a journaled file reads as between two checkpoints, and its sizes.
//
// The image is layered, newest on top:
//     the journal overlay    bytes journaled this generation (WRITE, ZERO)
//     the raw layer          data-log extents this generation (DATA)
//     staged bytes           JournaledFile's StagedWrites, not yet in place
//     the base file          everything older, and in-place writes
// A checkpoint writes the layers into the base file and empties them.
// A durable serial writer also writes overlay extents back into the base
// file before the checkpoint (early_write_back.cc); `not_in_file` keeps
// the ones it has not written back yet.
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
#include <utility>

#include "apply_image.h"
#include "extent_map.h"
#include "raw_layer.h"

namespace h5j {

struct ImageLayers {
  // `writes_back_early`: whether not_in_file is kept (a durable serial
  // writer's); else it stays empty, and the overlay goes whole.
  ImageLayers(unsigned raw_bucket_shift, bool writes_back_early)
      : raw(raw_bucket_shift), writes_back_early_(writes_back_early) {}

  ExtentMap overlay;             // file range -> journal offset (this generation)
  // The overlay's extents the base file may lack, with the same sources
  // (a part of the overlay): the whole overlay until the generation's first
  // early write-back.  Kept only for a writer that writes back early, and
  // used only while the raw layer is empty: a raw layer goes under the
  // whole overlay.
  ExtentMap not_in_file;
  RawLayer raw;                  // data-log extents (this generation), under the overlay
  uint64_t logical_size = 0;     // the size HDF5 sees
  uint64_t committed_size = 0;   // the size at the last commit
  uint64_t journal_high_water = 0;  // the highest byte journaled or logged this generation

  uint64_t protected_end() const { return std::max(committed_size, journal_high_water); }

  // [addr, addr + length) journaled at journal offset `at`.
  void journaled(uint64_t addr, uint64_t length, uint64_t at) {
    overlay.insert(addr, length, at);
    if (writes_back_early_) not_in_file.insert(addr, length, at);
    journal_high_water = std::max(journal_high_water, addr + length);
  }
  // [addr, addr + length) reads as zeros (a ZERO record).
  void zeroed(uint64_t addr, uint64_t length) {
    overlay.insert(addr, length, ExtentMap::kZeroSource);
    if (writes_back_early_) not_in_file.insert(addr, length, ExtentMap::kZeroSource);
    journal_high_water = std::max(journal_high_water, addr + length);
  }
  // The pattern's bytes are at `offset` of data log `log`.  Like a journaled
  // write it raises the high water: replay must never lay these bytes over a
  // newer in-place write.
  void logged(const RawPattern& pattern, uint32_t log, uint64_t offset) {
    add_to_image(raw, overlay, pattern, log, offset);
    if (writes_back_early_) erase_runs(not_in_file, pattern);
    journal_high_water = std::max(journal_high_water, pattern.end());
  }
  // [addr, addr + length) was written in place into space the file held
  // unwritten (a PLACED record): no layer holds its bytes any longer.
  void placed(uint64_t addr, uint64_t length) {
    overlay.erase(addr, length);
    if (writes_back_early_) not_in_file.erase(addr, length);
  }
  // The layers of a replay's plan, none of them in the file yet.
  void take(RawLayer&& plan_raw, ExtentMap&& plan_overlay) {
    raw = std::move(plan_raw);
    overlay = std::move(plan_overlay);
    if (writes_back_early_) not_in_file = overlay;
  }
  // What a checkpoint or a close writes over the raw layer.  Extents
  // written back early are in the file already, unless a raw layer's bytes
  // go under them: then the overlay goes whole.
  const ExtentMap& overlay_to_apply() const { return writes_back_early_ && raw.empty() ? not_in_file : overlay; }
  // not_in_file's bytes in [from, end) are in the base file now.
  void written_back(uint64_t from, uint64_t end) {
    if (end > from) not_in_file.erase(from, end - from);
  }
  // A new generation: the layers are in the base file.
  void start_generation() {
    raw.clear();
    overlay.clear();
    not_in_file.clear();
    journal_high_water = 0;
  }
 private:
  bool writes_back_early_;
};

}  // namespace h5j
