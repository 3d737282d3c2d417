#include "extent_map.h"

#include <algorithm>
#include <cassert>

namespace h5j {

// The two cases of insert() that change no node's key; false if neither
// applies.  `next` is the first extent that starts after addr.
//  - [addr, end) is exactly one extent: HDF5 rewrites its metadata blocks
//    whole at every flush (the superblock, an object header, a B-tree
//    node), each time to a new journal offset.  The extent takes the new
//    source.
//  - [addr, end) starts inside or at the end of the extent before it, whose
//    source it continues, and reaches no later extent: that extent grows.
//    A set of written ranges (kZeroSource) does so at nearly every write.
bool ExtentMap::insert_in_place(Iterator next, uint64_t addr, uint64_t end, uint64_t src) {
  if (next == map_->begin()) return false;
  auto prev = std::prev(next);
  uint64_t start = prev->first;
  if (start == addr && start + prev->second.len == end) {
    prev->second.src = src;
    merge_neighbours(prev);
    return true;
  }
  if (next != map_->end() && next->first <= end) return false;
  if (start + prev->second.len < addr || source_at(prev->second.src, addr - start) != src) return false;
  prev->second.len = std::max(prev->second.len, end - start);
  return true;
}

// One search, and every other step at a known place: a small metadata write
// lands inside an older, larger extent (a run of a B-tree node journaled
// whole earlier) at nearly every commit, and a search of the overlay, a
// thousand extents deep in a long generation, costs a few cache misses.
void ExtentMap::insert(uint64_t addr, uint64_t len, uint64_t src) {
  if (len == 0) return;
  auto next = map_->upper_bound(addr);
  if (insert_in_place(next, addr, addr + len, src)) return;
  merge_neighbours(map_->emplace_hint(cut(next, addr, addr + len), addr, Value{len, src}));
}

void ExtentMap::erase(uint64_t addr, uint64_t len) {
  if (len > 0) cut(map_->upper_bound(addr), addr, addr + len);
}

// Trims or drops every extent overlapping [addr, end), given `next`, the
// first that starts after addr, and returns the first extent at or past
// end: the hint for an extent at addr.  The one straddling end keeps its
// node, moved to its new key by extract and reinsert.
ExtentMap::Iterator ExtentMap::cut(Iterator next, uint64_t addr, uint64_t end) {
  auto it = next;
  if (it != map_->begin()) {
    auto prev = std::prev(it);
    const uint64_t prev_end = prev->first + prev->second.len;
    if (prev->first == addr) {
      it = prev;  // covered from its start: cut with the rest below
    } else if (prev_end > addr) {  // straddles addr: its head stays
      prev->second.len = addr - prev->first;
      if (prev_end > end)  // and its tail, past the cut
        return map_->emplace_hint(it, end, Value{prev_end - end, source_at(prev->second.src, end - prev->first)});
    }
  }
  while (it != map_->end() && it->first < end) {
    const uint64_t it_end = it->first + it->second.len;
    if (it_end <= end) {
      it = map_->erase(it);
      continue;
    }
    auto node = map_->extract(it++);
    node.mapped().src = source_at(node.mapped().src, end - node.key());
    node.mapped().len = it_end - end;
    node.key() = end;
    return map_->insert(it, std::move(node));
  }
  return it;
}

// Joins `it` with the extents beside it that continue both its address
// range and its source.
void ExtentMap::merge_neighbours(Iterator it) {
  uint64_t end = it->first + it->second.len;
  if (auto next = std::next(it); next != map_->end() && next->first == end &&
                                 next->second.src == source_at(it->second.src, it->second.len)) {
    it->second.len += next->second.len;
    map_->erase(next);
  }
  if (it == map_->begin()) return;
  auto prev = std::prev(it);
  if (prev->first + prev->second.len == it->first && source_at(prev->second.src, prev->second.len) == it->second.src) {
    prev->second.len += it->second.len;
    map_->erase(it);
  }
}

bool ExtentMap::intersects(uint64_t addr, uint64_t end) const {
  if (addr >= end) return false;
  auto it = map_->lower_bound(addr);
  if (it != map_->end() && it->first < end) return true;
  if (it == map_->begin()) return false;
  --it;
  return it->first + it->second.len > addr;
}

}  // namespace h5j
