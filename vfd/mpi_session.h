// A file that several MPI ranks open together (docs/design.md §10): the
// driver's own communicator, and the collective steps of the protocol.
// Rank 0 owns the journal; the others follow it (journaled_file.h, Role).
// Every step here runs inside a callback HDF5 calls collectively (open,
// flush, truncate, close), never inside a read or write, which may or may
// not be collective.
#pragma once

#include <mpi.h>
#include <hdf5.h>

#include <memory>

#include "journaled_file.h"

namespace h5j {

class MpiSession {
 public:
  // The FAPL's communicator (H5Pset_mpi_params), or MPI_COMM_WORLD when the
  // driver was chosen by name (HDF5_DRIVER) and MPI is running.  nullptr
  // when there is none, or a single rank: the file is then opened as a
  // serial file.  (H5Pset_fapl_journal without a communicator stays serial,
  // so rank 0 of an MPI program can still write a file alone.)
  static Result<std::unique_ptr<MpiSession>> from_fapl(hid_t fapl, bool chosen_by_name);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return comm_; }
  MPI_Info info() const { return info_; }

  // Every rank's status in; on every rank the same status out: the failure
  // of the lowest failing rank, or ok.
  Status agree(const Status& local) const;
  // The collective commit: each follower makes its writes durable and sends
  // its DATA records to rank 0, which journals them with the COMMIT; all
  // ranks then agree on the outcome.  With `closing`, the collective close.
  Status commit(JournaledFile& file, bool closing) const;

 private:
  MpiSession() = default;
  Status mpi_error(int code, const char* what) const;

  MPI_Comm comm_ = MPI_COMM_NULL;  // a duplicate: the driver's messages never meet the library's
  MPI_Info info_ = MPI_INFO_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace h5j
