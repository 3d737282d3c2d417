// An MPI follower's view of the journal that rank 0 writes (docs/design.md
// §10), and the DATA records it hands rank 0 to journal at the next commit.
// A follower never writes the journal: it reads the journal's tail
// as rank 0 appends to it, and lays each record onto its own image, so that
// it reads what rank 0 wrote, committed or not (HDF5 reads metadata rank 0
// wrote right after a sync point, before any commit).  It takes no lock:
// rank 0 holds the journal's.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "image_layers.h"
#include "journal_reader.h"
#include "rank_exchange.h"

namespace h5j {

class JournalFollower {
 public:
  // Follows the journal in `journal` (not owned) from its current generation.
  static Result<std::unique_ptr<JournalFollower>> open(File& journal);

  const JournalHeader& header() const { return tail_->header(); }
  // The transaction rank 0 has open, or will open next.
  uint64_t open_txn() const { return open_txn_; }
  // Whether rank 0 has started a new generation (a checkpoint) since this
  // follower started following its current one.
  Result<bool> generation_changed() const;
  // Lays the records appended since the last call onto `image`; DATA records
  // of data log `own_log` are this rank's, in its image from the moment it
  // wrote them.  A record not yet whole (rank 0 is writing it) ends the
  // pass; the next one starts there again.
  Status catch_up(ImageLayers& image, uint32_t own_log);

  // A DATA record of this rank's data log, for rank 0's next commit.
  void hand_to_owner(const DataPayload& index) { pending_.push_back(index); }
  // Step 1 of the collective commit: the records handed over since the
  // last call, with `log_bytes`, the size of this rank's data log.
  PreparedIndex prepare(uint64_t log_bytes) {
    PreparedIndex p;
    p.records = std::exchange(pending_, {});
    p.log_bytes = log_bytes;
    return p;
  }

 private:
  JournalFollower(File& journal, std::unique_ptr<JournalReader> tail)
      : journal_(journal), tail_(std::move(tail)), open_txn_(tail_->header().first_txn) {}
  void apply(const Record& r, ImageLayers& image, uint32_t own_log);

  File& journal_;
  std::unique_ptr<JournalReader> tail_;
  uint64_t open_txn_;
  std::vector<DataPayload> pending_;  // for rank 0's next commit
};

}  // namespace h5j
