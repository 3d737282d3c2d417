// Replay: from a journal, the committed state of the HDF5 file as an overlay
// (which journal bytes cover which file bytes) plus the committed size; and
// applying an overlay to the file.  Open-time recovery, checkpoints and
// h5recover all use these two functions: one implementation.
#pragma once

#include <functional>

#include "extent_map.h"
#include "file.h"
#include "journal_reader.h"

namespace h5j {

struct ReplayPlan {
  ExtentMap overlay;      // file range -> journal offset of its newest bytes
  uint64_t logical_size;  // size of the file in the committed state
  ScanSummary summary;
};

// Scans `journal`; the plan starts from the generation's base size, so a
// journal with no committed transaction yields the file as the generation
// found it.
Result<ReplayPlan> plan_replay(JournalReader& reader);

// Reads journal bytes [offset, offset + n) into a buffer.
using JournalSource = std::function<Status(uint64_t offset, std::span<std::byte> out)>;

// Writes every extent of `overlay` into `base` in address order, adjacent
// extents coalesced into large writes, then sets the size to `logical_size`.
// Does not sync.  Idempotent: applying the same plan twice gives the same file.
Status apply_overlay(const ExtentMap& overlay, uint64_t logical_size, const JournalSource& source, File& base);

}  // namespace h5j
