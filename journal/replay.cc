#include "replay.h"

#include <algorithm>

#include "aligned_buffer.h"

namespace h5j {

const char* recovery_mode_name(RecoveryMode m) {
  switch (m) {
    case RecoveryMode::kPointInTime: return "point-in-time";
    case RecoveryMode::kStrict: return "strict";
    case RecoveryMode::kTolerateTail: return "tolerate-tail";
    case RecoveryMode::kSalvage: return "salvage";
  }
  return "?";
}

bool clean_end(StreamEnd e) {
  return e == StreamEnd::kEndOfFile || e == StreamEnd::kZeroes || e == StreamEnd::kStale;
}

namespace {

Status damaged(const JournalReader& r, RecoveryMode mode, const std::string& more) {
  return Status(Code::kCorrupt, "journal damaged: " + r.end_detail() + more + " (recovery mode " +
                                    recovery_mode_name(mode) + ")");
}

}  // namespace

namespace {

uint64_t source_of(const Record& w) {
  switch (w.header.type) {
    case RecordType::kZero: return ExtentMap::kZeroSource;
    case RecordType::kData: return ExtentMap::data_log_source(w.data_offset);
    default: return w.data_offset;
  }
}

// Whether every DATA record of `t` matches the data log.
Result<bool> data_matches(const CommittedTxn& t, const DataCheck& check) {
  for (const Record& w : t.writes) {
    if (w.header.type != RecordType::kData) continue;
    if (!check) return Status(Code::kInvalid, "the journal references a data log, and none was given");
    auto ok = check(w);
    if (!ok || !*ok) return ok;
  }
  return true;
}

}  // namespace

Result<ReplayPlan> plan_replay(JournalReader& reader, RecoveryMode mode, const DataCheck& check_data) {
  ReplayPlan plan;
  plan.logical_size = reader.header().base_size;
  // What was applied, which differs from what the scan counts as committed
  // once a transaction's data is refused.
  uint64_t applied = 0, last_applied = 0, applied_end = kFirstRecordOffset;
  auto apply = [&](const CommittedTxn& t) -> Status {
    if (plan.refused_txn != 0 && mode != RecoveryMode::kSalvage) return Status::ok();
    auto matches = data_matches(t, check_data);
    if (!matches) return matches.status();
    if (!*matches) {
      if (mode == RecoveryMode::kStrict)
        return Status(Code::kCorrupt, "journal damaged: transaction " + std::to_string(t.txn) +
                                          "'s raw data in the data log fails its CRC (recovery mode strict)");
      if (plan.refused_txn == 0) plan.refused_txn = t.txn;
      return Status::ok();
    }
    for (const Record& w : t.writes) {
      plan.overlay.insert(w.write.address, w.write.length, source_of(w));
      if (w.header.type != RecordType::kZero) plan.bytes_to_apply += w.write.length;
    }
    plan.logical_size = t.logical_size;
    ++applied;
    last_applied = t.txn;
    applied_end = t.end_offset;
    return Status::ok();
  };
  // The summary counts what was applied: a refused transaction ends the
  // committed stream where it starts (salvage only leaves it out).
  auto account_refusal = [&]() {
    if (plan.refused_txn == 0) return;
    plan.summary.committed_txns = applied;
    plan.summary.last_committed_txn = last_applied;
    plan.summary.committed_end = applied_end;
    if (mode != RecoveryMode::kSalvage) plan.summary.end = StreamEnd::kDataMismatch;
  };
  ScanOptions options;
  options.allow_txn_gap = mode == RecoveryMode::kSalvage;
  auto summary = scan_committed(reader, apply, options);
  if (!summary) return summary.status();
  plan.summary = *summary;
  if (plan.refused_txn != 0 && mode != RecoveryMode::kSalvage) {
    account_refusal();
    return plan;
  }
  if (clean_end(plan.summary.end)) {
    account_refusal();
    return plan;
  }
  switch (mode) {
    case RecoveryMode::kPointInTime:
      return plan;
    case RecoveryMode::kStrict:
      return damaged(reader, mode, "");
    case RecoveryMode::kTolerateTail: {
      // Damage is a torn tail only if nothing valid follows it.
      uint64_t at = reader.end_offset();
      auto later = reader.resync(at + 8, /*begin_only=*/false);
      if (!later) return later.status();
      if (later->has_value())
        return Status(Code::kCorrupt, "journal damaged in the middle: " + std::string(stream_end_name(plan.summary.end)) +
                                          " at offset " + std::to_string(at) + ", valid records follow at offset " +
                                          std::to_string(**later) + " (recovery mode tolerate-tail)");
      return plan;
    }
    case RecoveryMode::kSalvage:
      break;
  }
  // Salvage: skip to the next valid BEGIN after each damaged stretch.
  for (;;) {
    uint64_t from = reader.end_offset();
    StreamEnd why = plan.summary.end;
    auto next = reader.resync(from + 8, /*begin_only=*/true);
    if (!next) return next.status();
    if (!next->has_value()) break;
    plan.skipped.push_back({from, **next, why});
    options.first_txn = plan.summary.last_committed_txn + 1;
    auto more = scan_committed(reader, apply, options);
    if (!more) return more.status();
    plan.summary.committed_txns += more->committed_txns;
    if (more->committed_txns > 0) {
      plan.summary.last_committed_txn = more->last_committed_txn;
      plan.summary.committed_end = more->committed_end;
    }
    plan.summary.discarded_records += more->discarded_records;
    plan.summary.end = more->end;
    plan.summary.end_offset = more->end_offset;
    if (clean_end(more->end)) break;
  }
  account_refusal();
  return plan;
}

Status apply_overlay(const ExtentMap& overlay, uint64_t logical_size, const JournalSource& source, File& base,
                     const Progress& progress) {
  auto set_size = [&]() -> Status {
    auto size = base.size();
    if (!size) return size.status();
    return *size != logical_size ? base.truncate(logical_size) : Status::ok();
  };
  if (overlay.empty()) return set_size();  // nothing to copy: no run buffer
  // Coalesce runs of adjacent extents into one buffer of up to kRun bytes.
  static constexpr size_t kRun = 8 << 20;
  auto buffer = base.allocate_buffer(kRun);
  if (!buffer) return buffer.status();
  AlignedBuffer& run = *buffer;
  uint64_t run_addr = 0, done = 0;
  size_t run_len = 0;
  auto flush_run = [&]() -> Status {
    if (run_len == 0) return Status::ok();
    Status s = base.write_at(run_addr, std::span<const std::byte>(run.data(), run_len));
    done += run_len;
    run_len = 0;
    if (progress) progress(done);
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
  return set_size();
}

}  // namespace h5j
