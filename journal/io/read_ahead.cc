#include "read_ahead.h"

#include <algorithm>
#include <cassert>

namespace h5j {

Result<std::span<const std::byte>> ReadAhead::read(File& file, uint64_t offset, size_t n, uint64_t limit) {
  assert(n <= size_);
  if (offset < base_ || offset + n > base_ + len_) {
    if (!room_.valid()) {
      auto room = file.allocate_buffer(size_);
      if (!room) return room.status();
      room_ = std::move(*room);
    }
    len_ = 0;
    size_t want = size_t(std::min<uint64_t>(std::max(ahead_, n), limit > offset ? limit - offset : 0));
    ahead_ = std::min(2 * ahead_, size_);
    auto got = file.read_at(offset, std::span(room_.data(), want));
    if (!got) return got.status();
    base_ = offset;
    len_ = *got;
    if (n > len_) {
      len_ = 0;
      H5J_RETURN_IF_ERROR(read_exact(file, offset, std::span(room_.data(), n)));
      len_ = n;
    }
  }
  return std::span<const std::byte>(room_.data() + (offset - base_), n);
}

}  // namespace h5j
