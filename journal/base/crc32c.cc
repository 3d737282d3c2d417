#include "crc32c.h"

#include <isa-l/crc.h>

#include <climits>

namespace h5j {

uint32_t crc32c(const void* data, size_t n, uint32_t crc) {
  // ISA-L works on the raw register (no pre/post inversion) and takes an int
  // length, so invert around it and feed large buffers in pieces.
  auto* p = static_cast<unsigned char*>(const_cast<void*>(data));
  uint32_t reg = ~crc;
  while (n > 0) {
    int chunk = n > size_t(INT_MAX / 2) ? INT_MAX / 2 : int(n);
    reg = crc32_iscsi(p, chunk, reg);
    p += chunk;
    n -= size_t(chunk);
  }
  return ~reg;
}

}  // namespace h5j
