#include "gathered_reads.h"

#include <algorithm>
#include <cassert>
#include <numeric>

namespace h5j {

void GatheredReads::add(uint64_t src, uint64_t len) {
  assert(gathers(len) && !read_);
  ranges_.push_back({src, len, queued_});
  queued_ += len;
}

Status GatheredReads::read_all(const ByteSource& journal) {
  assert(!read_);
  bytes_.resize(size_t(queued_));
  std::vector<uint32_t> order(ranges_.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return ranges_[a].src < ranges_[b].src; });
  for (uint32_t i : order) {
    const Range& r = ranges_[i];
    H5J_RETURN_IF_ERROR(journal(r.src, std::span(bytes_.data() + r.at, size_t(r.len))));
  }
  read_ = true;
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
