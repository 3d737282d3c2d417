#include "replay.h"

#include <algorithm>

#include "aligned_buffer.h"

namespace h5j {

Result<ReplayPlan> plan_replay(JournalReader& reader) {
  ReplayPlan plan;
  plan.logical_size = reader.header().base_size;
  auto summary = scan_committed(reader, [&](const CommittedTxn& t) {
    for (const Record& w : t.writes)
      plan.overlay.insert(w.write.address, w.write.length,
                          w.header.type == RecordType::kZero ? ExtentMap::kZeroSource : w.data_offset);
    plan.logical_size = t.logical_size;
    return Status::ok();
  });
  if (!summary) return summary.status();
  plan.summary = *summary;
  return plan;
}

Status apply_overlay(const ExtentMap& overlay, uint64_t logical_size, const JournalSource& source, File& base) {
  // Coalesce runs of adjacent extents into one buffer of up to kRun bytes.
  static constexpr size_t kRun = 8 << 20;
  auto buffer = base.allocate_buffer(kRun);
  if (!buffer) return buffer.status();
  AlignedBuffer& run = *buffer;
  uint64_t run_addr = 0;
  size_t run_len = 0;
  auto flush_run = [&]() -> Status {
    if (run_len == 0) return Status::ok();
    Status s = base.write_at(run_addr, std::span<const std::byte>(run.data(), run_len));
    run_len = 0;
    return s;
  };
  Status status;
  overlay.for_each([&](const ExtentMap::Extent& e) {
    if (!status.is_ok() || e.addr >= logical_size) return;  // beyond the end: dropped by the size
    uint64_t addr = e.addr, src = e.src, left = std::min(e.len, logical_size - e.addr);
    while (left > 0 && status.is_ok()) {
      if (run_len > 0 && (run_addr + run_len != addr || run_len == kRun)) status = flush_run();
      if (!status.is_ok()) return;
      if (run_len == 0) run_addr = addr;
      size_t n = std::min<uint64_t>(left, kRun - run_len);
      if (src == ExtentMap::kZeroSource) std::fill_n(run.data() + run_len, n, std::byte(0));
      else status = source(src, std::span(run.data() + run_len, n));
      run_len += n;
      addr += n;
      src = ExtentMap::source_at(src, n);
      left -= n;
    }
  });
  H5J_RETURN_IF_ERROR(status);
  H5J_RETURN_IF_ERROR(flush_run());
  auto size = base.size();
  if (!size) return size.status();
  if (*size != logical_size) return base.truncate(logical_size);
  return Status::ok();
}

}  // namespace h5j
