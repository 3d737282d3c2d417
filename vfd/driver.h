// Internal API of the driver (not installed): registering it over another
// file system, for the crash-state explorer and the fault sweeps, which put
// a recording or fault-injecting FileSystem below real HDF5 workloads.
#pragma once

#include <H5FDdevelop.h>
#include <hdf5.h>

#include <string>

#include "file.h"
#include "h5journal.h"

namespace h5j {

// Registers an instance of the journal driver whose every file operation
// goes to `fs` (not owned; must outlive the registration).  Use the id with
// H5Pset_driver(fapl, id, &config).  The usual registration, H5FD_JOURNAL,
// uses the real file system.
H5JOURNAL_API hid_t register_driver_with(FileSystem& fs);

// The driver's class, as the plugin hands it to HDF5.
const H5FD_class_t& journal_driver_class();

// Why the HDF5 library containing `caller` cannot run this build of the
// driver (another major.minor, serial against parallel, a symbol it lacks,
// another copy than the one bound), or "" if it can (plugin_check.cc).
std::string plugin_mismatch(const void* caller);

}  // namespace h5j
