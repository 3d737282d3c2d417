// CRC32C (Castagnoli), computed by ISA-L, the storage field's own library.
#pragma once

#include <cstddef>
#include <cstdint>

namespace h5j {

// Standard CRC32C of [data, data+n) continuing from `crc` (0 to start).
// crc32c("123456789") == 0xE3069283.
uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);

// Stored CRCs are masked, as in LevelDB: a CRC computed over bytes that
// themselves contain CRCs is otherwise prone to trivial collisions, and an
// all-zero record must not carry a valid checksum.
inline uint32_t mask_crc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline uint32_t unmask_crc(uint32_t masked) {
  uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

}  // namespace h5j
