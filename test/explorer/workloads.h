// Real HDF5 workloads for the crash-state explorer.  Each drives the HDF5
// library above the journal driver and tells a CommitLog about each commit
// (H5Fflush and H5Fclose): when it starts, and when it has returned, with a
// snapshot of the committed contents.
#pragma once

#include <hdf5.h>

#include <string>
#include <vector>

namespace h5j::explorer {

class CommitLog {
 public:
  virtual ~CommitLog() = default;
  virtual void before_commit() = 0;
  virtual void after_commit(const std::string& snapshot) = 0;
};

struct Workload {
  std::string name;
  std::string about;
  uint64_t checkpoint_bytes;
  void (*run)(hid_t fapl, const std::string& file, CommitLog& log);
};

const std::vector<Workload>& workloads();

}  // namespace h5j::explorer
