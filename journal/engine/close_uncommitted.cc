// A close that committed nothing, of a file that held nothing committed:
// a file created, written and closed without an H5Fflush, the commonest
// HDF5 session (a file per time step, a checkpoint dump, h5bench).
//
// Such a session has no state a crash could lose: until its close returns
// nothing was committed, and the file is HDF5's only once the close has
// written it whole.  So the close needs no journal.  It writes the image
// straight into the file, with HDF5's signature held back, and makes the
// signature the commit:
//
//   1. the image into the file, the signature's bytes zeros;  sync the file
//   2. the journal, data logs and readers file removed;     sync the directory
//   3. the signature into its place;                        sync the file
//
// Three flushes (the file, the directory, the file), where a commit and a
// materializing close take five: the journal's name, the binding, the
// COMMIT, the image, the binding's removal with the retired journal's
// header (commit.cc, end_close).
//
// THE INVARIANTS, at every moment, power loss included:
//  - the file holds HDF5's signature only once every other byte of
//    it is durable (1 before 3): a reader never takes a half-written file
//    for HDF5's, it finds no HDF5 file at all;
//  - a journal is found beside the file only while the signature is not
//    on disk (2 before 3): the driver then names the file as never
//    committed, as for a process killed before its first commit, and never
//    refuses a whole file for a stale journal.
//
// Worked example.  The power fails during step 1, after the raw data but
// before the superblock's block reached the disk.  The file holds a
// megabyte of data, no signature, and perhaps the journal (its name was
// never synced, so the disk may or may not keep it).  With the journal, an
// open through the driver says the file was never committed; without,
// HDF5 finds no signature.  Either way nothing acknowledged is lost: the
// close never returned.  Had the close written the signature with the
// image, the disk could hold the superblock and a part of the metadata it
// points to, and h5dump would read a broken file.
//
// The signature is held back from the session's open (open.cc), whatever
// goes in place, until the first commit or this close.  Only serially:
// under MPI the close is the ranks' collective commit.  And only when the
// image holds HDF5's signature where the superblock is: at 0, or after a
// user block (superblock_guard.h).
#include "journaled_file.h"

namespace h5j {

// The files the file's and the journal's names lead to now.  A relative
// name leads elsewhere once the program changes its working directory
// (HDF5's own vds test does, between a create and its close).
std::optional<std::pair<FileId, FileId>> JournaledFile::names_lead_to() {
  auto file = opts_.fs->id(base_->path());
  auto journal = opts_.fs->id(opts_.journal_path);
  if (!file || !journal) return std::nullopt;
  return std::pair(*file, *journal);
}

bool JournaledFile::may_close_uncommitted() {
  if (first_commit_done_ || report_.journal_found || !base_empty_ || !opts_.materialize_at_close) return false;
  const uint64_t at = base_->superblock_offset();
  if (!base_->holds_signature() || image_.logical_size < at + kSignatureBytes) return false;
  // By name it removes the journal and syncs the directories: were the
  // names to lead elsewhere, the journal, with no commit, would stay beside
  // the whole file, and the driver would refuse the file as never committed.
  if (!names_at_open_ || names_lead_to() != names_at_open_) return false;
  std::array<std::byte, kSignatureBytes> head{};
  return read(at, head) && is_hdf5_head(head);
}

Status JournaledFile::close_uncommitted() {
  const bool durable = opts_.ring.durable;
  H5J_RETURN_IF_ERROR(place_staged_below(UINT64_MAX));
  H5J_RETURN_IF_ERROR(apply_to_base(image_.raw, image_.logical_size));  // the open transaction's size
  if (durable) H5J_RETURN_IF_ERROR(base_->sync_data());
  H5J_RETURN_IF_ERROR(remove_journal_files(/*sync_journal=*/false, /*sync_logs=*/false));
  if (durable) H5J_RETURN_IF_ERROR(sync_names());  // the file's name too, and the journal's removal
  H5J_RETURN_IF_ERROR(base_->restore_write_permission());
  H5J_RETURN_IF_ERROR(base_->release_signature());
  return durable ? base_->sync_all() : Status::ok();
}

}  // namespace h5j
