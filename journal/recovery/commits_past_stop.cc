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
  auto add = [&past](const CommittedTxn& t) {
    past.add(t);
    return Status::ok();
  };
  return scan_past_damage(reader, next_txn, add, [](uint64_t, uint64_t, const ScanSummary&) {});
}

}  // namespace h5j
