#include "raw_layer.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace h5j {

Result<std::span<const std::byte>> DataLogSource::view(uint32_t log, uint64_t offset, uint64_t len,
                                                       std::vector<std::byte>& scratch) const {
  if (!read_) {
    assert(offset + len <= memory_.size());
    return memory_.subspan(offset, len);
  }
  scratch.resize(len);
  H5J_RETURN_IF_ERROR(read_(log, offset, scratch));
  return std::span<const std::byte>(scratch);
}

void RawLayer::insert(const RawPattern& pattern, uint32_t log, uint64_t src) {
  uint32_t id = uint32_t(extents_.size());
  extents_.push_back({pattern, src, log});
  // Runs come in address order, so each bucket is met in one stretch.
  uint64_t last = UINT64_MAX;
  pattern.for_each_run([&](uint64_t a, uint64_t n, uint64_t) {
    for (uint64_t w = a >> bucket_shift_; w <= (a + n - 1) >> bucket_shift_; ++w) {
      if (w == last) continue;
      std::vector<uint32_t>& ids = buckets_[w];
      size_t capacity = ids.capacity();
      ids.push_back(id);
      id_bytes_ += (ids.capacity() - capacity) * sizeof(uint32_t);
      last = w;
    }
  });
}

// The memory goes back too: a checkpoint empties the layer, and the next
// generation starts small.
void RawLayer::clear() {
  extents_ = {};
  buckets_.clear();
  id_bytes_ = 0;
}

size_t RawLayer::memory_bytes() const {
  // std::map nodes: the key, the vector, and about four words of tree links.
  constexpr size_t kNode = sizeof(uint64_t) + sizeof(std::vector<uint32_t>) + 32;
  return extents_.capacity() * sizeof(Extent) + buckets_.size() * kNode + id_bytes_;
}

bool RawLayer::touches(uint64_t addr, uint64_t end) const {
  return any_extent_near(addr, end, [&](uint32_t id) {
    bool hit = false;
    extents_[id].pattern.for_each_run_in(addr, end, [&](uint64_t, uint64_t, uint64_t) { hit = true; });
    return hit;
  });
}

uint32_t RawLayer::sole_log(uint64_t bucket) const {
  auto it = buckets_.find(bucket >> bucket_shift_);
  if (it == buckets_.end()) return kSeveralLogs;
  uint32_t log = extents_[it->second.front()].log;
  for (uint32_t id : it->second)
    if (extents_[id].log != log) return kSeveralLogs;
  return log;
}

Status RawLayer::lay_onto(uint64_t addr, std::span<std::byte> out, const DataLogSource& source,
                          std::vector<Range>* covered) const {
  uint64_t end = addr + out.size();
  if (covered != nullptr) covered->clear();
  if (out.empty() || extents_.empty()) return Status::ok();
  // The extents touching the range, oldest first.
  std::vector<uint32_t> ids;
  any_extent_near(addr, end, [&](uint32_t id) {
    ids.push_back(id);
    return false;
  });
  std::sort(ids.begin(), ids.end());
  std::vector<std::byte> scratch;
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<size_t> segments;  // where each extent's covered runs start in *covered
  for (uint32_t id : ids) {
    const Extent& e = extents_[id];
    // The runs inside the range are consecutive, and so are their packed
    // bytes: one read, then scatter.
    uint64_t first = UINT64_MAX, last = 0;
    e.pattern.for_each_run_in(addr, end, [&](uint64_t, uint64_t n, uint64_t packed) {
      first = std::min(first, packed);
      last = packed + n;
    });
    if (first == UINT64_MAX) continue;
    auto bytes = source.view(e.log, e.src + first, last - first, scratch);
    if (!bytes) return bytes.status();
    if (covered != nullptr) segments.push_back(covered->size());
    e.pattern.for_each_run_in(addr, end, [&](uint64_t a, uint64_t n, uint64_t packed) {
      std::memcpy(out.data() + (a - addr), bytes->data() + (packed - first), n);
      if (covered != nullptr) covered->push_back({a, n});
    });
  }
  if (covered != nullptr) merge(*covered, segments);
  return Status::ok();
}

// Each segment (one extent's runs) is in address order already: merged
// pairwise, a strided bucket's hundred thousand runs cost a few linear
// passes, not a sort.  Then overlapping and adjacent ranges are joined.
void RawLayer::merge(std::vector<Range>& ranges, std::vector<size_t> segments) {
  auto by_addr = [](const Range& a, const Range& b) { return a.addr < b.addr; };
  segments.push_back(ranges.size());
  while (segments.size() > 2) {
    std::vector<size_t> merged;
    for (size_t i = 0; i + 1 < segments.size(); i += 2) {
      merged.push_back(segments[i]);
      if (i + 2 < segments.size())
        std::inplace_merge(ranges.begin() + long(segments[i]), ranges.begin() + long(segments[i + 1]),
                           ranges.begin() + long(segments[i + 2]), by_addr);
    }
    merged.push_back(ranges.size());
    segments = std::move(merged);
  }
  assert(std::is_sorted(ranges.begin(), ranges.end(), by_addr));
  size_t kept = 0;
  for (const Range& r : ranges) {
    if (kept > 0 && ranges[kept - 1].addr + ranges[kept - 1].len >= r.addr) {
      Range& last = ranges[kept - 1];
      last.len = std::max(last.addr + last.len, r.addr + r.len) - last.addr;
    } else {
      ranges[kept++] = r;
    }
  }
  ranges.resize(kept);
}

}  // namespace h5j
