#include "status.h"

#include <cerrno>
#include <cstring>

namespace h5j {

Status Status::from_errno(int err, const std::string& what) {
  Code code = (err == ENOSPC || err == EDQUOT) ? Code::kNoSpace : Code::kIoError;
  return Status(code, what + ": " + std::strerror(err), err);
}

}  // namespace h5j
