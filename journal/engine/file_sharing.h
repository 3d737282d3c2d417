// What sharing the file with other MPI ranks changes, decided once from a
// handle's Role (journal_options.h).  Each rule is named here with its
// reason; nothing else in the engine asks whether the file is shared.
// (Which part a process plays, the journal's writer or a follower of rank
// 0's, is told by the object it holds: Transaction or JournalFollower.)
#pragma once

#include <cstdint>

#include "apply_image.h"
#include "journal_options.h"

namespace h5j {

class FileSharing {
 public:
  explicit FileSharing(Role role) : shared_(role != Role::kSerial) {}

  // The file's own size in COMMIT, the header's fingerprint and the
  // applying marker (file_match.h): another rank's writes of the next
  // transaction may change the file before they are durable, so none of
  // the file's own bytes can be vouched for.
  bool records_file_identity() const { return !shared_; }
  // Space HDF5 allocated and never wrote (unwritten_space.h): another rank
  // may write any byte of it, so nothing counts as unwritten.
  bool tracks_unwritten_space() const { return !shared_; }
  // A serial writer takes the file's write permission at open; under MPI
  // rank 0 does, once every rank has opened the file for writing.
  bool protects_at_open() const { return !shared_; }
  // Committed bytes written into the file before the checkpoint
  // (early_write_back.cc): under MPI a checkpoint is the ranks' collective
  // step, which rank 0 alone cannot begin.
  bool writes_back_early() const { return !shared_; }
  // Whether bytes between this process's pieces may be written back with
  // them (sieve spans, staged runs a little apart): under MPI they may be
  // another rank's, which writing them back would overwrite with stale ones
  // (why HDF5 turns its sieve buffer off in parallel).
  bool may_write_gaps() const { return !shared_; }
  GapFill gaps() const { return may_write_gaps() ? GapFill::kFromFile : GapFill::kLeave; }
  // A write of one raw piece lands at once, never staged: HDF5 has rank 0
  // write a dataset's fill alone, then an MPI_Barrier the driver cannot see,
  // then every rank its data, and the fill must land first.
  bool lands_single_pieces_at_once() const { return shared_; }
  // Small raw pieces in new space are staged: serially under raw=inplace;
  // under MPI unless raw=log, since no rank may gather sieve spans.
  bool stages(RawMode mode) const { return shared_ ? mode != RawMode::kLog : mode == RawMode::kInPlace; }
  // Every rank keeps a data log, rank 0's too: their numbers must have no
  // gaps (DataLogSet::records_of, h5recover).  Serially only raw=log and
  // raw=auto need one.
  bool keeps_data_log(RawMode mode) const { return shared_ || mode != RawMode::kInPlace; }
  // A commit of one flush names the in-place bytes it covers in INPLACE
  // records (transaction.h); other ranks' in-place bytes are theirs to sync
  // before rank 0's COMMIT, and no record of rank 0's could name them.
  bool commits_in_one_flush() const { return !shared_; }
  // Serially the session's first commit syncs the file (its fsync makes
  // the binding durable) and names no in-place bytes, so their extents and
  // CRCs are kept from it on; before it only their count, which the
  // background's pacing takes (background_sync.h, WRITTEN AHEAD).  Under
  // MPI rank 0 looks at every commit's extents, the first's too, for bytes
  // two ranks wrote (ranks_may_vouch).
  bool names_in_place_from_first_commit() const { return !shared_; }
  // Until its first commit a file created empty keeps HDF5's signature off
  // the disk (superblock_guard.h), and a close with no commit before it
  // writes the file without a journal, the signature last
  // (close_uncommitted.cc): under MPI the other ranks read the file's head
  // from the disk, and a close is the ranks' collective commit.
  bool holds_signature_until_commit() const { return !shared_; }
  // A metadata rewrite journals only the bytes it changes, found against a
  // copy of the block's last write (last_writes.h): under MPI other ranks'
  // writes change the image without passing rank 0's, and a copy could be
  // stale.
  bool journals_changes_only() const { return !shared_; }
  // Records go where other ranks read them as they are appended: rank 0's
  // journal (followers), every rank's data log (peer_logs.h).
  bool publishes_records() const { return shared_; }
  // Commits a thread makes durable are packed in the journal, their blocks
  // sealed as that thread decides (background_sync.h, SEALS).  Under MPI a
  // transaction is durable only once every follower's thread has covered
  // it too (followers_durable.h), a count the seals do not join: each
  // COMMIT there ends its block.
  bool packs_commits() const { return !shared_; }
  // A read stops at the logical size; under MPI no rank knows the size the
  // others' writes reached, so it reads on to the file's end (HDF5 reads
  // only below its EOA).
  uint64_t read_limit(uint64_t logical_size) const { return shared_ ? UINT64_MAX : logical_size; }

 private:
  bool shared_;
};

}  // namespace h5j
