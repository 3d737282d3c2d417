#include "replay.h"

#include <algorithm>
#include <cassert>
#include <cstring>

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

namespace {

Status damaged(const JournalReader& r, RecoveryMode mode, const std::string& more) {
  return Status(Code::kCorrupt, "journal damaged: " + r.end_detail() + more + " (recovery mode " +
                                    recovery_mode_name(mode) + ")");
}

}  // namespace

namespace {


// Whether every DATA record of `t` matches the data log.
Result<bool> data_matches(const CommittedTxn& t, const DataLogAccess& data_log) {
  for (const Record& w : t.writes) {
    if (w.header.type != RecordType::kData) continue;
    if (!data_log.matches) return Status(Code::kInvalid, "the journal references a data log, and none was given");
    auto ok = data_log.matches(w);
    if (!ok || !*ok) return ok;
  }
  return true;
}

}  // namespace

Result<ReplayPlan> plan_replay(JournalReader& reader, RecoveryMode mode, const DataLogAccess& data_log) {
  ReplayPlan plan;
  plan.logical_size = reader.header().base_size;
  // What was applied, which differs from what the scan counts as committed
  // once a transaction's data is refused.
  uint64_t applied = 0, last_applied = 0, applied_end = kFirstRecordOffset;
  uint64_t next_txn = reader.header().first_txn;  // the transaction expected next
  // Salvage: raw data of the transactions lost before `t`, from the data log.
  auto rebuild_before = [&](const CommittedTxn& t) -> Status {
    if (mode != RecoveryMode::kSalvage || t.txn <= next_txn || !data_log.records_of) return Status::ok();
    auto records = data_log.records_of(next_txn, t.txn - 1);
    if (!records) return records.status();
    uint64_t last = 0;
    for (const Record& r : *records) {
      add_to_image(plan.raw, plan.overlay, r.pattern, r.data_log, r.data_offset);
      plan.bytes_to_apply += r.write.length;
      if (r.header.txn != last) ++plan.rebuilt_txns;
      last = r.header.txn;
    }
    return Status::ok();
  };
  auto apply = [&](const CommittedTxn& t) -> Status {
    if (plan.refused_txn != 0 && mode != RecoveryMode::kSalvage) return Status::ok();
    H5J_RETURN_IF_ERROR(rebuild_before(t));
    next_txn = t.txn + 1;
    auto matches = data_matches(t, data_log);
    if (!matches) return matches.status();
    if (!*matches) {
      // The data log is made durable before the journal's COMMIT, so a
      // committed transaction's data-log bytes cannot be torn by a crash:
      // failing their CRC is damage, never a torn tail.  Tolerate-tail
      // refuses it as strict does, wherever the transaction is.
      if (mode == RecoveryMode::kStrict || mode == RecoveryMode::kTolerateTail)
        return Status(Code::kCorrupt, "journal damaged: transaction " + std::to_string(t.txn) +
                                          "'s raw data in the data log fails its CRC" +
                                          (mode == RecoveryMode::kTolerateTail
                                               ? " (damage under a committed transaction, not a torn tail)"
                                               : "") +
                                          " (recovery mode " + recovery_mode_name(mode) + ")");
      if (plan.refused_txn == 0) plan.refused_txn = t.txn;
      return Status::ok();
    }
    for (const Record& w : t.writes) {
      if (w.header.type == RecordType::kData) add_to_image(plan.raw, plan.overlay, w.pattern, w.data_log, w.data_offset);
      else if (w.header.type == RecordType::kZero) plan.overlay.insert(w.write.address, w.write.length, ExtentMap::kZeroSource);
      else if (w.header.type == RecordType::kPlaced) plan.overlay.erase(w.write.address, w.write.length);
      else plan.overlay.insert(w.write.address, w.write.length, w.data_offset);
      if (w.header.type == RecordType::kZero || w.header.type == RecordType::kPlaced)
        plan.placeable.insert(w.write.address, w.write.length, 0);
      if (w.header.type == RecordType::kWrite || w.header.type == RecordType::kData) plan.bytes_to_apply += w.write.length;
    }
    plan.logical_size = t.logical_size;
    plan.committed_file_size = t.file_size;
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

void add_to_image(RawLayer& raw, ExtentMap& overlay, const RawPattern& data, uint32_t log, uint64_t offset) {
  if (overlay.intersects(data.addr, data.end()))
    data.for_each_run([&](uint64_t a, uint64_t n, uint64_t) { overlay.erase(a, n); });
  raw.insert(data, log, offset);
}

namespace {

// Coalesces bytes given in increasing address order into writes of up to
// kRun bytes.  The caller fills the room next() gives and names what it
// filled with keep(): only kept bytes are written, because a raw window's
// gaps may hold bytes that are not the layer's (committed ones, or another
// rank's).  With GapFill::kFromFile, kept ranges less than kFillGap apart
// are written as one, their gaps read back from the file first, as HDF5's
// sieve buffer does: 8-byte runs 512 bytes apart are one write, not one
// each.  Only where the gaps hold nothing committed (replay.h).
class RunWriter {
 public:
  static constexpr size_t kRun = 8 << 20;
  // A gap costs its bytes read and written again; a separate write costs a
  // system call, about as much as 4 KiB of copying.
  static constexpr uint64_t kFillGap = 4 << 10;
  // `kept` is the caller's buffer to gather the writes in, allocated on
  // first use if empty and left to the caller; without it, the writer's own.
  RunWriter(File& base, const Progress& progress, AlignedBuffer* kept, GapFill gaps)
      : base_(base), progress_(progress), run_(kept != nullptr ? *kept : own_), gaps_(gaps) {}

  // Room for n <= kRun bytes at `addr`, above the last room.
  Result<std::span<std::byte>> next(uint64_t addr, size_t n) {
    assert(n <= kRun);
    if (!run_.valid()) {
      auto buffer = base_.allocate_buffer(kRun);
      if (!buffer) return buffer.status();
      run_ = std::move(*buffer);
    }
    if (len_ > 0 && (addr_ + len_ != addr || len_ + n > kRun)) H5J_RETURN_IF_ERROR(flush());
    if (len_ == 0) addr_ = addr;
    std::span<std::byte> room(run_.data() + len_, n);
    len_ += n;
    return room;
  }
  // Bytes [addr, addr + n) of the last room are to be written; called in
  // increasing address order.
  void keep(uint64_t addr, uint64_t n) {
    assert(addr >= addr_ && addr + n <= addr_ + len_);
    reach_ = std::max(reach_, addr + n);
    if (!kept_.empty() && kept_.back().addr + kept_.back().len == addr) kept_.back().len += n;
    else kept_.push_back({addr, n});
  }
  // The end of the highest byte kept so far.
  uint64_t reach() const { return reach_; }
  Status flush() {
    Status s;
    for (size_t i = 0; i < kept_.size() && s;) {
      size_t j = i + 1;  // kept_[i, j) are written as one
      while (gaps_ == GapFill::kFromFile && j < kept_.size() && kept_[j].addr - end(kept_[j - 1]) <= kFillGap) ++j;
      if (j > i + 1) s = fill_gaps(i, j);
      uint64_t from = kept_[i].addr, to = end(kept_[j - 1]);
      if (s) s = base_.write_at(from, std::span<const std::byte>(run_.data() + (from - addr_), to - from));
      i = j;
    }
    for (const RawLayer::Range& r : kept_) done_ += r.len;
    kept_.clear();
    len_ = 0;
    if (progress_) progress_(done_);
    return s;
  }

 private:
  static uint64_t end(const RawLayer::Range& r) { return r.addr + r.len; }
  // The gaps between kept_[i, j), from the file (zeros past its end).
  Status fill_gaps(size_t i, size_t j) {
    uint64_t from = kept_[i].addr;
    gap_bytes_.resize(end(kept_[j - 1]) - from);
    auto got = base_.read_at(from, gap_bytes_);
    if (!got) return got.status();
    std::fill(gap_bytes_.begin() + ptrdiff_t(*got), gap_bytes_.end(), std::byte(0));
    for (size_t k = i; k + 1 < j; ++k) {
      uint64_t a = end(kept_[k]), n = kept_[k + 1].addr - a;
      std::memcpy(run_.data() + (a - addr_), gap_bytes_.data() + (a - from), n);
    }
    return Status::ok();
  }

  File& base_;
  const Progress& progress_;
  AlignedBuffer own_;  // before run_, which may refer to it
  AlignedBuffer& run_;
  GapFill gaps_;
  std::vector<RawLayer::Range> kept_;
  std::vector<std::byte> gap_bytes_;
  uint64_t addr_ = 0, done_ = 0, reach_ = 0;
  size_t len_ = 0;
};

// Each window of the layer is laid onto the writer's room, and the ranges
// its extents cover are kept.
Status apply_raw(const RawLayer& raw, uint64_t logical_size, const DataLogSource& data_log, RunWriter& out,
                 const WindowFilter& mine = nullptr) {
  std::vector<RawLayer::Range> covered;
  Status status;
  raw.for_each_window([&](uint64_t addr, uint64_t len) {
    if (!status || addr >= logical_size) return;  // beyond the end: dropped by the size
    if (mine && !mine(addr)) return;
    auto room = out.next(addr, size_t(std::min(len, logical_size - addr)));
    if (!room) {
      status = room.status();
      return;
    }
    if (status = raw.lay_onto(addr, *room, data_log, &covered); !status) return;  // unread: nothing to keep
    for (const RawLayer::Range& r : covered) out.keep(r.addr, r.len);
  });
  return status;
}

// Zeros past the file's end are not written: no byte there was written
// (`physical_end`, and nothing this apply keeps reaches past out.reach()),
// so they read as zeros once the size is set.  A ZERO record of space
// never written may span gigabytes that the file never reached.
Status apply_overlay(const ExtentMap& overlay, uint64_t logical_size, uint64_t physical_end, const ByteSource& journal,
                     RunWriter& out) {
  Status status;
  overlay.for_each([&](const ExtentMap::Extent& e) {
    uint64_t end = e.src == ExtentMap::kZeroSource ? std::max(physical_end, out.reach()) : logical_size;
    end = std::min(end, logical_size);
    if (!status || e.addr >= end) return;
    uint64_t addr = e.addr, src = e.src, left = std::min(e.len, end - e.addr);
    while (left > 0) {
      size_t n = size_t(std::min<uint64_t>(left, RunWriter::kRun));
      auto room = out.next(addr, n);
      if (!room) {
        status = room.status();
        return;  // no room: nothing to keep
      }
      if (src == ExtentMap::kZeroSource) std::fill(room->begin(), room->end(), std::byte(0));
      else if (status = journal(src, *room); !status) return;  // unread: nothing to keep
      out.keep(addr, n);
      addr += n;
      src = ExtentMap::source_at(src, n);
      left -= n;
    }
  });
  return status;
}

}  // namespace

Status apply_raw_layer(const RawLayer& raw, uint64_t limit, const DataLogSource& data_log, File& base, GapFill gaps,
                       const WindowFilter& mine, AlignedBuffer* run) {
  const Progress none;  // RunWriter keeps a reference
  RunWriter out(base, none, run, gaps);
  H5J_RETURN_IF_ERROR(apply_raw(raw, limit, data_log, out, mine));
  return out.flush();
}

Status apply_image(const RawLayer& raw, const ExtentMap& overlay, uint64_t logical_size, const ByteSource& journal,
                   const DataLogSource& data_log, File& base, const Progress& progress, AlignedBuffer* run) {
  auto physical_end = base.size();
  if (!physical_end) return physical_end.status();
  RunWriter out(base, progress, run, GapFill::kLeave);
  // The overlay's bytes land over the raw layer's: RunWriter issues its
  // writes in the order it is given them.
  H5J_RETURN_IF_ERROR(apply_raw(raw, logical_size, data_log, out));
  H5J_RETURN_IF_ERROR(apply_overlay(overlay, logical_size, *physical_end, journal, out));
  H5J_RETURN_IF_ERROR(out.flush());
  auto size = base.size();
  if (!size) return size.status();
  return *size != logical_size ? base.truncate(logical_size) : Status::ok();
}

}  // namespace h5j
