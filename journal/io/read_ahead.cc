#include "read_ahead.h"

#include <algorithm>
#include <cassert>

namespace h5j {

Result<std::span<const std::byte>> ReadAhead::read(File& file, uint64_t offset, size_t n, uint64_t limit) {
  assert(n <= size_);
  if (offset < base_ || offset + n > base_ + len_) {
    len_ = 0;
    size_t want = size_t(std::min<uint64_t>(std::max(ahead_, n), limit > offset ? limit - offset : 0));
    ahead_ = std::min(2 * ahead_, size_);
    H5J_RETURN_IF_ERROR(make_room(file, std::max(want, n)));
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

// Room for `need` <= size_ bytes, what the window held dropped.  It grows
// by doubling from `first`, so a window reaches its size in a few
// allocations however its reads grow (a follower's reads grow with the
// journal it tails).
Status ReadAhead::make_room(File& file, size_t need) {
  assert(need <= size_ && len_ == 0);
  if (room_.valid() && room_.size() >= need) return Status::ok();
  size_t size = std::min(size_, std::max({need, first_, 2 * room_.size()}));
  room_ = AlignedBuffer();  // freed before the larger one is taken
  auto room = file.allocate_buffer(size, Pages::kSystem);
  if (!room) return room.status();
  room_ = std::move(*room);
  return Status::ok();
}

}  // namespace h5j
