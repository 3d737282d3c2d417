#include "replay.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "aligned_buffer.h"
#include "apply_image.h"
#include "crc32c.h"

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

Result<ReplayPlan> plan_replay(JournalReader& reader, RecoveryMode mode, const DataLogAccess& data_log,
                               uint64_t unacknowledged) {
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
    if (plan.refused_txn != 0 && mode != RecoveryMode::kSalvage) {
      plan.past_stop.add(t);
      return Status::ok();
    }
    if (unacknowledged != 0 && t.txn >= unacknowledged) {
      plan.unacknowledged_txn = t.txn;
      return Status::ok();
    }
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
      if (plan.refused_txn == 0) {
        plan.refused_txn = t.txn;
        plan.past_stop.at = applied_end;
        plan.past_stop.why = StreamEnd::kDataMismatch;
      }
      return Status::ok();
    }
    if (t.durable_txn > plan.durable_txn) {
      plan.durable_txn = t.durable_txn;
      std::erase_if(plan.unverified_in_place, [&](const Record& r) { return r.header.txn <= plan.durable_txn; });
    }
    for (const Record& w : t.writes) {
      if (w.header.type == RecordType::kInPlace) {
        if (t.txn > plan.durable_txn) plan.unverified_in_place.push_back(w);  // in the file: no layer of the image
        continue;
      }
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
    last_applied = plan.last_applied_txn = t.txn;
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
  if (plan.unacknowledged_txn != 0) {
    plan.summary.committed_txns = applied;
    plan.summary.last_committed_txn = last_applied;
    plan.summary.committed_end = applied_end;
    plan.summary.end = StreamEnd::kInPlaceMissing;
    return plan;
  }
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
  auto carry_on = [&plan](uint64_t from, uint64_t to, const ScanSummary& more) {
    plan.skipped.push_back({from, to, plan.summary.end});
    plan.summary.committed_txns += more.committed_txns;
    if (more.committed_txns > 0) {
      plan.summary.last_committed_txn = more.last_committed_txn;
      plan.summary.committed_end = more.committed_end;
    }
    plan.summary.discarded_records += more.discarded_records;
    plan.summary.end = more.end;
    plan.summary.end_offset = more.end_offset;
  };
  H5J_RETURN_IF_ERROR(scan_past_damage(reader, plan.summary.last_committed_txn + 1, apply, carry_on));
  account_refusal();
  return plan;
}

Result<std::optional<uint32_t>> crc_of_range(uint64_t addr, uint64_t len, const RangeRead& read) {
  constexpr uint64_t kPiece = 1 << 20;
  std::vector<std::byte> piece;
  uint32_t crc = 0;
  for (uint64_t done = 0; done < len;) {
    piece.resize(size_t(std::min(kPiece, len - done)));
    auto got = read(addr + done, piece);
    if (!got) return got.status();
    if (!*got) return std::optional<uint32_t>();
    crc = crc32c(piece.data(), piece.size(), crc);
    done += piece.size();
  }
  return std::optional<uint32_t>(crc);
}

Result<uint64_t> first_txn_missing_in_place(const ReplayPlan& plan, File& base, uint64_t durable_txn) {
  auto from_file = [&](uint64_t offset, std::span<std::byte> out) -> Result<bool> {
    auto got = base.read_at(offset, out);
    if (!got) return got.status();
    return *got == out.size();
  };
  for (const Record& r : plan.unverified_in_place) {
    if (r.header.txn <= durable_txn) continue;
    auto crc = crc_of_range(r.write.address, r.write.length, from_file);
    if (!crc) return crc.status();
    // The file's growth never reached the disk, or its bytes differ.
    if (!*crc || mask_crc(**crc) != r.data_crc) return r.header.txn;
  }
  return uint64_t(0);
}

}  // namespace h5j
