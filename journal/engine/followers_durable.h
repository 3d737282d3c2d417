// Rank 0's record, under MPI with durable_within, of how far every
// follower's background sync has come, in its own commits' terms
// (design.md §9a, "Under MPI").
//
// Each rank syncs its own writes: on a parallel file system one client's
// fdatasync does not cover another's.  A follower names its in-place bytes
// in INPLACE records that rank 0's COMMIT carries, leaves them to a thread
// of its own, and at each commit's step 1 says which collective commit
// that thread last made durable (PreparedIndex::durable_through).  Rank 0
// knows which of its transactions each collective commit ended with.  A
// transaction is durable for the job once rank 0's own sync (its file,
// then its journal) and every follower's cover it; only then may a COMMIT
// name it (kDurableTxn), and H5Fget_journal_stats count it.
//
// Worked example, two ranks.  Collective commits 4 and 5 end with
// transactions 9 and 10, both left to the background.  Rank 0's thread
// syncs through 10; follower 1 said at commit 5's step 1 that its thread
// had reached commit 3, so the job is durable through 8 (commit 3's end),
// not 10.  At commit 6's step 1 it says 5: now through 10.  Until then a
// power loss finds 9 and 10 checked by their INPLACE CRCs, every rank's,
// and recovery stops before the first whose bytes are missing.
//
// The follower's word is at most one commit late, so the count lags the
// disk by as much; recovery does not depend on it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>

#include "background_sync.h"

namespace h5j {

class FollowersDurable {
 public:
  // Collective commit `seq` ended with rank 0's commits at `end`.
  void ended(uint64_t seq, BackgroundSync::Durable end) { ends_.push_back({seq, end}); }
  // Every follower's writes of collective commits up to `seq` are durable.
  void through(uint64_t seq) {
    limited_ = true;
    while (!ends_.empty() && ends_.front().seq <= seq) {
      durable_ = ends_.front().end;
      ends_.pop_front();
    }
  }
  // What rank 0's own syncs made durable, no further than every follower's
  // (serially, with no followers, all of it).
  BackgroundSync::Durable cap(BackgroundSync::Durable own) const {
    return limited_ && durable_.txn < own.txn ? durable_ : own;
  }

 private:
  struct End {
    uint64_t seq;
    BackgroundSync::Durable end;
  };
  bool limited_ = false;
  std::deque<End> ends_;  // collective commits after the last every follower made durable
  BackgroundSync::Durable durable_;
};

}  // namespace h5j
