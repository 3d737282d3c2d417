#include "in_place_writes.h"

#include <algorithm>
#include <cassert>

#include "crc32c.h"

namespace h5j {

void InPlaceWrites::wrote(uint64_t addr, std::span<const std::byte> data) {
  bytes_ += data.size();
  if (!keeps_extents_ || data.empty() || overflowed_) return;
  if (bytes_ > kMaxBytes || extents_->size() >= kMaxExtents) {
    overflowed_ = true;
    extents_->clear();
    return;
  }
  const uint64_t end = addr + data.size();
  // The extents this write overlaps: the one before it, if it reaches past
  // addr, and every one starting inside it.
  auto first = extents_->lower_bound(addr);
  if (first != extents_->begin() && std::prev(first)->second.end() > addr) --first;
  auto last = first;
  while (last != extents_->end() && last->second.addr < end) ++last;
  if (first == last) {
    // No overlap: continue a run that ends exactly here, or start one.
    auto before = extents_->lower_bound(addr);
    if (before != extents_->begin()) {
      Extent& prev = std::prev(before)->second;
      if (prev.exact && prev.end() == addr) {
        prev.crc = crc32c(data.data(), data.size(), prev.crc);
        prev.len += data.size();
        return;
      }
    }
    (*extents_)[addr] = Extent{addr, data.size(), crc32c(data.data(), data.size()), true};
    return;
  }
  // Overlap: one extent over the union, read back at the commit.
  Extent merged{std::min(addr, first->second.addr), 0, 0, false};
  uint64_t merged_end = std::max(end, std::prev(last)->second.end());
  merged.len = merged_end - merged.addr;
  extents_->erase(first, last);
  (*extents_)[merged.addr] = merged;
}

std::vector<InPlaceWrites::Extent> InPlaceWrites::extents() const {
  std::vector<Extent> out;
  out.reserve(extents_->size());
  for (const auto& [addr, e] : *extents_) out.push_back(e);
  return out;
}

}  // namespace h5j
