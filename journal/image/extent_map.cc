#include "extent_map.h"

#include <algorithm>
#include <cassert>

namespace h5j {

void ExtentMap::split_at(uint64_t at) {
  auto it = map_->upper_bound(at);
  if (it == map_->begin()) return;
  --it;
  uint64_t start = it->first, len = it->second.len;
  if (start >= at || start + len <= at) return;
  uint64_t head = at - start;
  map_->emplace(at, Value{len - head, source_at(it->second.src, head)});
  it->second.len = head;
}

// The two cases of insert() that need no new node; false if neither
// applies.  A small metadata write on the general path costs 1,000
// instructions, most of them a node allocated and one freed.
//  - [addr, end) is exactly one extent: HDF5 rewrites its metadata blocks
//    whole at every flush (the superblock, an object header, a B-tree
//    node), each time to a new journal offset.  The extent takes the new
//    source.
//  - [addr, end) starts inside or at the end of the extent before it, whose
//    source it continues, and reaches no later extent: that extent grows.
//    A set of written ranges (kZeroSource) does so at nearly every write.
bool ExtentMap::insert_in_place(uint64_t addr, uint64_t end, uint64_t src) {
  auto next = map_->upper_bound(addr);
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

void ExtentMap::insert(uint64_t addr, uint64_t len, uint64_t src) {
  if (len == 0) return;
  uint64_t end = addr + len;
  if (insert_in_place(addr, end, src)) return;
  split_at(addr);
  split_at(end);
  map_->erase(map_->lower_bound(addr), map_->lower_bound(end));
  merge_neighbours(map_->emplace(addr, Value{len, src}).first);
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

void ExtentMap::erase(uint64_t addr, uint64_t len) {
  if (len == 0) return;
  split_at(addr);
  split_at(addr + len);
  map_->erase(map_->lower_bound(addr), map_->lower_bound(addr + len));
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
