// Write protection: a file the driver writes has no write permission bits.
//
// Why: the kernel truncates a file at open(O_TRUNC), before HDF5 (or any
// program) asks for a lock, so a lock alone cannot stop a second copy of a
// job that opens the file with H5F_ACC_TRUNC through sec2: its open has
// emptied the file, committed bytes and all, by the time its lock fails.
// Permission is checked before that truncation.  With no write bit, such
// an open fails with EACCES and changes nothing, whatever driver, locking
// setting or file system the other program uses.
//
// The bits taken are recorded in the file's kWriteBitsXattr (format.h)
// before they are cleared, and given back before the record goes, so a
// crash at any point leaves either a writable file or a record to restore
// from.  A writer killed mid-session leaves the file read-only with its
// record: a file whose journal still holds commits is then also refused to
// programs that would write it without recovering it first.
//
// Limits: root (CAP_DAC_OVERRIDE) ignores permission bits; only the file's
// owner may change them, so a writer that is not the owner writes without
// protection; a file system without user xattrs gets none either.
#include <sys/stat.h>
#include <sys/xattr.h>

#include <cerrno>
#include <charconv>
#include <cstdio>

#include "format.h"
#include "posix_file.h"

namespace h5j {
namespace {

constexpr mode_t kWriteBits = S_IWUSR | S_IWGRP | S_IWOTH;

// The bits kWriteBitsXattr records, or 0 when there is no record.
mode_t recorded_write_bits(int fd) {
  char text[16];
  ssize_t n = ::fgetxattr(fd, kWriteBitsXattr, text, sizeof text);
  unsigned bits = 0;
  if (n <= 0 || std::from_chars(text, text + n, bits, 8).ec != std::errc()) return 0;
  return mode_t(bits) & kWriteBits;
}

}  // namespace

Result<bool> PosixFile::remove_write_permission() {
  auto status = file_status();
  if (!status) return status.status();
  const struct stat& st = *status;
  mode_t recorded = recorded_write_bits(fd_.get());
  // No write bit: protected already (a crashed writer's file, taken over),
  // or read-only by its owner's choice, with nothing to give back later.
  if ((st.st_mode & kWriteBits) == 0) return recorded != 0;
  mode_t bits = (st.st_mode & kWriteBits) | recorded;  // a record's bits are still owed back
  char text[8];
  int len = std::snprintf(text, sizeof text, "%o", unsigned(bits));
  if (::fsetxattr(fd_.get(), kWriteBitsXattr, text, size_t(len), 0) != 0) {
    if (errno == ENOTSUP || errno == EPERM) return false;  // no user xattrs here
    return error(errno, "record the write permission of");
  }
  if (::fchmod(fd_.get(), st.st_mode & 07777 & ~kWriteBits) == 0) return true;
  int err = errno;
  (void)::fremovexattr(fd_.get(), kWriteBitsXattr);
  if (err == EPERM || err == EROFS) return false;  // not the owner's process
  return error(err, "remove the write permission of");
}

Status PosixFile::restore_write_permission() {
  mode_t bits = recorded_write_bits(fd_.get());
  if (bits == 0) return Status::ok();
  auto st = file_status();
  if (!st) return st.status();
  if (::fchmod(fd_.get(), (st->st_mode & 07777) | bits) != 0) return error(errno, "restore the write permission of");
  if (::fremovexattr(fd_.get(), kWriteBitsXattr) != 0 && errno != ENODATA)
    return error(errno, "remove extended attribute of");
  return Status::ok();
}

// user.* extended attributes need write permission on the file (xattr(7)),
// which a write-protected file lacks: `change` runs again with the recorded
// bits given back for that moment.  Returns its result, with errno set.
int PosixFile::change_xattr(const std::function<int()>& change) {
  if (change() == 0) return 0;
  if (errno != EACCES) return -1;
  int fd = fd_.get();
  mode_t bits = recorded_write_bits(fd);
  struct stat st;
  if (bits == 0 || ::fstat(fd, &st) != 0 || ::fchmod(fd, (st.st_mode & 07777) | bits) != 0) {
    errno = EACCES;
    return -1;
  }
  int result = change();
  int err = errno;
  (void)::fchmod(fd, st.st_mode & 07777);
  errno = err;
  return result;
}

}  // namespace h5j
