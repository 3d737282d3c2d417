#include "unwritten_space.h"

#include <algorithm>

namespace h5j {

void UnwrittenSpace::written(uint64_t addr, uint64_t len) {
  uint64_t end = addr + len;
  if (len == 0 || end <= base_end_) return;
  addr = std::max(addr, base_end_);
  written_.insert(addr, end - addr, ExtentMap::kZeroSource);
}

void UnwrittenSpace::written(const RawPattern& p) {
  // A gap narrower than min_ could never be declared: count it written.
  const bool narrow_run_gaps = p.count1 == 1 || p.stride1 - p.run_len < min_;
  const bool narrow_group_gaps = p.count2 == 1 || p.stride2 - p.group_span() < min_;
  if (narrow_run_gaps && narrow_group_gaps) return written(p.addr, p.end() - p.addr);
  if (narrow_run_gaps) {
    for (uint64_t g = 0; g < p.count2; ++g) written(p.addr + g * p.stride2, p.group_span());
    return;
  }
  p.for_each_run([&](uint64_t a, uint64_t n, uint64_t) { written(a, n); });
}

std::vector<UnwrittenSpace::Range> UnwrittenSpace::declare(uint64_t size) {
  std::vector<Range> gaps;
  auto consider = [&](uint64_t from, uint64_t to) {
    if (to > from && to - from >= min_) gaps.push_back({from, to - from});
  };
  if (size > base_end_) {
    uint64_t at = base_end_;
    written_.for_each([&](const ExtentMap::Extent& e) {
      if (e.addr >= size) return;
      consider(at, e.addr);
      at = e.addr + e.len;
    });
    consider(at, size);
  }
  if (gaps.size() > kMaxDeclared) {
    std::partial_sort(gaps.begin(), gaps.begin() + kMaxDeclared, gaps.end(),
                      [](const Range& a, const Range& b) { return a.len > b.len; });
    gaps.resize(kMaxDeclared);
    std::sort(gaps.begin(), gaps.end(), [](const Range& a, const Range& b) { return a.addr < b.addr; });
  }
  declared_ = gaps;
  return gaps;
}

bool UnwrittenSpace::declared(uint64_t addr, uint64_t end) const {
  // The last declared range starting at or below addr (they are in address order).
  auto it = std::upper_bound(declared_.begin(), declared_.end(), addr,
                             [](uint64_t a, const Range& r) { return a < r.addr; });
  if (end <= addr || it == declared_.begin()) return false;
  --it;
  return end <= it->addr + it->len && !written_.intersects(addr, end);
}

}  // namespace h5j
