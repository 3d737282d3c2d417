// A file that several MPI ranks open together (docs/design.md §10): the
// driver's own communicator, and the collective steps of the protocol.
// Rank 0 owns the journal; the others follow it (journaled_file.h, Role).
// Every step here runs inside a callback HDF5 calls collectively (open,
// flush, truncate, close), never inside a read or write, which may or may
// not be collective.
#pragma once

#include <mpi.h>
#include <hdf5.h>

#include <chrono>
#include <memory>
#include <vector>

#include "h5journal.h"
#include "journaled_file.h"

namespace h5j {

class MpiSession {
 public:
  // The FAPL's communicator (H5Pset_mpi_params), or, when the driver was
  // chosen by name (HDF5_DRIVER) and MPI is running, the one `config`
  // names (mpi_comm: MPI_COMM_WORLD by default).  nullptr when there is
  // none, or a single rank: the file is then opened as a serial file.
  // (H5Pset_fapl_journal without a communicator stays serial, so rank 0 of
  // an MPI program can still write a file alone.)
  // A program outside MPI (a tool such as h5dump under HDF5_DRIVER=journal)
  // gets MPI initialised here, as mpio does, into a world of one rank;
  // `initialised_mpi` then says the driver must finalize it.
  static Result<std::unique_ptr<MpiSession>> from_fapl(hid_t fapl, bool chosen_by_name,
                                                       const H5FD_journal_fapl_t& config, bool& initialised_mpi);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return comm_; }
  MPI_Info info() const { return info_; }

  // Every rank's status in; on every rank the same status out: the failure
  // of the lowest failing rank, or ok.  With `rank0_value`, every rank also
  // gets rank 0's value of it.
  Status agree(const Status& local, int* rank0_value = nullptr);
  // The collective commit: each follower makes its writes durable and sends
  // its DATA records to rank 0, which journals them with the COMMIT; all
  // ranks then agree on the outcome.  With `closing`, the collective close.
  Status commit(JournaledFile& file, bool closing);

 private:
  MpiSession() = default;
  Status mpi_error(int code, const char* step);
  // Waits for a nonblocking collective, at most mpi_timeout.  A missed
  // deadline means a rank died or stopped: MPICH does not report a dead
  // peer (ch4 has no failure detection), it waits forever.  The session is
  // then broken for good, as the request can never complete.
  Status wait(MPI_Request& request, const char* step);
  Status broadcast_message(std::string& message, int root);
  // Every rank's `mine` into rank 0's `all`, and the sum of their `log_bytes`.
  Status gather_to_rank0(const std::vector<std::byte>& mine, uint64_t log_bytes, std::vector<std::byte>& all,
                         uint64_t& log_bytes_sum);

  MPI_Comm comm_ = MPI_COMM_NULL;  // a duplicate: the driver's messages never meet the library's
  MPI_Info info_ = MPI_INFO_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::chrono::seconds timeout_{0};  // 0: no deadline
  Status broken_;                    // the missed deadline or MPI error every later step returns
};

}  // namespace h5j
