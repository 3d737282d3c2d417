// The few functions below HDF5's public API that the driver calls.  libhdf5
// exports them; no public header declares them.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>

extern "C" {

// The checksum (Jenkins lookup3) HDF5 puts in version 2 and 3 superblocks
// (superblock.cc recomputes it after changing the open-for-writing flags).
uint32_t H5_checksum_metadata(const void* data, size_t len, uint32_t initval);

#ifdef H5_HAVE_PARALLEL
#include <H5FDmpio.h>

// HDF5's API context: how mpio (H5FDmpio.c, H5FD__mpio_read/write) learns
// the layout of a collective transfer; there is no public route
// (mpi/mpi_datatype.cc).
herr_t H5CX_get_io_xfer_mode(H5FD_mpio_xfer_t* io_xfer_mode);
herr_t H5CX_get_mpi_coll_datatypes(MPI_Datatype* btype, MPI_Datatype* ftype);
herr_t H5CX_get_mpio_coll_opt(H5FD_mpio_collective_opt_t* mpio_coll_opt);

// HDF5's property lists below the API.  The public setter refuses a
// library default list (HDF5 2.x: "property list is a default list"), and
// a file opened with H5P_DEFAULT hands the driver that list
// (mpi/mpi_rank_group.cc).
struct H5P_genplist_t;
void* H5I_object(hid_t id);
herr_t H5P_get(H5P_genplist_t* plist, const char* name, void* value);
herr_t H5P_set(H5P_genplist_t* plist, const char* name, const void* value);
#endif

}  // extern "C"
