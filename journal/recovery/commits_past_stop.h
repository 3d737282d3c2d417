// Commits past a point-in-time replay's stop: the committed transactions
// that validate after the damaged record, or the refused transaction, where
// the replay stopped, and whether they prove that the stop is damage rather
// than the unfinished writes of a crash.
//
// THE RULE.  A transaction begins only once the commit call of the one
// before it has returned, and each COMMIT names the last transaction whose
// bytes were durable when it was written (kDurableTxn).  A commit call
// returns with what it names durable: with durable=true, itself or the one
// before it; under durable_within, what the background sync has published,
// or itself after a sync of its own (background_sync.h).  A crash loses only
// what was not durable.  So once a COMMIT past the stop names the stopped
// transaction or a later one, and either names a transaction before its own
// or is followed by a later transaction (its commit call had returned), the
// stopped transaction had been durable, and what made it invalid since is
// damage: a bad sector, a stray write, a flipped bit.  Replaying up to the
// stop would then drop every committed transaction after it, and retiring
// the journal would lose them for good.
//
// Worked example, durable=true.  Transactions 1 to 9 commit, each COMMIT
// naming itself.  A byte of 5's WRITE record flips on the disk.  The replay
// stops in 5 at a checksum mismatch; past it 6 to 9 validate.  6's COMMIT
// names 6, and 7 began, so 6's commit had returned: 5 was durable, and this
// is damage.  A power loss while 5 was written leaves nothing after 5 but
// 5's own records: 6 begins only once 5's commit has returned.
//
// Worked example, durable=100ms.  Transactions 1 to 9 are written, and the
// background sync has made 1 to 3 durable.  Power fails: half of a sector
// of 5 reached the disk, and 6 to 9 did.  The replay stops in 5; past it,
// the COMMITs name 3 at most: a crash's tail, and recovery takes the file as
// of 4, within the bound (design.md §9a).
//
// Under durable=false every COMMIT names itself, and nothing is durable
// before the close.  A killed process leaves the page cache whole, so only
// damage or a power loss, after which durable=false promises nothing, can
// leave a damaged record with commits after it; either is reported.
//
// Only a record that fails its checks is scanned past: zeros and an older
// generation's records are how a journal ends, and scanning past every end
// would read the journal's prepared space at every recovery.  A stretch of
// zeros in the middle of a journal therefore reads as its end.
#pragma once

#include <cstdint>
#include <string>

#include "journal_reader.h"

namespace h5j {

struct CommitsPastStop {
  uint64_t at = 0;  // where the replay stopped: the damaged record, or the refused transaction's start
  StreamEnd why = StreamEnd::kEndOfFile;
  uint64_t stopped_txn = 0;  // the transaction the replay stopped in
  uint64_t txns = 0, first_txn = 0, last_txn = 0;  // the committed transactions past it
  uint64_t proven_durable = 0;  // the highest transaction shown durable by a COMMIT past the stop (0: none)

  // A committed transaction past the stop, in log order.
  void add(const CommittedTxn& t);
  // Whether stopped_txn had been durable: the stop is damage.
  bool proves_damage() const { return txns > 0 && proven_durable >= stopped_txn; }
  // "N committed transaction(s) (A to B)".
  std::string text() const;

 private:
  uint64_t named_by_last_ = 0;  // the last COMMIT's kDurableTxn: counts once a later transaction begins
};

// Past the damaged record where `reader`'s scan ended (not a clean end),
// expecting transaction `next_txn` or a later one, adds to `past` every
// committed transaction that validates (scan_past_damage, as salvage
// reads).  Leaves the reader at the journal's end.
Status find_commits_past_damage(JournalReader& reader, uint64_t next_txn, CommitsPastStop& past);

}  // namespace h5j
