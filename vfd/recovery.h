// Crash recovery of an HDF5 file and its journal: the one implementation
// behind open-time recovery, h5recover, and the crash-state explorer.
// Replay is the engine's (journal/recovery/replay.h); this adds what HDF5
// needs of a recovered file: its superblock status flags cleared, so that it
// opens without h5clear.
#pragma once

#include <functional>
#include <string>

#include "h5journal.h"
#include "journal_options.h"

namespace h5j {

// The HDF5 fix-ups run on every recovered image (JournalOptions::after_replay).
H5JOURNAL_API std::function<Status(RecoveredImage&)> hdf5_recovery_fixups();

// Engine options for `file` under the driver configuration `config`, over `fs`.
H5JOURNAL_API JournalOptions journal_options_for(const std::string& file, const H5FD_journal_fapl_t& config,
                                                 FileSystem& fs);

// Replays the committed transactions of `file`'s journal into the file,
// clears its status flags, syncs it and removes the journal.  A file with no
// journal is left alone (report.journal_found is false).
H5JOURNAL_API Result<OpenReport> recover_file(const std::string& file, const JournalOptions& options);

}  // namespace h5j
