#include "staged_writes.h"

#include <algorithm>

#include "apply_image.h"
#include "huge_pages.h"

namespace h5j {

void StagedWrites::add(const RawPattern& pattern, Gather bytes) {
  layer_.insert(pattern, 0, bytes_.size());
  if (bytes_.capacity() == 0) {
    bytes_.reserve(kMaxBytes + pattern.bytes());  // no copies as it grows
    advise_huge_pages(bytes_.data(), bytes_.capacity());  // it fills before most placings
  }
  for (std::span<const std::byte> b : bytes) bytes_.insert(bytes_.end(), b.begin(), b.end());
}

Status StagedWrites::place(File& base, uint64_t limit, GapFill gaps, bool writeback, ApplyBuffers& kept) {
  if (empty()) return Status::ok();
  H5J_RETURN_IF_ERROR(apply_raw_layer(layer_, limit, DataLogSource(bytes_), base, gaps, nullptr, &kept));
  if (writeback && bytes_.size() >= File::kEarlyWritebackMin) {
    uint64_t lo = UINT64_MAX, hi = 0;
    layer_.for_each_bucket([&](uint64_t addr, uint64_t len) {
      lo = std::min(lo, addr);
      hi = std::max(hi, addr + len);
    });
    base.start_writeback(lo, std::min(hi, limit) - std::min(lo, limit));
  }
  layer_.clear();
  bytes_.clear();
  return Status::ok();
}

}  // namespace h5j
