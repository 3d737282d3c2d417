// Room for a writer's descriptors under the process's limit on open files.
//
// sec2 holds one descriptor for an open file.  h5journal holds up to six:
// the file, its journal, the journal's lock (posix_file.h), an io_uring
// ring, and with durable=<interval> the background sync's own two
// (background_sync.h).  Under the soft limit most systems start a process
// with, 1024, a program that keeps 400 files open runs under sec2 and runs
// out (EMFILE) under h5journal.  So when an open finds the process out of
// descriptors, the soft limit is raised toward the hard one (Go's runtime
// raises it to the hard limit as every program starts) and the open is
// tried again.  The soft limit of 1024 keeps descriptors below select()'s
// FD_SETSIZE; it is raised only when the process would otherwise fail.
#pragma once

#include <string>

#include "status.h"

namespace h5j {

// After EMFILE: raises the soft RLIMIT_NOFILE (doubled, at most the hard
// limit).  False, errno EMFILE, when it is at the hard limit already.
bool raise_open_files_limit();

// The error of an open that failed with `err`; for an EMFILE that stayed,
// the limit and what to do about it.
Status opening_error(int err, const std::string& what);

// ::open(path, flags, mode), tried again past a raised limit.
int open_raising_limit(const char* path, int flags, unsigned mode = 0);

}  // namespace h5j
