// h5recover --verify: a recovered file read back whole with plain HDF5,
// and its digest for the report.
#pragma once

#include <string>

namespace h5j {

// Opens `file` with sec2 and reads every object (hdf5_walk.h).  HDF5 built
// without thread safety takes one caller at a time, and h5recover recovers
// several files at once: calls are serialized.
bool verify_readable(const std::string& file);
// The file's SHA-256 as lowercase hex; empty if it cannot be read.
std::string sha256_of(const std::string& file);

}  // namespace h5j
