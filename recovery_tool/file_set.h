// Which files h5recover looks at: the FILEs it is given, and with
// --recursive every file under each DIR that recovery could concern.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "status.h"

namespace h5j {

// Under `dir`, in a stable (sorted) order, every regular file that is an
// HDF5 file, is in log form, or has a journal (`journal_of` a file: beside
// it, in --journal-dir, or named by its binding); and, for a journal found with
// no file beside it, the missing file's name, so that the loss is
// reported (not for one a journal_path=DIR/ named, which holds no
// directory: walked, DIR holds journals, not files).  Journals, data logs and kept journals are not files to
// recover; other files (a job's logs, say) are skipped.
Result<std::vector<std::string>> files_under(const std::string& dir,
                                             const std::function<std::string(const std::string&)>& journal_of);

}  // namespace h5j
