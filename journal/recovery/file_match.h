// Whether the HDF5 file beside a journal is still the file the journal was
// written against, checked before recovery replays anything into it.
//
// A journal holds only what changed since its generation started; every
// other committed byte is in the file itself.  A file cut short (an
// interrupted copy) or replaced by another would take the replay and come
// out wrong, silently.  So the journal records two things, and recovery
// checks both and changes nothing if either fails (kBaseMismatch):
//
//  - the file's own size on disk at every commit (COMMIT, version 5; less
//    what an early write-back grew it by and no sync has covered yet), or
//    at the generation's start (the header's base size) for older journals.
//    The last commit needs min(that size, its logical size) bytes from the
//    file: replay and a checkpoint only ever cut the file to the committed
//    logical size, so a sound file is never shorter.
//  - a fingerprint (the header, version 5): up to 8 samples of 64 bytes,
//    spread over the file as it was when the generation started.  Within a
//    generation only the writes of committed bytes (a checkpoint, a close,
//    a replay) touch the file below the size it started with, and while
//    they may be in flight the file carries kApplyingXattr.  Without that
//    marker (and with a binding, which shows the file system keeps
//    extended attributes) every sample must match: a program without the
//    driver that wrote the file after the crash is caught wherever it
//    changed a sample, the superblock's included.  With it, only the
//    samples no committed record covers are compared: those hold their
//    bytes in a sound file however often recovery was interrupted.
//    Samples past what the last commit needs are skipped, and so are those
//    under a committed ZERO or PLACED record's range: after a checkpoint,
//    space HDF5 allocated and never wrote lies below the generation's
//    start, and a write there may go in place (unwritten_space.h).  Under MPI no
//    fingerprint is taken: rank 0 does not see the other ranks' writes.
#pragma once

#include <vector>

#include "file.h"
#include "format.h"
#include "replay.h"

namespace h5j {

// The fingerprint of `file`'s first `size` bytes, for a new generation's header.
Result<std::vector<uint16_t>> fingerprint_file(File& file, uint64_t size);

// kBaseMismatch, naming the file and what differs, unless `file` can take
// `plan`, made from the journal at `journal` whose header is `h`.
Status check_file_matches(File& file, const std::string& journal, const JournalHeader& h, const ReplayPlan& plan);

}  // namespace h5j
