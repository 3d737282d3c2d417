// The copies h5recover makes: --output recovers a copy of the file, its
// journal and data logs, leaving the originals alone; --keep-journal keeps
// the journal it replayed.
#pragma once

#include <string>

#include "status.h"

namespace h5j {

// `from` copied to `to` (created or emptied), with the attributes recovery
// reads (kRecoveryXattrs), and synced.
Status copy_file(const std::string& from, const std::string& to);
// `file` and `journal` copied to `output` and `output`.jnl, with every data log.
Status copy_for_output(const std::string& file, const std::string& journal, const std::string& output);

}  // namespace h5j
