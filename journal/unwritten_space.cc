#include "unwritten_space.h"

#include <algorithm>

namespace h5j {

void UnwrittenSpace::written(uint64_t addr, uint64_t len) {
  uint64_t end = addr + len;
  if (len == 0 || end <= base_end_) return;
  addr = std::max(addr, base_end_);
  written_.insert(addr, end - addr, ExtentMap::kZeroSource);
}

std::vector<UnwrittenSpace::Range> UnwrittenSpace::declare(uint64_t size, uint64_t min) {
  std::vector<Range> gaps;
  auto consider = [&](uint64_t from, uint64_t to) {
    if (to > from && to - from >= std::max<uint64_t>(min, 1)) gaps.push_back({from, to - from});
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
  auto inside = [&](const Range& r) { return r.addr <= addr && end <= r.addr + r.len; };
  return end > addr && std::any_of(declared_.begin(), declared_.end(), inside) && !written_.intersects(addr, end);
}

}  // namespace h5j
