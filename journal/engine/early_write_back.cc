// Early write-back: committed overlay extents written into the file as the
// generation grows, so that its checkpoint has little left to write.
//
// Why.  A checkpoint writes every block its generation changed into the
// file and syncs it while the commit that came due waits: W4's 64 KiB steps
// are journaled (design.md §9), so every 16 MiB of steps the commit stalled
// 30 to 40 ms on a 16 MiB write and its fdatasync.  Written back a piece at
// a time behind the commits, with their writeback started at once, the
// same bytes reach the disk while HDF5 works, and the checkpoint syncs what
// little is left (decisions/early-write-back.md).
//
// When: at a commit point of a durable serial writer whose every commit is
// durable when it returns (not durable_within), once the generation
// has grown by checkpoint_bytes / 16 since it was last written back, while
// its raw layer is empty (image_layers.h: a raw layer goes under the whole
// overlay, so the checkpoint writes that whole anyway) and no live reader
// holds a snapshot.  Without durability a checkpoint costs no flush, and
// its default interval is 1 MiB already.  Also, at once, at the first
// commit that holds the superblock of a file created empty (commit.cc,
// first_superblock_only_journaled), whose every byte lies above the base size.
// Under durable_within the first commit writes new space in place, the
// superblock with it; one the journal alone holds is a checkpoint there.
//
// What: the extents of image_.not_in_file (the overlay's extents not yet
// written back) at or above the size the file had when the generation
// started (its header's base size), up to the committed size, each from the
// journal, through write_overlay; their writeback is started at once.
// Below the base size lie the header's fingerprint samples (file_match.h):
// rewriting those would need the applying marker, which would weaken
// recovery's check of a file changed behind the journal's back for as long
// as it stays.  Above it lie what the generation appended (W4's steps, new
// objects), which no sample covers.  A checkpoint or a close then writes
// only the rest (ImageLayers::overlay_to_apply).
//
// Invariants, each the checkpoint's own (commit.cc):
//   - Only committed bytes are written back, and only once their COMMIT is
//     durable: the write-back runs after commit_transaction returned, with
//     nothing of the next transaction written yet.
//   - No fingerprint sample is rewritten: nothing below the base size.
//   - No live reader's snapshot sees a rewritten byte: new readers are held
//     off and the readers' locks probed first (ReadersFile::
//     alone_for_rewrite); with a reader present nothing is written back
//     and the checkpoint, put off for it, writes the whole.
//   - No COMMIT records the growth of the file a write-back made until a
//     sync covers it (WriteAheadFile::size_for_commits): a power loss may
//     take that growth back, and a sound file is never shorter than its last
//     commit records.
//
// Worked example, checkpoint_bytes 16 MiB, W4's 64 KiB steps.  After step
// 16 the generation holds 1 MiB: the extents of steps 1 to 16 past the base
// size are written into the file and their writeback started; likewise
// after steps 32, 48, and so on.  At step 256 the checkpoint writes steps
// 241 to 256 and the metadata below the base size, and syncs the file.  A
// power loss after step 100, with the write-back of steps 81 to 96 half on
// disk and the file's size not yet grown: recovery finds every fingerprint
// sample as the header says, the file no shorter than COMMIT 100 recorded
// (its size before any write-back grew it), and replays the generation's
// commits 1 to 100 over the file, half-written bytes and all: replay is
// idempotent, and the file comes back at step 100.
#include <cassert>

#include "journaled_file.h"

namespace h5j {

bool JournaledFile::may_write_back_early() const {
  assert(!writes_back_early() || !first_commit_done_ || all_commits_durable());
  return writes_back_early() && first_commit_done_ && image_.raw.empty();
}

bool JournaledFile::early_write_back_due() const {
  if (!may_write_back_early() || base_empty_ ||
      !image_.not_in_file.intersects(txn_->header().base_size, image_.committed_size))
    return false;
  uint64_t grown = txn_->records().generation_bytes() - written_back_at_;
  return grown >= std::max<uint64_t>(opts_.checkpoint_bytes / kEarlyWriteBacks, 1);
}

Status JournaledFile::write_back_early() { return try_write_back_early().status(); }

Result<bool> JournaledFile::try_write_back_early() {
  if (readers_) {
    auto alone = readers_->alone_for_rewrite();
    if (!alone) return alone.status();
    if (!*alone) {
      // Asked again once the generation has grown as much more: not at
      // every commit while readers come and go, each ask holding them off.
      written_back_at_ = txn_->records().generation_bytes();
      return false;
    }
  }
  H5J_RETURN_IF_ERROR(begin_rewrite(/*wait=*/false));
  uint64_t from = txn_->header().base_size, to = image_.committed_size;
  auto kept = apply_buffers().take();
  H5J_RETURN_IF_ERROR(write_overlay(
      image_.not_in_file, from, to,
      [this](uint64_t off, std::span<std::byte> out) { return read_journal(off, out); }, *base_, kept.get()));
  if (to > from) base_->start_writeback(from, to - from);
  image_.written_back(from, to);
  written_back_at_ = txn_->records().generation_bytes();
  base_empty_ = false;
  ++stats_.early_write_backs;
  H5J_RETURN_IF_ERROR(end_rewrite());
  return true;
}

}  // namespace h5j
