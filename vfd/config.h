// The driver's configuration: defaults, validation, and the "key=value;..."
// spelling used by HDF5_DRIVER_CONFIG and H5Pset_driver_by_name.
#pragma once

#include <string>

#include "h5journal.h"
#include "status.h"

namespace h5j {

// durable_within_ms's bound: an hour.
inline constexpr uint32_t kMaxDurableWithinMs = 3600000;

H5FD_journal_fapl_t default_config();
// Checks ranges; the message names the offending key.
Status validate_config(const H5FD_journal_fapl_t& config);
// Applies "key=value;key=value" to `config`.  Unknown keys and bad values are
// errors naming the key.  Whitespace around keys and values is ignored.
Status parse_config(const std::string& text, H5FD_journal_fapl_t& config);
// The journal path for `file`: the configured one, or "<file>.jnl".
std::string journal_path_for(const std::string& file, const H5FD_journal_fapl_t& config);

// HDF5's file locking setting: HDF5_USE_FILE_LOCKING (FALSE or 0, TRUE or
// 1, BEST_EFFORT; anything else is ignored) over the FAPL's
// H5Pset_file_locking, exactly as HDF5 reads them.
struct FileLocking {
  bool use = true;          // take HDF5's lock on the file
  bool best_effort = true;  // and open without it where the file system has none
  // Whether an open must fail where no lock other processes see works.
  bool required() const { return use && !best_effort; }
};
FileLocking file_locking(hid_t fapl);

}  // namespace h5j
