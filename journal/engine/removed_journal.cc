// A journal removed while its file is open for writing: a clean-up
// script's `rm *.jnl` beside a running job, say.  The writer holds the
// journal open, so its commits go on landing in the unlinked inode and
// reading back right, and the first crash takes every one of them since
// the last checkpoint with it: the file is left guarded and bound to a
// journal that is not there (h5recover: "journal ... is missing").
//
// So a serial commit point looks at the journal after its COMMIT, and one
// that finds it gone does what a close does: it writes the commit just
// made, and every one before it, into the file, which it leaves a plain
// HDF5 file, unguarded and unbound; then it stops the writer, its error
// saying so.  Nothing committed is lost, unless the process dies between
// the removal and that commit.
//
// Once a millisecond at most: an fstat costs 0.25 us here, against about
// 26 us for a commit of W4's 8 KiB steps with durable=false.  A commit
// less than a millisecond after the removal may thus be acknowledged into
// the unlinked journal; the next one after that millisecond writes it into
// the file.
//
// Under MPI the commits are collective (collective_commit.cc), and this
// look is not made.
#include "journaled_file.h"

namespace h5j {

namespace {
constexpr std::chrono::milliseconds kRemovalLookEvery{1};
}  // namespace

Result<bool> JournaledFile::journal_removed() {
  auto now = std::chrono::steady_clock::now();
  if (now < next_removal_look_) return false;
  next_removal_look_ = now + kRemovalLookEvery;
  return journal_->removed();
}

// Its readers file may have gone with it (`rm *.jnl*`, or the journal's
// directory removed): then no reader can come, none that holds it can be
// told to leave, and the close goes on without them.  A reader that holds
// it may read a mixture of this commit and its snapshot's while the file
// is written; the file itself is whole.
Status JournaledFile::close_for_removed_journal() {
  if (readers_ && !opts_.fs->exists(readers_->path())) readers_.reset();
  H5J_RETURN_IF_ERROR(materialize());
  return Status(Code::kMissing,
                opts_.journal_path + " was removed while " + base_->path() +
                    " was open for writing through h5journal (a clean-up of journal files?): " + base_->path() +
                    " now holds this commit as a plain HDF5 file, and nothing more is written to it");
}

}  // namespace h5j
