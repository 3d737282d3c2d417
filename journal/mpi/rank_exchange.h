// What a collective commit (collective/collective_commit.h) exchanges
// between ranks, and the exchange itself: MpiSession over MPI (vfd/mpi/), or
// ranks that share one process (test/).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "format.h"
#include "status.h"

namespace h5j {

// A follower's contribution to a commit (step 1); gathered, every
// follower's (add).
struct PreparedIndex {
  std::vector<DataPayload> records;  // DATA records indexing this rank's data log
  uint64_t log_bytes = 0;  // this generation's bytes in this rank's data log
  // durable_within (followers_durable.h): this rank's in-place bytes since
  // its last commit, left to its own background sync (INPLACE records for
  // rank 0's COMMIT, with their CRCs); or, if it synced them in step 1, only
  // where they are (CRC 0); or that it cannot say (too many to list).
  // Rank 0 checks that no two ranks wrote the same bytes.
  std::vector<InPlacePayload> in_place, in_place_synced;
  bool in_place_unknown = false;
  // The last collective commit whose writes by this rank are all durable
  // (this one if it synced them in step 1); rank 0 has none to wait for.
  uint64_t durable_through = UINT64_MAX;

  void add(const PreparedIndex& rank) {
    records.insert(records.end(), rank.records.begin(), rank.records.end());
    in_place.insert(in_place.end(), rank.in_place.begin(), rank.in_place.end());
    in_place_synced.insert(in_place_synced.end(), rank.in_place_synced.begin(), rank.in_place_synced.end());
    in_place_unknown = in_place_unknown || rank.in_place_unknown;
    log_bytes += rank.log_bytes;
    durable_through = std::min(durable_through, rank.durable_through);
  }
};

// Rank 0's word, which every rank learns with the outcome of step 1
// (sync_now) and of step 2 (the others).
struct OwnerWord {
  // durable_within: every rank syncs its writes before rank 0's COMMIT,
  // since INPLACE records cannot vouch for them: two ranks wrote the same
  // bytes (HDF5's fill of a chunk by rank 0, then another rank's data), so
  // a CRC taken by one is of bytes no longer there; or a rank wrote too
  // much to list.
  bool sync_now = false;
  bool rewrite = false;       // steps 3 to 5: a checkpoint, or the close's image
  bool next_durable = false;  // durable_within: every rank syncs its writes at the next commit's step 1

  int encode() const { return int(rewrite) | int(next_durable) << 1 | int(sync_now) << 2; }
  static OwnerWord decode(int v) { return {(v & 4) != 0, (v & 1) != 0, (v & 2) != 0}; }
};

// What the steps need from the ranks they run on.  Every rank makes the
// same calls in the same order.
class RankExchange {
 public:
  virtual ~RankExchange() = default;
  virtual int rank() const = 0;
  // Every rank's `local` in; on every rank the same status out: the failure
  // of the lowest failing rank, or ok.  With `rank0_value`, every rank also
  // gets rank 0's value in it.
  virtual Status agree(const Status& local, int* rank0_value) = 0;
  // Every rank's `mine` to rank 0, whose `all` adds them up in rank order.
  virtual Status gather_index(const PreparedIndex& mine, PreparedIndex& all) = 0;
  // True once an exchange could not complete (a rank died or stopped): the
  // ranks no longer know each other's state, so nothing more is written.
  virtual bool broken() const = 0;
  virtual const Status& fault() const = 0;
};

}  // namespace h5j
