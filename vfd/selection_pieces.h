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
#include <memory>
#include <span>
#include <vector>

#include "journal_options.h"
#include "status.h"

namespace h5j {

// Walks the selections of `mem_space` and `file_space` (the same number of
// elements of `element_size` bytes each) in step, as HDF5's own
// translation to a vector does, and calls `batch` with the pieces, in the
// file selection's order, up to kSelectionBatch at a time.  A piece is a
// run contiguous in the file (from `file_offset`): contiguous in `buf`
// too, or gathered from small runs that follow one another in the file
// and not in `buf` (an array of structs written a member at a time,
// h5bench's IC pattern: a 4-byte piece each would cost the engine's work
// per piece a million times, where HDF5 gathers them once for sec2).
// `scratch` holds each batch and the gathered bytes; the caller keeps it
// between calls.
constexpr size_t kSelectionBatch = 1 << 16;
constexpr size_t kGatherPiece = 1024;        // runs up to this long are gathered
constexpr size_t kGatherBytes = 4 << 20;     // bytes gathered in a batch, at most
struct SelectionScratch {
  std::vector<RawPiece> pieces;  // a vector write's raw pieces (driver_io.cc)
  // Room for kSelectionBatch pieces of a selection, allocated at the first
  // write and never constructed whole: a batch touches only the pages its
  // pieces fill.  Constructing 1.5 MiB of pieces touched 384 new pages in
  // every session that wrote a selection, a page fault each (W2's 32^3
  // blocks use 1,024 pieces a write).
  std::unique_ptr<std::byte[]> batch;
  // kGatherBytes, allocated at the first write and never zeroed: a write
  // that gathers nothing touches none of its pages.
  std::unique_ptr<std::byte[]> gathered;
};
Status for_each_selection_batch(hid_t mem_space, hid_t file_space, haddr_t file_offset, size_t element_size,
                                const void* buf, SelectionScratch& scratch,
                                const std::function<Status(std::span<const RawPiece>)>& batch);

}  // namespace h5j
