#include "unwritten_space.h"

#include <algorithm>
#include <cassert>
#include <iterator>

namespace h5j {

void UnwrittenSpace::written(uint64_t addr, uint64_t len) {
  uint64_t end = addr + len;
  if (len == 0 || end <= base_end_) return;
  addr = std::max(addr, base_end_);
  // Join every range that overlaps or touches [addr, end).
  auto it = written_.upper_bound(addr);
  if (it != written_.begin() && std::prev(it)->second >= addr) --it;
  while (it != written_.end() && it->first <= end) {
    addr = std::min(addr, it->first);
    end = std::max(end, it->second);
    it = written_.erase(it);
  }
  written_.emplace(addr, end);
}

std::vector<UnwrittenSpace::Range> UnwrittenSpace::declare(uint64_t size, uint64_t min) {
  std::vector<Range> gaps;
  auto consider = [&](uint64_t from, uint64_t to) {
    if (to > from && to - from >= std::max<uint64_t>(min, 1)) gaps.push_back({from, to - from});
  };
  if (size > base_end_) {
    uint64_t at = base_end_;
    for (const auto& [start, end] : written_) {
      if (start >= size) break;
      consider(at, start);
      at = end;
    }
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
  return end > addr && std::any_of(declared_.begin(), declared_.end(), inside) && !touched(addr, end);
}

bool UnwrittenSpace::touched(uint64_t addr, uint64_t end) const {
  auto it = written_.upper_bound(addr);
  if (it != written_.begin() && std::prev(it)->second > addr) return true;
  return it != written_.end() && it->first < end;
}

}  // namespace h5j
