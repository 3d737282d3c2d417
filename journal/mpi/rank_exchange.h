// What a collective commit (collective/collective_commit.h) exchanges
// between ranks, and the exchange itself: MpiSession over MPI (vfd/mpi/), or
// ranks that share one process (test/).
#pragma once

#include <cstdint>
#include <vector>

#include "format.h"
#include "status.h"

namespace h5j {

// A follower's contribution to a commit (step 1).
struct PreparedIndex {
  std::vector<DataPayload> records;  // DATA records indexing this rank's data log
  uint64_t log_bytes = 0;            // this generation's bytes in this rank's data log
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
  // Every rank's `mine` to rank 0, whose `all` gets the records in rank
  // order and the sum of the log sizes.
  virtual Status gather_index(const PreparedIndex& mine, PreparedIndex& all) = 0;
  // True once an exchange could not complete (a rank died or stopped): the
  // ranks no longer know each other's state, so nothing more is written.
  virtual bool broken() const = 0;
  virtual const Status& fault() const = 0;
};

}  // namespace h5j
