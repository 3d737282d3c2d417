// A file that several MPI ranks open together (docs/design.md §10): the
// driver's own communicator, and the exchanges of the collective steps.
// Rank 0 owns the journal; the others follow it (journal_options.h, Role).
// The collective commit is journal/collective/collective_commit.h; this session is its
// RankExchange over MPI.
// Every step here runs inside a callback HDF5 calls collectively (open,
// flush, truncate, close, or a write HDF5 declared collective), never
// inside another read or write, which may or may not be collective.
#pragma once

#include <mpi.h>
#include <hdf5.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collective_commit.h"
#include "h5journal.h"
#include "journaled_file.h"
#include "rank_group.h"

namespace h5j {

class MpiSession final : public RankGroup, public RankExchange {
 public:
  // A session over `comm` and `info` (duplicates, which the session
  // frees), or nullptr for a communicator of one rank.
  static std::unique_ptr<MpiSession> over(MPI_Comm comm, MPI_Info info, const H5FD_journal_fapl_t& config);
  ~MpiSession() override;
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // RankExchange: the collective commit's exchanges, over MPI.
  Status agree(const Status& local) override { return agree(local, nullptr); }
  Status agree(const Status& local, int* rank0_value) override;
  Status gather_index(const PreparedIndex& mine, PreparedIndex& all) override;
  bool broken() const override { return !fault_.is_ok(); }
  const Status& fault() const override { return fault_; }

  // collective_commit over this session's ranks.
  Status commit(JournaledFile& file, bool closing) override { return collective_commit(file, *this, closing); }
  Status wait_durable(JournaledFile& file) override { return collective_wait_durable(file, *this); }
  Result<std::vector<CollectivePiece>> transfer_pieces(uint64_t addr, size_t size) override;
  Status end_raw_write(JournaledFile& file, const Status& local) override;
  bool answer_ctl(uint64_t op, void** output) override;
  // Fails on every rank, naming both names, unless every rank opens `name`.
  Status check_same_file(const std::string& name);
  // Likewise unless every rank asks for the same durability.
  Status check_same_durability(const std::string& durability);
  // HDF5's metadata cache under this file writes metadata from rank 0 only
  // (mpi_rank_group.cc).
  Status write_metadata_from_rank0_only(hid_t fapl);

 private:
  MpiSession() = default;
  Status mpi_error(int code, const char* step);
  // Fails on every rank unless every rank's `mine` is rank 0's; a rank
  // whose differs says `why(rank 0's)`.
  Status same_as_rank0(const std::string& mine, const std::function<std::string(const std::string&)>& why);
  // Waits for a nonblocking collective, at most mpi_timeout.  A missed
  // deadline means a rank died or stopped: MPICH does not report a dead
  // peer (ch4 has no failure detection), it waits forever.  The session is
  // then broken for good, as the request can never complete.
  Status wait(MPI_Request& request, const char* step);
  Status broadcast_message(std::string& message, int root);

  MPI_Comm comm_ = MPI_COMM_NULL;  // a duplicate: the driver's messages never meet the library's
  MPI_Info info_ = MPI_INFO_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::chrono::seconds timeout_{0};  // 0: no deadline
  Status fault_;                     // the missed deadline or MPI error every later step returns
  // The FAPL open changed for the span of the open (mpi_rank_group.cc):
  // whether its value is still to be put back, and the value.
  bool restore_fapl_ = false;
  hid_t fapl_ = H5I_INVALID_HID;
  H5AC_cache_config_t fapl_mdc_config_{};
  void restore_fapl();
};

}  // namespace h5j
