// A regular pattern of raw-data runs: how one DATA record describes a whole
// strided block (a 32^3 box of a 3-D array is one pattern of 32 x 32 runs),
// so the index costs bytes per block, not per run.
//
//   run (g, r) covers [addr + g * stride2 + r * stride1, ... + run_len)
//   for g < count2, r < count1
//
// The runs' bytes are packed in that order (g outer, r inner): run (g, r)
// starts at packed offset (g * count1 + r) * run_len.
//
// Invariant (valid()): runs are disjoint and in increasing address order,
// so the runs meeting any address range are consecutive, and so are their
// packed bytes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace h5j {

struct RawPattern {
  uint64_t addr = 0;
  uint64_t run_len = 0;
  uint32_t count1 = 1;
  uint64_t stride1 = 0;
  uint32_t count2 = 1;
  uint64_t stride2 = 0;

  static RawPattern contiguous(uint64_t addr, uint64_t len) { return RawPattern{addr, len, 1, 0, 1, 0}; }

  uint64_t runs() const { return uint64_t(count1) * count2; }
  uint64_t bytes() const { return run_len * runs(); }
  uint64_t group_span() const { return uint64_t(count1 - 1) * stride1 + run_len; }
  // One past the last byte.
  uint64_t end() const { return addr + uint64_t(count2 - 1) * stride2 + group_span(); }

  // Counts of at least 1, runs disjoint and increasing, no overflow (the
  // check a reader makes before trusting a pattern from disk).
  bool valid() const;

  // Calls f(run_addr, run_len, packed_offset) for every run, in order.
  template <typename F>
  void for_each_run(F&& f) const {
    for_each_run_in(addr, end(), f);
  }
  // The same for the parts of runs inside [lo, hi), clipped to it.
  template <typename F>
  void for_each_run_in(uint64_t lo, uint64_t hi, F&& f) const;
};

inline bool RawPattern::valid() const {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  if (run_len == 0 || count1 == 0 || count2 == 0) return false;
  if (count1 > 1 && stride1 < run_len) return false;
  if (count1 > 1 && stride1 > (kMax - run_len) / (count1 - 1)) return false;
  if (runs() > kMax / run_len) return false;
  uint64_t span = group_span();
  if (count2 > 1 && stride2 < span) return false;
  if (count2 > 1 && stride2 > (kMax - span) / (count2 - 1)) return false;
  return addr <= kMax - (uint64_t(count2 - 1) * stride2 + span);
}

template <typename F>
void RawPattern::for_each_run_in(uint64_t lo, uint64_t hi, F&& f) const {
  lo = std::max(lo, addr);
  hi = std::min(hi, end());
  if (lo >= hi) return;
  // The first group that ends after lo, and within it the first run that does.
  uint64_t span = group_span();
  uint64_t g = count2 == 1 || lo - addr < span ? 0 : std::min<uint64_t>((lo - addr - span) / stride2 + 1, count2);
  for (; g < count2; ++g) {
    uint64_t group = addr + g * stride2;
    if (group >= hi) return;
    uint64_t r = count1 == 1 || lo <= group || lo - group < run_len ? 0 : (lo - group - run_len) / stride1 + 1;
    for (; r < count1; ++r) {
      uint64_t a = group + r * stride1;
      if (a >= hi) break;
      uint64_t from = std::max(a, lo), to = std::min(a + run_len, hi);
      if (from < to) f(from, to - from, (g * count1 + r) * run_len + (from - a));
    }
  }
}

// Builds patterns from runs given in packed order: add() extends the pattern
// if the run continues it, else returns false (the caller takes the pattern
// and starts a new one with the run).
class PatternBuilder {
 public:
  bool empty() const { return p_.run_len == 0; }
  bool add(uint64_t a, uint64_t len);
  // The regular patterns built so far (the complete groups, then a short
  // last group), in packed order, and an empty builder.
  std::vector<RawPattern> take();

 private:
  RawPattern p_;
  // Runs of the last group (1..count1): a pattern whose last group is short
  // is irregular, and take() splits it.
  uint32_t last_group_runs_ = 0;
};

}  // namespace h5j
