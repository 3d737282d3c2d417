// Copies one short run of bytes.  A strided write of small elements copies
// a million runs of 4 or 8 bytes; at those sizes the copy is inline, at a
// constant size, where a call to memcpy for each cost 10% of such a write.
#pragma once

#include <cstddef>
#include <cstring>

namespace h5j {

inline void copy_run(std::byte* to, const std::byte* from, size_t n) {
  if (n == 8) std::memcpy(to, from, 8);
  else if (n == 4) std::memcpy(to, from, 4);
  else std::memcpy(to, from, n);
}

}  // namespace h5j
