// h5recover's exit statuses: what a script can rely on.  Documented in
// --help, the README, docs/recovery.md and h5recover.1.
#pragma once

namespace h5j {

enum ExitStatus : int {
  kExitRecovered = 0,       // recovered; with --dry-run: recovery is needed and would succeed
  kExitNothingToDo = 1,     // the file is clean: no journal, nothing to replay
  kExitUsage = 2,           // bad command line
  kExitNotHdf5 = 3,         // the file is missing, a directory, not HDF5, or truncated with no journal
  kExitJournalMissing = 4,  // the file was being journaled (or was not closed cleanly) and its journal is gone
  kExitForeignJournal = 5,  // the journal belongs to another file, or is an older generation of this one
  kExitCorruptJournal = 6,  // the journal is damaged beyond what the recovery mode accepts
  kExitIoError = 7,         // reading or writing failed (permissions, read-only, full disk, I/O error)
  kExitVerifyFailed = 8,    // --verify: the recovered file does not read back completely
};

inline constexpr const char* kExitTable =
    "Exit status:\n"
    "  0  recovered (with --dry-run: recovery is needed and would succeed)\n"
    "  1  nothing to do: the file is clean\n"
    "  2  usage error\n"
    "  3  file missing, a directory, not an HDF5 file, or truncated with no journal\n"
    "  4  journal missing: the file was being written through h5journal (or was not\n"
    "     closed cleanly) and its journal is gone\n"
    "  5  the journal belongs to another file, or is an older generation\n"
    "  6  the journal is damaged beyond what the recovery mode accepts\n"
    "  7  I/O error while reading or writing (permissions, read-only, full disk)\n"
    "  8  --verify found the recovered file unreadable\n";

}  // namespace h5j
