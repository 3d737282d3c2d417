// Real HDF5 workloads for the crash-state explorer.  Each drives the HDF5
// library above the journal driver and tells a CommitLog about each commit
// (H5Fflush and H5Fclose): when it starts, and when it has returned, with a
// snapshot of the committed contents.
#pragma once

#include <hdf5.h>

#include "h5journal.h"

#include <string>
#include <vector>

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
};

struct Workload {
  std::string name;
  std::string about;
  uint64_t checkpoint_bytes;
  void (*run)(hid_t fapl, const std::string& file, CommitLog& log);
  H5FD_journal_raw_t raw = H5FD_JOURNAL_RAW_INPLACE;
  H5FD_journal_materialize_t materialize = H5FD_JOURNAL_MATERIALIZE_CLOSE;
};

const std::vector<Workload>& workloads();

}  // namespace h5j::explorer
