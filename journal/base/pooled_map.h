// A std::map whose nodes come from a pool of its own, kept when they are
// freed, for maps the engine keeps while HDF5 writes (the overlay, the set
// of written space, a commit's in-place extents).
//
// Why not the heap: a node taken from it while HDF5 writes lands in
// whatever hole the heap has, and outlives it.  HDF5 frees and takes again
// a buffer of one size at each write (its chunk buffers, its two
// type-conversion buffers of 1 MiB), which then no longer fits the hole and
// comes from the heap's top; glibc gives the top back at the free, and the
// next write touches it afresh.  Under sec2 those holes stay free.  Measured
// (docs/performance.md): W4's 4 MiB steps grew the heap once more than
// sec2's; h5bench's CI pattern took 24,970 page faults a run against sec2's
// 5,936.  The pool keeps at most the most nodes the map ever held.
#pragma once

#include <map>
#include <memory_resource>
#include <utility>

namespace h5j {

template <class K, class V>
class PooledMap {
 public:
  using Map = std::pmr::map<K, V>;
  PooledMap() = default;
  // A copy or a move takes the entries into this map's own pool.
  PooledMap(const PooledMap& o) : map_(o.map_, &pool_) {}
  PooledMap(PooledMap&& o) : map_(std::move(o.map_), &pool_) {}
  PooledMap& operator=(const PooledMap& o) {
    map_ = o.map_;
    return *this;
  }
  PooledMap& operator=(PooledMap&& o) {
    map_ = std::move(o.map_);
    return *this;
  }

  Map& operator*() { return map_; }
  const Map& operator*() const { return map_; }
  Map* operator->() { return &map_; }
  const Map* operator->() const { return &map_; }

 private:
  std::pmr::unsynchronized_pool_resource pool_;  // before map_, which uses it
  Map map_{&pool_};
};

}  // namespace h5j
