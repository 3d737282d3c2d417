// h5recover's exit statuses: what a script can rely on.  Documented in
// --help, the README, docs/recovery.md and h5recover.1.
//
// As fsck's: 0 whenever the file is a usable HDF5 file afterwards, whether
// it was recovered or already clean, so that `h5recover run.h5 && analyse
// run.h5` and a loop over a job's files go on past a clean file.  Over many
// files the status is the worst file's, in the order of severity() below.
#pragma once

namespace h5j {

enum ExitStatus : int {
  kExitOk = 0,               // recovered, or clean; with --check: clean
  kExitRecoveryNeeded = 1,   // --check only: recovery is needed and would succeed
  kExitUsage = 2,            // bad command line
  kExitNotHdf5 = 3,          // the file is missing, a directory, not HDF5, or truncated with no journal
  kExitJournalMissing = 4,   // the file was being journaled (or was not closed cleanly) and its journal is gone
  kExitForeignJournal = 5,   // the journal belongs to another file, or is an older generation of this one
  kExitCorruptJournal = 6,   // the journal is damaged beyond what the recovery mode accepts
  kExitIoError = 7,          // reading or writing failed (permissions, read-only, full disk, I/O error)
  kExitVerifyFailed = 8,     // --verify: the recovered file does not read back completely
  kExitNeverCommitted = 9,   // created and never committed: nothing to recover, nothing changed
  kExitFileMismatch = 10,    // the file is shorter than its journal needs, or not the file it was written against
};

// How bad a status is, for the worst of many files: a usable file, then
// one that needs recovery, then one that never committed (nothing was lost,
// but there is no HDF5 file), then every failure.
inline int severity(int status) {
  switch (status) {
    case kExitOk: return 0;
    case kExitRecoveryNeeded: return 1;
    case kExitNeverCommitted: return 2;
    default: return 3 + status;
  }
}

inline constexpr const char* kExitTable =
    "Exit status (for many files, the worst file's):\n"
    "  0  the file is a usable HDF5 file: recovered, or already clean\n"
    "     (with --check: clean)\n"
    "  1  --check: recovery is needed and would succeed\n"
    "  2  usage error\n"
    "  3  file missing, a directory, not an HDF5 file, or truncated with no journal\n"
    "  4  journal missing: the file was being written through h5journal (or was not\n"
    "     closed cleanly) and its journal is gone\n"
    "  5  the journal belongs to another file, or is an older generation\n"
    "  6  the journal is damaged beyond what the recovery mode accepts; in the\n"
    "     default mode, damaged in the middle with durable commits after it:\n"
    "     nothing changed; recover a copy with --output, or --mode salvage --output\n"
    "  7  I/O error while reading or writing (permissions, read-only, full disk)\n"
    "  8  --verify found the recovered file unreadable\n"
    "  9  never committed: the file's writer stopped before its first H5Fflush or\n"
    "     H5Fclose; there is nothing to recover, and the file and its journal are\n"
    "     left as they are\n"
    " 10  the file is shorter than its journal needs, or not the file the journal\n"
    "     was written against (cut short, replaced, or written without the driver\n"
    "     after the crash); nothing was changed\n";

}  // namespace h5j
