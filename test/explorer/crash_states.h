// Crash states from a recording: what a disk may hold if power fails after
// the first `cut` operations were issued.
//
// The model: a file's writes and truncates are durable once a later
// kSyncData or kSyncAll of that file was issued; its xattr changes once a
// later kSyncAll was; creates and removes once a later kSyncDir was.  At the
// crash, each not-yet-durable operation may or may not have reached the disk,
// in any order, and a write may be torn at a 512- or 4096-byte boundary
// (the rest old, zeroed, or garbage); in a journal, one that starts inside
// a 512-byte sector may leave that whole sector garbage, as a write back of
// the sector rewrites its earlier bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mem_fs.h"

namespace h5j::explorer {

struct CrashSpec {
  size_t cut = 0;            // operations [0, cut) were issued
  bool everything = false;   // every issued operation reached the disk (a prefix state)
  uint64_t seed = 0;         // otherwise: which unsynced operations survive, how
  std::string describe() const;
};

Image materialize(const Image& initial, const std::vector<Op>& trace, const CrashSpec& spec);

// Indexes of the sync operations in `trace` (prefix cut points).
std::vector<size_t> sync_points(const std::vector<Op>& trace);

}  // namespace h5j::explorer
