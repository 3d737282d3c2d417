// The processes that opened one file together, as the driver sees them.
//
// Under MPI these are the ranks of the file's communicator: rank 0 owns the
// journal and the others follow it (docs/design.md §10).  The driver's MPI
// code lives in vfd/mpi/ and is built only against a parallel HDF5; against
// a serial one vfd/no_mpi.cc stands in, and every file is opened by this
// process alone.  This header has no MPI types, so the driver's callbacks
// (h5fd_journal.cc) are the same code in both builds.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "h5journal.h"
#include "journaled_file.h"

namespace h5j {

// One piece of a collective transfer: `length` bytes at file address
// `addr` and at `memory` bytes into the caller's buffer.
struct CollectivePiece {
  uint64_t addr;
  uint64_t memory;
  uint64_t length;
};

class RankGroup {
 public:
  virtual ~RankGroup() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank's status in; on every rank the same status out: the failure
  // of the lowest failing rank, or ok.
  virtual Status agree(const Status& local) = 0;
  // The collective commit; with `closing`, the collective close.
  virtual Status commit(JournaledFile& file, bool closing) = 0;
  // H5Fwait_journal_durable, on every rank (collective_wait_durable).
  virtual Status wait_durable(JournaledFile& file) = 0;
  // The pieces of the current raw transfer under HDF5's collective layout
  // (its API context), or none when the transfer is plain bytes.
  virtual Result<std::vector<CollectivePiece>> transfer_pieces(uint64_t addr, size_t size) = 0;
  // What ends a raw write whose own outcome is `local`: in collective mode
  // this rank's staged bytes are placed, and a collective call ends with
  // every rank's agreement.
  virtual Status end_raw_write(JournaledFile& file, const Status& local) = 0;
  // Answers one of H5FD_CTL's MPI queries (communicator, info, rank,
  // size) into `output`; false for any other op code.
  virtual bool answer_ctl(uint64_t op, void** output) = 0;
};

// The group a file opened with `fapl` belongs to, or nullptr when this
// process opens it alone.  Under MPI (only where the application itself
// initialised MPI; the driver never does): the FAPL's communicator
// (H5Pset_mpi_params), or, for a driver chosen by name with none on the
// FAPL, MPI_COMM_WORLD if `config` says mpi_comm=world.  A communicator of
// one rank is no group.  Every rank must open the same `name`; an error
// says which rank did not.
Result<std::unique_ptr<RankGroup>> rank_group_for(const std::string& name, hid_t fapl, bool chosen_by_name,
                                                  const H5FD_journal_fapl_t& config);

}  // namespace h5j
