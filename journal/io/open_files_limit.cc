#include "open_files_limit.h"

#include <fcntl.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>

namespace h5j {

bool raise_open_files_limit() {
  struct rlimit r;
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur >= r.rlim_max) {
    errno = EMFILE;
    return false;
  }
  r.rlim_cur = std::min(r.rlim_max, std::max<rlim_t>(r.rlim_cur * 2, 64));
  if (::setrlimit(RLIMIT_NOFILE, &r) != 0) {
    errno = EMFILE;
    return false;
  }
  return true;
}

Status opening_error(int err, const std::string& what) {
  Status s = Status::from_errno(err, what);
  if (err != EMFILE) return s;
  struct rlimit r;
  std::string limit = ::getrlimit(RLIMIT_NOFILE, &r) == 0 ? std::to_string(r.rlim_cur) + " " : "";
  return s.appended(" (the process's limit on open files, " + limit +
                    "descriptors, is its hard limit: a file open through h5journal holds up to six, where sec2 "
                    "holds one; raise it with ulimit -Hn, or keep fewer files open)");
}

int open_raising_limit(const char* path, int flags, unsigned mode) {
  for (;;) {
    int fd = ::open(path, flags, mode);
    if (fd >= 0 || errno != EMFILE || !raise_open_files_limit()) return fd;
  }
}

}  // namespace h5j
