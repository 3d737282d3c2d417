// The parallel commit protocol (docs/design.md §10) without MPI, for the
// crash-state explorer and the fault sweep.  Real parallel HDF5 needs
// several processes, which these in-process harnesses cannot host, so the
// MPI workloads drive the engine directly: rank 0's owner handle and 1 to 3
// follower handles on one file, in one process, opened and committed in the
// order the driver uses under MPI (open_journaled, MpiSession::commit).
// Every handle reaches the disk through one FileSystem, so a recording one
// sees the owner's journal, every rank's data log and the file together.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "journaled_file.h"
#include "hdf5_workloads.h"

namespace h5j::explorer {

// Two sessions (create, then reopen) of steps in which rank 0 writes
// metadata and raw data and every follower writes raw data (new space, and
// overwrites of other ranks' committed data, strided too), each step ending
// in a collective commit; with `followers` follower ranks.  Under
// durable_within each session then runs three time-series steps, whose
// commits every rank leaves to its background sync, and one collective
// wait for durability.  The snapshot the log is given is the file's
// expected bytes.
void run_mpi_workload(const JournalOptions& options, const std::string& file, CommitLog& log, int followers);

// The file's contents as a reader would take them: its first 8 bytes say
// where it ends, as HDF5's superblock records the end of its address space,
// and bytes past that (in-place writes of a commit that did not happen)
// are not the file's.  nullopt: the file is shorter than that.
std::optional<std::string> describe_mpi_file(const std::vector<std::byte>& file);

}  // namespace h5j::explorer
