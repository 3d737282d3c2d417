// The driver's configuration: defaults, validation, and the "key=value;..."
// spelling used by HDF5_DRIVER_CONFIG and H5Pset_driver_by_name.
#pragma once

#include <string>

#include "h5journal.h"
#include "status.h"

namespace h5j {

H5FD_journal_fapl_t default_config();
// Checks ranges; the message names the offending key.
Status validate_config(const H5FD_journal_fapl_t& config);
// Applies "key=value;key=value" to `config`.  Unknown keys and bad values are
// errors naming the key.  Whitespace around keys and values is ignored.
Status parse_config(const std::string& text, H5FD_journal_fapl_t& config);
// The journal path for `file`: the configured one, or "<file>.jnl".
std::string journal_path_for(const std::string& file, const H5FD_journal_fapl_t& config);

}  // namespace h5j
