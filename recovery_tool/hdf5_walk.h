// Walks an HDF5 file and reads everything in it: every object's path and
// kind, every dataset's type, shape and data, every attribute's value.  The
// result is a canonical description (data folded into 64-bit digests), so
// it serves both h5recover --verify ("every object is readable") and the
// crash harnesses (two files hold the same contents).
#pragma once

#include <hdf5.h>

#include <optional>
#include <string>
#include <vector>

namespace h5j {

// The contents of an open file; nullopt if anything could not be read.
std::optional<std::string> describe_file(hid_t file);
// The contents of a file image in memory (opened with the core driver).
std::optional<std::string> describe_image(const std::vector<std::byte>& image);

}  // namespace h5j
