#include "posix_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <string_view>
#include <utility>

#include "open_files_limit.h"
#include "uring_file.h"

namespace h5j {

Status PosixFile::error(int err, const char* op) const {
  return Status::from_errno(err, std::string(op) + " " + path_);
}

Result<size_t> PosixFile::read_at(uint64_t offset, std::span<std::byte> out) {
  size_t done = 0;
  int retries = 0;
  while (done < out.size()) {
    size_t want = std::min<size_t>(out.size() - done, SSIZE_MAX);
    ssize_t n = sys_.pread(fd_.get(), out.data() + done, want, off_t(offset + done));
    if (n < 0) {
      if ((errno == EINTR || errno == EAGAIN) && ++retries < kMaxRetries) continue;
      return error(errno, "read");
    }
    if (n == 0) break;  // end of file
    done += size_t(n);
  }
  return done;
}

Status PosixFile::write_at(uint64_t offset, std::span<const std::byte> data) {
  size_t done = 0;
  int retries = 0;
  while (done < data.size()) {
    size_t want = std::min<size_t>(data.size() - done, SSIZE_MAX);
    ssize_t n = sys_.pwrite(fd_.get(), data.data() + done, want, off_t(offset + done));
    if (n < 0) {
      if ((errno == EINTR || errno == EAGAIN) && ++retries < kMaxRetries) continue;
      return error(errno, errno == EAGAIN ? "write (retries exhausted)" : "write");
    }
    if (n == 0) return error(EIO, "write (no progress)");
    done += size_t(n);
  }
  return Status::ok();
}

Status PosixFile::sync_data() {
  // Never retried: after a failed fdatasync the kernel may have dropped the
  // dirty pages, and a second call would report success for lost data.
  if (sys_.fdatasync(fd_.get()) != 0) return error(errno, "fdatasync");
  return Status::ok();
}

Status PosixFile::write_back() {
  if (sys_.write_back(fd_.get()) != 0) return error(errno, "sync_file_range");
  return Status::ok();
}

void PosixFile::start_writeback(uint64_t offset, uint64_t length) {
  (void)sys_.start_writeback(fd_.get(), off_t(offset), off_t(length));
}

Status PosixFile::truncate(uint64_t size) {
  if (sys_.ftruncate(fd_.get(), off_t(size)) != 0) return error(errno, "truncate");
  return Status::ok();
}

Result<struct stat> PosixFile::file_status() const {
  struct stat st;
  if (::fstat(fd_.get(), &st) != 0) return error(errno, "stat");
  return st;
}

Result<uint64_t> PosixFile::size() {
  auto st = file_status();
  if (!st) return st.status();
  return uint64_t(st->st_size);
}

// lseek's SEEK_DATA and SEEK_HOLE (ext4, XFS, btrfs, tmpfs; NFS 4.2,
// Lustre 2.14) count bytes still in the page cache as data; file systems
// without them answer that all of the file is data, up to its end.
// ENXIO: no data at or past `offset`.
File::DataRun PosixFile::data_run(uint64_t offset) {
  off_t data = ::lseek(fd_.get(), off_t(offset), SEEK_DATA);
  if (data < 0) return errno == ENXIO ? DataRun{kNoData, kNoData} : File::data_run(offset);
  off_t hole = ::lseek(fd_.get(), data, SEEK_HOLE);
  return {uint64_t(data), hole > data ? uint64_t(hole) : kNoData};
}

std::string PosixFile::current_name() {
  std::string link = "/proc/self/fd/" + std::to_string(fd_.get()), name(PATH_MAX, '\0');
  ssize_t n = ::readlink(link.c_str(), name.data(), name.size());
  if (n <= 0 || size_t(n) >= name.size()) return {};
  name.resize(size_t(n));
  if (name.front() != '/' || name.ends_with(" (deleted)")) return {};
  return name;
}

Result<bool> PosixFile::removed() {
  auto st = file_status();
  if (!st) return st.status();
  return st->st_nlink == 0;
}

Status PosixFile::try_lock(LockMode mode) {
  // Locks belong to the open file description, so a second open of the same
  // file in this process conflicts too: that is what keeps HDF5's tentative
  // second open from replaying a journal that is in use.  An open file
  // description lock for writing needs a descriptor open for writing.
  bool writable = mode == LockMode::kExclusive;
  if (ring_shares_descriptor() && (!lock_fd_.valid() || (writable && !lock_fd_writable_))) {
    lock_fd_ = UniqueFd(open_raising_limit(path_.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC));
    if (!lock_fd_.valid()) return opening_error(errno, "open for locking " + path_);
    lock_fd_writable_ = writable;
  }
  return lock_.try_lock(lock_descriptor(), path_, mode);
}

std::optional<int> PosixFile::lock_holder() { return lock_.holder(lock_descriptor()); }

namespace {
// The errors of a file system without byte-range locks.
bool no_byte_locks(int err) { return err == ENOSYS || err == ENOLCK || err == EOPNOTSUPP || err == EINVAL; }

struct flock one_byte(short type, uint64_t offset) {
  struct flock fl = {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = off_t(offset);
  fl.l_len = 1;
  return fl;
}
}  // namespace

Status PosixFile::lock_byte_shared(uint64_t offset) {
  struct flock fl = one_byte(F_RDLCK, offset);
  if (::fcntl(fd_.get(), F_OFD_SETLK, &fl) == 0) return Status::ok();
  if (errno == EAGAIN || errno == EACCES) return Status(Code::kBusy, path_ + ": a byte is locked", errno);
  if (no_byte_locks(errno)) return Status(Code::kUnsupported, path_ + ": no byte-range locks", errno);
  return error(errno, "lock a byte of");
}

Result<bool> PosixFile::byte_locked(uint64_t offset) {
  struct flock fl = one_byte(F_WRLCK, offset);
  if (::fcntl(fd_.get(), F_OFD_GETLK, &fl) == 0) return fl.l_type != F_UNLCK;
  if (no_byte_locks(errno)) return Status(Code::kUnsupported, path_ + ": no byte-range locks", errno);
  return error(errno, "test a byte lock of");
}

static bool xattrs_unsupported(int err) { return err == ENOTSUP || err == EOPNOTSUPP || err == EPERM; }

Result<std::optional<std::string>> PosixFile::get_xattr(const std::string& name) {
  char buf[256];
  ssize_t n = ::fgetxattr(fd_.get(), name.c_str(), buf, sizeof buf);
  if (n >= 0) return std::optional<std::string>(std::string(buf, size_t(n)));
  if (errno == ENODATA || xattrs_unsupported(errno) || errno == ERANGE) return std::optional<std::string>();
  return error(errno, "read extended attribute of");
}

Result<bool> PosixFile::set_xattr(const std::string& name, const std::string& value) {
  if (change_xattr([&] { return ::fsetxattr(fd_.get(), name.c_str(), value.data(), value.size(), 0); }) == 0)
    return true;
  if (xattrs_unsupported(errno)) return false;
  return error(errno, "set extended attribute of");
}

Status PosixFile::remove_xattr(const std::string& name) {
  if (change_xattr([&] { return ::fremovexattr(fd_.get(), name.c_str()); }) == 0 || errno == ENODATA ||
      xattrs_unsupported(errno))
    return Status::ok();
  return error(errno, "remove extended attribute of");
}

Status PosixFile::sync_all() {
  if (sys_.fsync(fd_.get()) != 0) return error(errno, "fsync");
  return Status::ok();
}

Result<uint64_t> PosixFile::submit_write(uint64_t offset, std::span<const std::byte> data) {
  H5J_RETURN_IF_ERROR(write_at(offset, data));
  return next_ticket_++;
}

Status PosixFile::wait_write(uint64_t) { return Status::ok(); }

// ---------------------------------------------------------------------------

Result<std::unique_ptr<File>> PosixFileSystem::open(const std::string& path, OpenMode mode, IoEngine engine) {
  int flags = O_CLOEXEC;
  switch (mode) {
    case OpenMode::kReadOnly: flags |= O_RDONLY; break;
    case OpenMode::kReadWrite: flags |= O_RDWR; break;
    case OpenMode::kCreate: flags |= O_RDWR | O_CREAT; break;
    case OpenMode::kCreateTruncate: flags |= O_RDWR | O_CREAT | O_TRUNC; break;
    case OpenMode::kCreateExclusive: flags |= O_RDWR | O_CREAT | O_EXCL; break;
  }
  int fd = open_raising_limit(path.c_str(), flags, 0666);
  if (fd < 0) {
    if (errno == ENOENT) return Status(Code::kMissing, "open " + path + ": no such file", ENOENT);
    return opening_error(errno, "open " + path);
  }
  UniqueFd owned(fd);
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) return Status(Code::kInvalid, "open " + path + ": is a directory");
  if (engine == IoEngine::kSync || mode == OpenMode::kReadOnly)
    return std::unique_ptr<File>(new PosixFile(path, std::move(owned), sys_));
  return UringFile::open(path, std::move(owned), sys_, /*fallback=*/engine == IoEngine::kAuto);
}

bool PosixFileSystem::exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

Result<FileId> PosixFileSystem::id(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Status::from_errno(errno, "stat " + path);
  return FileId{uint64_t(st.st_dev), uint64_t(st.st_ino)};
}

Status PosixFileSystem::remove(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Status::from_errno(errno, "remove " + path);
  return Status::ok();
}

// ext4's fdatasync sends a cache flush even when it has no metadata to
// commit (ext4_sync_file's needs_barrier), and XFS's likewise
// (xfs_file_fsync, "we might have to flush the data device cache"); a
// device's cache flush covers every write it completed, whichever file's.
// An external journal device (XFS's logdev) flushes that device instead,
// but the data device still gets its own flush.
bool PosixFileSystem::shares_cache_flush(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  struct statfs fa;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0 || sa.st_dev != sb.st_dev) return false;
  if (::statfs(a.c_str(), &fa) != 0) return false;
  return fa.f_type == EXT4_SUPER_MAGIC || fa.f_type == XFS_SUPER_MAGIC;
}

std::string PosixFileSystem::empties_at_reboot(const std::string& path) {
  struct statfs fs;
  if (::statfs(split_directory(path).first.c_str(), &fs) != 0) return {};
  if (fs.f_type == TMPFS_MAGIC) return "tmpfs";
  if (fs.f_type == RAMFS_MAGIC) return "ramfs";
  return {};
}

std::string PosixFileSystem::not_a_regular_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return {};
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

std::string absolute_name(const std::string& path) {
  std::error_code ec;
  auto absolute = std::filesystem::absolute(path, ec);
  // Deep in a tree, the absolute name may pass the longest the system
  // opens, where the given one does not.
  return ec || absolute.native().size() >= PATH_MAX ? path : absolute.string();
}

std::pair<std::string, std::string> split_directory(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

Status PosixFileSystem::sync_dir(const std::string& path) {
  std::string dir = split_directory(path).first;
  UniqueFd fd(open_raising_limit(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return opening_error(errno, "open directory " + dir);
  if (sys_.fsync(fd.get()) != 0) return Status::from_errno(errno, "fsync directory " + dir);
  return Status::ok();
}

Result<std::vector<std::string>> PosixFileSystem::paths_with_prefix(const std::string& prefix) {
  auto [dir, name] = split_directory(prefix);
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return Status::from_errno(errno, "list directory " + dir);
  std::string head = prefix.substr(0, prefix.size() - name.size());  // the directory as `prefix` spells it
  std::vector<std::string> paths;
  errno = 0;
  while (const dirent* e = ::readdir(d.get())) {
    if (std::string_view(e->d_name).starts_with(name)) paths.push_back(head + e->d_name);
  }
  if (errno != 0) return Status::from_errno(errno, "list directory " + dir);
  return paths;
}

FileSystem& posix_filesystem() {
  static PosixFileSystem fs;  // over the real calls; stateless
  return fs;
}

Result<AlignedBuffer> allocate_buffer(Syscalls& sys, size_t size, Pages pages, const std::string& what) {
  AlignedBuffer b(size, sys, pages);
  if (!b.valid()) return Status(Code::kNoSpace, "out of memory for a " + std::to_string(size) + "-byte buffer for " + what);
  return b;
}

Result<AlignedBuffer> File::allocate_buffer(size_t size, Pages pages) {
  return h5j::allocate_buffer(real_syscalls(), size, pages, path());
}

Status read_exact(File& file, uint64_t offset, std::span<std::byte> out) {
  auto n = file.read_at(offset, out);
  if (!n) return n.status();
  if (*n != out.size())
    return Status(Code::kCorrupt, file.path() + ": unexpected end of file at offset " +
                                      std::to_string(offset + *n));
  return Status::ok();
}

}  // namespace h5j
