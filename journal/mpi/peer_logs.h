// MPI: what the other ranks have appended to their data logs in the open
// transaction.  MPI-IO lets a rank read another's write after a barrier,
// before any commit; until the commit journals it, such a write is only in
// its writer's data log, so a rank reads the other logs' new records before
// a raw read (refresh) and lays their extents over its image.  After a
// commit the extents are in every rank's raw layer, in the journal's order,
// and these are forgotten.  (Where a rank and rank 0 write the same bytes
// between two commits, the rank's win, as they will in the journal's order.)
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "data_logs.h"
#include "raw_layer.h"

namespace h5j {

class PeerLogs {
 public:
  PeerLogs(uint32_t own, uint32_t ranks, unsigned bucket_shift) : own_(own), ranks_(ranks), extents_(bucket_shift) {}

  // Reads every other rank's records of transaction `open_txn` onward,
  // appended since the last call, in generation `generation` (a new
  // generation starts the reading over).
  Status refresh(DataLogSet& logs, uint64_t generation, uint64_t open_txn);
  // The extents are in the raw layer now (after a commit).
  void clear() { extents_.clear(); }
  bool empty() const { return extents_.empty(); }
  Status lay_onto(uint64_t addr, std::span<std::byte> out, DataLogSet& logs) const {
    return extents_.lay_onto(addr, out, [&logs](uint32_t log, uint64_t off, std::span<std::byte> o) {
      return logs.read(log, off, o);
    });
  }

 private:
  Status follow(DataLogSet& logs, uint32_t log, uint64_t generation, uint64_t open_txn);

  uint32_t own_;
  uint32_t ranks_;
  std::vector<std::unique_ptr<JournalReader>> readers_;  // by log number
  uint64_t generation_ = 0;                              // the generation readers_ read
  RawLayer extents_;
};

}  // namespace h5j
