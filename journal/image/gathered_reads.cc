#include "gathered_reads.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <numeric>

namespace h5j {

void GatheredReads::add(uint64_t src, uint64_t len) {
  assert(gathers(len) && !read_);
  ranges_.push_back({src, len, queued_});
  queued_ += len;
}

Status GatheredReads::read_all(const ByteSource& journal, File& memory) {
  assert(!read_);
  H5J_RETURN_IF_ERROR(make_room(memory));
  std::vector<uint32_t> order(ranges_.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return ranges_[a].src < ranges_[b].src; });
  for (size_t i = 0; i < order.size();) {
    size_t j = i + 1;  // order[i, j) are read in one call
    uint64_t from = ranges_[order[i]].src, to = from + ranges_[order[i]].len;
    for (; j < order.size(); ++j) {
      const Range& r = ranges_[order[j]];
      if (r.src > to + kJoinGap || r.src + r.len - from > kMaxJoined) break;
      to = std::max(to, r.src + r.len);
    }
    H5J_RETURN_IF_ERROR(read_joined(journal, std::span(order).subspan(i, j - i), from, to));
    i = j;
  }
  read_ = true;
  return Status::ok();
}

// Ranges `which`, sorted, within journal bytes [from, to): one read of
// those bytes, then each range's copied out of it.  A lone range is read
// straight into its place.
Status GatheredReads::read_joined(const ByteSource& journal, std::span<const uint32_t> which, uint64_t from,
                                  uint64_t to) {
  if (which.size() == 1) {
    const Range& r = ranges_[which[0]];
    return journal(r.src, std::span(bytes_.data() + r.at, size_t(r.len)));
  }
  joined_.resize(size_t(to - from));
  H5J_RETURN_IF_ERROR(journal(from, joined_));
  for (uint32_t i : which) {
    const Range& r = ranges_[i];
    std::memcpy(bytes_.data() + r.at, joined_.data() + (r.src - from), size_t(r.len));
  }
  return Status::ok();
}

Status GatheredReads::make_room(File& memory) {
  assert(queued_ < kBuffer);
  if (bytes_.size() >= queued_) return Status::ok();
  const size_t size = queued_ <= kSmallBuffer ? kSmallBuffer : kBuffer;
  bytes_ = AlignedBuffer();  // freed before the larger one is taken
  auto room = memory.allocate_buffer(size, size == kBuffer ? Pages::kHuge : Pages::kSystem);
  if (!room) return room.status();
  bytes_ = std::move(*room);
  return Status::ok();
}

std::span<const std::byte> GatheredReads::range(size_t i) const {
  assert(read_ && i < ranges_.size());
  return std::span(bytes_.data() + ranges_[i].at, size_t(ranges_[i].len));
}

void GatheredReads::clear() {
  ranges_.clear();
  queued_ = 0;
  read_ = false;
}

}  // namespace h5j
