#include "commits_past_stop.h"

#include <algorithm>

namespace h5j {

void CommitsPastStop::add(const CommittedTxn& t) {
  // `t` began, so the commit call of the one before it had returned.
  if (txns > 0) proven_durable = std::max(proven_durable, named_by_last_);
  // An earlier transaction named was durable before `t` began: the one
  // before it, whose commit of one flush had returned, or one the
  // background sync had published.
  if (t.durable_txn < t.txn) proven_durable = std::max(proven_durable, t.durable_txn);
  if (txns == 0) first_txn = t.txn;
  ++txns;
  last_txn = t.txn;
  named_by_last_ = t.durable_txn;
}

std::string CommitsPastStop::text() const {
  std::string range = first_txn == last_txn ? std::to_string(first_txn)
                                            : std::to_string(first_txn) + " to " + std::to_string(last_txn);
  return std::to_string(txns) + " committed transaction(s) (" + range + ")";
}

Status find_commits_past_damage(JournalReader& reader, uint64_t next_txn, CommitsPastStop& past) {
  ScanOptions options;
  options.allow_txn_gap = true;  // the damage may have taken whole transactions
  for (;;) {
    auto next = reader.resync(reader.end_offset() + 8, /*begin_only=*/true);
    if (!next) return next.status();
    if (!next->has_value()) return Status::ok();
    options.first_txn = std::max(next_txn, past.last_txn + 1);
    auto scanned = scan_committed(reader, [&past](const CommittedTxn& t) {
      past.add(t);
      return Status::ok();
    }, options);
    if (!scanned) return scanned.status();
    if (clean_end(scanned->end)) return Status::ok();
  }
}

}  // namespace h5j
