// A map from byte ranges of the HDF5 file to where their newest bytes live
// (an offset in the journal).  Ranges never overlap: inserting a range trims
// or splits whatever it covers, so the newest write always wins.  Adjacent
// ranges whose sources are also adjacent are merged, which keeps sequential
// writes to one entry.
#pragma once

#include <cstdint>
#include <optional>

#include "pooled_map.h"

namespace h5j {

class ExtentMap {
 public:
  struct Extent {
    uint64_t addr;
    uint64_t len;
    uint64_t src;  // source offset of byte `addr`, or kZeroSource
  };
  // The source of bytes that read as zeros (no offset arithmetic applies).
  static constexpr uint64_t kZeroSource = UINT64_MAX;
  static uint64_t source_at(uint64_t src, uint64_t delta) { return src == kZeroSource ? src : src + delta; }

  void insert(uint64_t addr, uint64_t len, uint64_t src);
  // Forgets [addr, addr + len).
  void erase(uint64_t addr, uint64_t len);
  // Whether any mapped byte lies in [addr, end).
  bool intersects(uint64_t addr, uint64_t end) const;
  void clear() { map_->clear(); }
  bool empty() const { return map_->empty(); }
  size_t extent_count() const { return map_->size(); }

  // Calls f(addr, len, std::optional<uint64_t> src) for consecutive pieces
  // covering [addr, addr + len): mapped pieces with their source, holes with
  // nullopt.
  template <typename F>
  void for_each_piece(uint64_t addr, uint64_t len, F&& f) const;

  // Calls f(const Extent&) for every extent in address order.
  template <typename F>
  void for_each(F&& f) const {
    for (const auto& [a, v] : *map_) f(Extent{a, v.len, v.src});
  }

 private:
  struct Value {
    uint64_t len;
    uint64_t src;
  };
  using Map = PooledMap<uint64_t, Value>;
  using Iterator = Map::Map::iterator;
  bool insert_in_place(Iterator next, uint64_t addr, uint64_t end, uint64_t src);
  Iterator cut(Iterator next, uint64_t addr, uint64_t end);
  void merge_neighbours(Iterator it);
  Map map_;  // keyed by start address
};

template <typename F>
void ExtentMap::for_each_piece(uint64_t addr, uint64_t len, F&& f) const {
  uint64_t pos = addr, stop = addr + len;
  auto it = map_->upper_bound(addr);
  if (it != map_->begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second.len > addr) it = prev;
  }
  for (; pos < stop; ) {
    if (it == map_->end() || it->first >= stop) {
      f(pos, stop - pos, std::optional<uint64_t>());
      return;
    }
    if (it->first > pos) {
      f(pos, it->first - pos, std::optional<uint64_t>());
      pos = it->first;
    }
    uint64_t piece_end = std::min(stop, it->first + it->second.len);
    f(pos, piece_end - pos, std::optional<uint64_t>(source_at(it->second.src, pos - it->first)));
    pos = piece_end;
    ++it;
  }
}

}  // namespace h5j
