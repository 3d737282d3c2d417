// Transaction grammar of scan_committed (docs/journal-format.md section 3,
// rule 2):
//   journal := (BEGIN body* COMMIT)* [uncommitted tail]
//   body    := any record but BEGIN and COMMIT
// with transaction numbers first_txn, first_txn + 1, ... and each COMMIT
// naming its BEGIN's LSN and the number of records before it.
#pragma once

namespace h5j {

template <typename OnRecord>
Status for_each_record(JournalReader& reader, OnRecord&& on_record) {
  for (;;) {
    auto r = reader.next();
    if (!r) return r.status();
    if (!r->has_value()) return Status::ok();
    on_record(**r);
  }
}

template <typename OnRecord, typename OnDamage>
Status for_each_salvaged_record(JournalReader& reader, OnRecord&& on_record, OnDamage&& on_damage) {
  for (;;) {
    H5J_RETURN_IF_ERROR(for_each_record(reader, on_record));
    if (clean_end(reader.end())) return Status::ok();
    on_damage(reader.end_offset(), reader.end());
    auto later = reader.resync(reader.end_offset() + 8, /*begin_only=*/false);
    if (!later) return later.status();
    if (!later->has_value()) return Status::ok();
    reader.seek(**later);
  }
}

template <typename OnCommit>
Result<ScanSummary> scan_committed(JournalReader& reader, OnCommit&& on_commit, ScanOptions options) {
  ScanSummary s;
  s.header = reader.header();
  CommittedTxn open;
  bool in_txn = false;
  uint64_t expected_txn = options.first_txn != 0 ? options.first_txn : s.header.first_txn;
  uint64_t records = 0, begin_lsn = 0, tail_records = 0;
  bool out_of_order = false;
  for (;;) {
    auto r = reader.next();
    if (!r) return r.status();
    if (!r->has_value()) break;
    Record& rec = **r;
    const RecordHeader& h = rec.header;
    ++tail_records;
    if (h.type == RecordType::kBegin) {
      bool in_order = options.allow_txn_gap ? h.txn >= expected_txn : h.txn == expected_txn;
      if (in_txn || !in_order) { out_of_order = true; break; }
      in_txn = true;
      open = CommittedTxn{h.txn, 0, 0, 0, 0, {}};
      records = 1;
      begin_lsn = h.lsn;
      continue;
    }
    if (h.type == RecordType::kComment) {
      if (in_txn && h.txn != open.txn) { out_of_order = true; break; }
      if (in_txn) ++records;
      continue;
    }
    if (!in_txn || h.txn != open.txn) { out_of_order = true; break; }
    if (h.type == RecordType::kWrite || h.type == RecordType::kZero || h.type == RecordType::kData ||
        h.type == RecordType::kPlaced || h.type == RecordType::kInPlace) {
      open.writes.push_back(std::move(rec));
      ++records;
      continue;
    }
    // COMMIT
    if (rec.commit.record_count != records || rec.commit.begin_lsn != begin_lsn) { out_of_order = true; break; }
    open.logical_size = rec.commit.logical_size;
    open.file_size = rec.commit.file_size;
    open.durable_txn = rec.commit.durable_txn;
    open.end_offset = rec.next_offset;
    H5J_RETURN_IF_ERROR(on_commit(open));
    in_txn = false;
    expected_txn = open.txn + 1;
    ++s.committed_txns;
    s.last_committed_txn = open.txn;
    s.committed_end = rec.next_offset;
    tail_records = 0;
  }
  s.discarded_records = tail_records;
  s.end = out_of_order ? StreamEnd::kBadSequence : reader.end();
  s.end_offset = reader.end_offset();
  return s;
}

template <typename OnCommit, typename OnStretch>
Status scan_past_damage(JournalReader& reader, uint64_t next_txn, OnCommit&& on_commit, OnStretch&& on_stretch) {
  ScanOptions options;
  options.allow_txn_gap = true;  // the damage may have taken whole transactions
  for (;;) {
    uint64_t from = reader.end_offset();
    auto next = reader.resync(from + 8, /*begin_only=*/true);
    if (!next) return next.status();
    if (!next->has_value()) return Status::ok();
    options.first_txn = next_txn;
    auto scanned = scan_committed(reader, on_commit, options);
    if (!scanned) return scanned.status();
    on_stretch(from, **next, *scanned);
    if (scanned->committed_txns > 0) next_txn = scanned->last_committed_txn + 1;
    if (clean_end(scanned->end)) return Status::ok();
  }
}

}  // namespace h5j
