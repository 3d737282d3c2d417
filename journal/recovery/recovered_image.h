// The image recovery produced, as HDF5-aware code (vfd/superblock.h) sees
// it before the file is used: JournaledFile after replay, or a plain file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "status.h"

namespace h5j {

// What recovery code may do to the image it recovered (before it is used).
class RecoveredImage {
 public:
  virtual ~RecoveredImage() = default;
  virtual Status read(uint64_t addr, std::span<std::byte> out) = 0;
  // A change to the recovered bytes: in place for a read-write open, held in
  // memory for a read-only one (which must modify no file).
  virtual Status patch(uint64_t addr, std::span<const std::byte> bytes) = 0;
  // The image's size (bytes at or past it read as zeros).
  virtual uint64_t size() const = 0;
};

}  // namespace h5j
