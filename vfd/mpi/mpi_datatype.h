// Collective raw I/O as plain (file address, memory, length) pieces.
//
// For a collective transfer HDF5 does not describe the selection to the
// driver in its arguments: read/write get one address and a count, and the
// layout travels in HDF5's API context as two MPI datatypes (H5Dmpio.c,
// H5D__final_collective_io).  mpio hands them to MPI-IO as a file view:
//
//   file:   `file_type` tiled from `addr` (tile n at addr + n * extent)
//   memory: `count` copies of `buf_type` from the buffer
//
// and the i-th byte of the memory stream goes to the i-th byte of the file
// stream.  This file reads the two types back (MPI_Type_get_envelope and
// MPI_Type_get_contents, for every constructor HDF5 uses) and pairs the two
// streams into pieces, in the file view's order.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rank_group.h"
#include "status.h"

namespace h5j {

// Whether the current transfer is in collective mode (H5FD_MPIO_COLLECTIVE),
// whatever its collective option.
bool collective_mode_in_context();

// Whether HDF5 declared the current call collective: every rank of the
// file's communicator makes it (the transfer mode is collective, and the
// collective option is not H5FD_MPIO_INDIVIDUAL_IO, with which mpio too
// makes independent calls).
bool collective_call_in_context();

// The collective layout HDF5 set for the current raw transfer, if any: the
// transfer mode is collective and the types are not both MPI_BYTE.
struct CollectiveTypes {
  MPI_Datatype buf_type;
  MPI_Datatype file_type;
};
bool collective_types_in_context(CollectiveTypes& out);

// The pieces of a transfer of `count` copies of `types.buf_type` through
// the file view of `types.file_type` at `addr`.  An error names a datatype
// constructor this cannot read.
Result<std::vector<CollectivePiece>> collective_pieces(uint64_t addr, size_t count, const CollectiveTypes& types);

}  // namespace h5j
