// A canonical description of an HDF5 file's contents: every object's path
// and kind, every dataset's type, shape and data, every attribute's value.
// Producing it reads every object, so it doubles as "every object is
// readable".  Data is folded into a 64-bit digest to keep snapshots small.
#pragma once

#include <hdf5.h>

#include <optional>
#include <string>
#include <vector>

namespace h5j::explorer {

// The contents of an open file; nullopt if anything could not be read.
std::optional<std::string> describe_file(hid_t file);
// The contents of a file image in memory (opened with the core driver).
std::optional<std::string> describe_image(const std::vector<std::byte>& image);

}  // namespace h5j::explorer
