// The index of raw data kept in the data log: which file bytes the data
// log's extents cover, newest last.
//
// An exact byte map (ExtentMap) would need an entry per run, and a strided
// workload writes runs of a few hundred bytes: tens of bytes of index per
// run.  So the layer keeps each extent as written, a RawPattern (one entry
// for a whole strided block), in log order, plus a coarse address index
// (1 MiB buckets -> the extents touching them).  Extents may live in
// several data logs (one per MPI rank), named by number.  Who wins on overlap is
// decided when bytes are produced: extents are applied oldest first, so the
// newest one's bytes are the ones left.
//
// Invariant: a layer's extents never overlap bytes that a newer record in
// another map (the journal overlay) covers; the owner of both erases the
// overlay's bytes when it inserts here (see JournaledFile and
// plan_replay), so the image is base, then this layer, then the overlay.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <type_traits>
#include <vector>

#include "file.h"
#include "raw_pattern.h"
#include "status.h"

namespace h5j {

// Where a layer's data logs are: read through a function (files), or, for
// a layer whose one log is held in memory (JournaledFile's staged bytes),
// seen in place, with no copy on the way.
class DataLogSource {
 public:
  // Reads bytes [offset, offset + out.size()) of data log `log`, exactly.
  using Read = std::function<Status(uint32_t log, uint64_t offset, std::span<std::byte> out)>;
  template <typename F>
    requires std::is_invocable_r_v<Status, F, uint32_t, uint64_t, std::span<std::byte>>
  DataLogSource(F read) : read_(std::move(read)) {}
  explicit DataLogSource(std::span<const std::byte> memory) : memory_(memory) {}

  // Bytes [offset, offset + len) of data log `log`: in place if in memory,
  // else read into `scratch`.
  Result<std::span<const std::byte>> view(uint32_t log, uint64_t offset, uint64_t len,
                                          std::vector<std::byte>& scratch) const;

 private:
  Read read_;
  std::span<const std::byte> memory_;
};

class RawLayer {
 public:
  // Buckets of 2^bucket_shift bytes: 1 MiB, unless a test makes them small.
  explicit RawLayer(unsigned bucket_shift = 20) : bucket_shift_(bucket_shift) {}

  // The pattern's packed bytes are at offset `src` of data log `log`.
  void insert(const RawPattern& pattern, uint32_t log, uint64_t src);
  void clear();
  bool empty() const { return extents_.empty(); }
  // The index's own memory (kept as it grows: the writer reads it after
  // every insert); what bounds it is docs/design.md §4a.
  size_t memory_bytes() const;

  struct Range {
    uint64_t addr, len;
  };
  // Lays every extent's bytes inside [addr, addr + out.size()) onto `out`
  // (out[0] is byte `addr`), oldest first, reading the data log through
  // `source`; bytes no extent covers are left as they are.  If `covered`
  // is given, it is set to the covered ranges: in address order, disjoint,
  // adjacent ones merged.
  Status lay_onto(uint64_t addr, std::span<std::byte> out, const DataLogSource& source,
                  std::vector<Range>* covered = nullptr) const;

  // Whether some extent covers a byte of [addr, end).
  bool touches(uint64_t addr, uint64_t end) const;
  // The data log of every extent touching the bucket at `bucket` (an
  // address for_each_bucket gives), or kSeveralLogs.
  static constexpr uint32_t kSeveralLogs = UINT32_MAX;
  uint32_t sole_log(uint64_t bucket) const;

  // Calls f(bucket_addr, bucket_len) for each aligned bucket that some
  // extent touches, in address order.
  template <typename F>
  void for_each_bucket(F&& f) const {
    for (const auto& [bucket, ids] : buckets_) f(bucket << bucket_shift_, uint64_t(1) << bucket_shift_);
  }

 private:
  unsigned bucket_shift_;
  struct Extent {
    RawPattern pattern;
    uint64_t src;
    uint32_t log;
  };
  // Sorts `ranges`, made of sorted segments starting at `segments`, and
  // joins the overlapping and adjacent ones.
  static void merge(std::vector<Range>& ranges, std::vector<size_t> segments);
  // Calls f(id) for the extents in the buckets [addr, end) touches, bucket by
  // bucket (an extent in several buckets is met once in each); stops when f
  // returns true.
  template <typename F>
  bool any_extent_near(uint64_t addr, uint64_t end, F&& f) const {
    for (auto it = buckets_.lower_bound(addr >> bucket_shift_);
         it != buckets_.end() && (it->first << bucket_shift_) < end; ++it)
      for (uint32_t id : it->second)
        if (f(id)) return true;
    return false;
  }
  std::vector<Extent> extents_;                          // log order
  std::map<uint64_t, std::vector<uint32_t>> buckets_;   // bucket -> extents touching it, ascending
  size_t id_bytes_ = 0;                                  // the buckets' vectors, by capacity
};

}  // namespace h5j
