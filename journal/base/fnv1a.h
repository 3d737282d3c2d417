// FNV-1a, 64-bit: a hash of names and test digests, where nobody chooses the
// input to collide.  (Records are checked with CRC32C, crc32c.h.)
#pragma once

#include <cstddef>
#include <cstdint>

namespace h5j {

inline constexpr uint64_t kFnv1aStart = 1469598103934665603ull;

// Continues hash `h` over `n` bytes at `p`.
inline uint64_t fnv1a64(const void* p, size_t n, uint64_t h = kFnv1aStart) {
  auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

}  // namespace h5j
