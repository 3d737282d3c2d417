// A selection write's pieces, in batches.
//
// HDF5 hands a driver with a write_selection callback the dataspaces of a
// write (memory and file) instead of a vector of every piece.  Without it,
// HDF5 builds that vector itself, growing three arrays by doubling: a
// strided write of a million 8-byte elements costs a million-entry copy
// and its page faults before the driver sees a byte, about as much as
// sec2's whole write.  Walked here in batches of kBatch, the pieces cost
// only the walk.
#pragma once

#include <hdf5.h>

#include <functional>
#include <span>
#include <vector>

#include "journal_options.h"
#include "status.h"

namespace h5j {

// Walks the selections of `mem_space` and `file_space` (the same number of
// elements of `element_size` bytes each) in step, as HDF5's own
// translation to a vector does, and calls `batch` with the pieces, in the
// file selection's order, up to kBatch at a time.  A piece is a run that is
// contiguous both in the file (from `file_offset`) and in `buf`.
// `scratch` holds each batch; the caller keeps it between calls.
constexpr size_t kSelectionBatch = 1 << 16;
Status for_each_selection_batch(hid_t mem_space, hid_t file_space, haddr_t file_offset, size_t element_size,
                                const void* buf, std::vector<RawPiece>& scratch,
                                const std::function<Status(std::span<const RawPiece>)>& batch);

}  // namespace h5j
