// The HDF5 library the driver runs in (loaded_hdf5.cc).
//
// The driver is linked without libhdf5: the HDF5 it calls is the copy that
// loaded it as a plugin, or, in an application linked with the driver, the
// copy that application uses.  Whatever that copy's file name (a pip
// wheel's libhdf5-<hash>.so, conda's, spack's, Debian's), no second HDF5 is
// ever loaded.
#pragma once

#include <string>

namespace h5j {

struct LoadedHdf5 {
  std::string path;      // the library's file, as the dynamic loader names it
  const void* base;      // where it is mapped: tells one copy from another
  std::string missing;   // the HDF5 symbols the driver needs that it lacks, or ""
};

// Binds every HDF5 function and variable the driver uses to the library
// whose code contains `code` (a return address inside HDF5, or one of its
// functions).  The first call binds; every later call returns that first
// result, whatever `code` it is given.  Null if `code` is in no library.
const LoadedHdf5* bind_hdf5_at(const void* code);

// The library bound, binding to the HDF5 in the process's global scope if
// nothing is bound yet (an application linked with the driver); null if
// there is none.
const LoadedHdf5* bound_hdf5();

}  // namespace h5j
