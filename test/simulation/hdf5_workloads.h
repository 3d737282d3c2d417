// Real HDF5 workloads for the crash-state explorer.  Each drives the HDF5
// library above the journal driver and tells a CommitLog about each commit
// (H5Fflush and H5Fclose): when it starts, and when it has returned, with a
// snapshot of the committed contents.
#pragma once

#include <hdf5.h>

#include "h5journal.h"

#include <optional>
#include <string>
#include <vector>

#include "journaled_file.h"

namespace h5j::explorer {

// Thrown by a workload when an HDF5 call fails: what failed, and HDF5's
// error stack (which carries the driver's message).
struct WorkloadError {
  std::string what;
  std::string stack;
};

class CommitLog {
 public:
  virtual ~CommitLog() = default;
  // A commit starts; `snapshot` describes the contents it commits.
  virtual void before_commit(const std::string& snapshot) = 0;
  // It returned: the commit is acknowledged.
  virtual void after_commit() = 0;
  // After it returned: the engine's commits so far, and how many of them
  // are durable (H5Fget_journal_stats).  kAll for both after a close, which
  // is durable whatever the setting.
  virtual void durable_so_far(uint64_t /*commits*/, uint64_t /*durable*/) {}
  static constexpr uint64_t kAll = UINT64_MAX;
};

struct Workload {
  std::string name;
  std::string about;
  uint64_t checkpoint_bytes;
  void (*run)(hid_t fapl, const std::string& file, CommitLog& log);
  H5FD_journal_raw_t raw = H5FD_JOURNAL_RAW_INPLACE;
  H5FD_journal_materialize_t materialize = H5FD_JOURNAL_MATERIALIZE_CLOSE;
  // Instead of `run`: drives the engine itself, with the options the driver
  // would use (mpi_workload.h).  Its snapshots are the file's bytes.
  void (*run_engine)(const JournalOptions& options, const std::string& file, CommitLog& log) = nullptr;
  // The driver's journal_path: "" beside the file, "DIR/" in another directory.
  const char* journal_path = "";
};

const std::vector<Workload>& workloads();

// Whether `choice` (a name; "all": every HDF5 workload; "mpi": every MPI
// one) selects `w`.
bool selected(const Workload& w, const std::string& choice);

// What a recovered file's bytes are, to compare with a workload's snapshots:
// HDF5's contents read in full, or the bytes themselves.  nullopt: the file
// does not open as HDF5.
std::optional<std::string> describe_contents(const Workload& w, const std::vector<std::byte>& file);

}  // namespace h5j::explorer
