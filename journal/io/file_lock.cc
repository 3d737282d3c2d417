#include "file_lock.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

namespace h5j {
namespace {

// The errors of a file system that has no such lock, as opposed to a lock
// that is held (EWOULDBLOCK, EAGAIN, EACCES) or a real failure.
bool unsupported(int err) { return err == ENOSYS || err == ENOLCK || err == EOPNOTSUPP || err == ENOTSUP; }

Status busy(const std::string& path) {
  return Status(Code::kBusy, path + " is locked by another open handle", EWOULDBLOCK);
}

FileId id_of(const struct stat& st) { return FileId{uint64_t(st.st_dev), uint64_t(st.st_ino)}; }

// An open file description lock on the whole file.
int ofd_lock(int fd, LockMode mode) {
  struct flock fl = {};
  fl.l_type = mode == LockMode::kExclusive ? F_WRLCK : F_RDLCK;
  fl.l_whence = SEEK_SET;
  return ::fcntl(fd, F_OFD_SETLK, &fl);
}

// This process's locks, however held: readers count, a writer excludes.
// Where the file system has no lock, the table is the lock; elsewhere it
// only tells this process what it holds.  The one piece of process-wide
// state in the engine; see file_lock.h for why it must be process-wide.
struct Holders {
  int shared = 0;
  bool exclusive = false;
  std::vector<int> fds;  // the descriptors whose open file descriptions hold it
};
struct ProcessLocks {
  std::mutex mutex;
  std::map<FileId, Holders> held;
};

void lock_table_before_fork() noexcept;
void unlock_table_in_parent() noexcept;
void keep_locks_from_child() noexcept;

// Never destroyed: HDF5 closes the files a program left open from its own
// exit handler, after this library's static destructors may have run.
ProcessLocks& process_locks() {
  static ProcessLocks* locks = [] {
    auto* table = new ProcessLocks;
    ::pthread_atfork(lock_table_before_fork, unlock_table_in_parent, keep_locks_from_child);
    return table;
  }();
  return *locks;
}

void lock_table_before_fork() noexcept { process_locks().mutex.lock(); }
void unlock_table_in_parent() noexcept { process_locks().mutex.unlock(); }

// A child that fork() made shares its parent's open file descriptions, and
// with them their locks.  A worker forked by a writer (Python's
// multiprocessing, say) would hold the writer's locks on after a crash of
// the writer, and h5recover, or the job run again, be refused while it
// lived, naming the writer, which is gone.  So the child gives each locked
// descriptor a description of its own for the same file, reopened read-only
// through /proc/self/fd (it may only read through its parent's handles,
// driver_file.h), or closes it where it cannot.  The locks then stay the
// parent's alone, and end with it.  Only async-signal-safe calls: the child
// of a threaded process may make no others.
void keep_locks_from_child() noexcept {
  ProcessLocks& locks = process_locks();
  for (const auto& [id, holders] : locks.held) {
    for (int fd : holders.fds) {
      // A descriptor that no longer holds this file (its number reused in
      // the instant between a close and the table's update) is left alone.
      struct stat st;
      if (::fstat(fd, &st) != 0 || id_of(st) != id) continue;
      char path[32] = "/proc/self/fd/";
      char digits[12];
      int n = 0;
      for (unsigned v = unsigned(fd); n == 0 || v > 0; v /= 10) digits[n++] = char('0' + v % 10);
      size_t at = std::strlen(path);
      while (n > 0) path[at++] = digits[--n];
      path[at] = '\0';
      int fresh = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fresh < 0 || ::dup3(fresh, fd, O_CLOEXEC) < 0) ::close(fd);
      if (fresh >= 0) ::close(fresh);
    }
  }
  locks.mutex.unlock();
}

}  // namespace

FileLock::FileLock(FileLock&& other) noexcept { *this = std::move(other); }

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  release_in_process();
  in_process_ = std::exchange(other.in_process_, std::nullopt);
  fd_ = std::exchange(other.fd_, -1);
  exclusive_ = other.exclusive_;
  busy_in_process_ = other.busy_in_process_;
  return *this;
}

Status FileLock::try_lock(int fd, const std::string& path, LockMode mode) {
  busy_in_process_ = false;
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::from_errno(errno, "stat " + path);
  FileId id = id_of(st);
  // Another open file description holding a conflicting lock is refused by
  // the system, so a lock it grants never conflicts with the table.
  if (::flock(fd, (mode == LockMode::kExclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0)
    return lock_in_process(id, fd, mode, path, Status::ok());
  if (errno == EWOULDBLOCK) return busy(path);
  if (!unsupported(errno)) return Status::from_errno(errno, "lock " + path);
  if (ofd_lock(fd, mode) == 0) return lock_in_process(id, fd, mode, path, Status::ok());
  if (errno == EAGAIN || errno == EACCES) return busy(path);
  int err = errno;
  if (!unsupported(err)) return Status::from_errno(err, "lock " + path);
  Status why(Code::kUnsupported,
             "the file system of " + path + " supports neither flock nor fcntl locks (" + std::strerror(err) + ")", err);
  return lock_in_process(id, fd, mode, path, why);
}

namespace {
// Whether `pid` names a process that is not exiting: /proc/PID/stat's
// state is not Z or X, and its flags (the ninth field) lack PF_EXITING,
// which the kernel sets as the process starts to exit, before it lets go
// of its files.  Without /proc, whether the process exists.
bool alive(std::optional<int> pid) {
  if (!pid) return false;
  std::ifstream stat("/proc/" + std::to_string(*pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return ::kill(*pid, 0) == 0 || errno == EPERM;
  constexpr unsigned long kPfExiting = 0x4;
  std::istringstream fields(line.substr(line.rfind(')') + 1));  // the command may hold spaces and ')'
  char state = 0;
  long skip = 0;
  unsigned long flags = 0;
  if (!(fields >> state >> skip >> skip >> skip >> skip >> skip >> flags)) return true;
  return state != 'Z' && state != 'X' && (flags & kPfExiting) == 0;
}
}  // namespace

Status try_lock_past_exited_holder(File& f, LockMode mode, std::chrono::milliseconds patience) {
  auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    Status s = f.try_lock(mode);
    if (s.code() != Code::kBusy || f.locked_by_this_process() || alive(f.lock_holder()) ||
        std::chrono::steady_clock::now() >= deadline)
      return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

bool FileLock::held_exclusively_in_process(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return false;
  ProcessLocks& locks = process_locks();
  std::lock_guard<std::mutex> guard(locks.mutex);
  auto it = locks.held.find(id_of(st));
  return it != locks.held.end() && it->second.exclusive;
}

Status FileLock::lock_in_process(FileId id, int fd, LockMode mode, const std::string& path, const Status& granted) {
  release_in_process();
  ProcessLocks& locks = process_locks();
  std::lock_guard<std::mutex> guard(locks.mutex);
  Holders& h = locks.held[id];
  bool exclusive = mode == LockMode::kExclusive;
  if (h.exclusive || (exclusive && h.shared > 0)) {
    busy_in_process_ = true;
    return Status(Code::kBusy, path + " is locked by another handle in this process", EWOULDBLOCK);
  }
  if (exclusive) h.exclusive = true;
  else ++h.shared;
  h.fds.push_back(fd);
  in_process_ = id;
  fd_ = fd;
  exclusive_ = exclusive;
  return granted;
}

void FileLock::release_in_process() {
  if (!in_process_) return;
  ProcessLocks& locks = process_locks();
  std::lock_guard<std::mutex> guard(locks.mutex);
  auto it = locks.held.find(*in_process_);
  if (it != locks.held.end()) {
    if (exclusive_) it->second.exclusive = false;
    else --it->second.shared;
    std::erase(it->second.fds, fd_);
    if (!it->second.exclusive && it->second.shared == 0) locks.held.erase(it);
  }
  in_process_.reset();
}

// /proc/locks has a line per lock: "1: FLOCK  ADVISORY  WRITE 4242
// fd:01:1234567 0 EOF", the holder's pid and the file's device (major and
// minor in hex) and inode.  A lock whose holder the kernel does not know
// (an open file description lock, or one inherited) shows -1.  Lines
// with "->" are processes waiting for a lock, not holding it.
std::optional<int> FileLock::holder(int fd) const {
  if (busy_in_process_) return int(::getpid());
  struct stat st;
  if (::fstat(fd, &st) != 0) return std::nullopt;
  std::ifstream locks("/proc/locks");
  std::string line;
  while (std::getline(locks, line)) {
    std::istringstream in(line);
    std::string id, kind, advisory, access, device;
    long pid = 0;
    if (!(in >> id >> kind) || kind == "->") continue;
    if (!(in >> advisory >> access >> pid >> device)) continue;
    unsigned major = 0, minor = 0;
    unsigned long long inode = 0;
    if (std::sscanf(device.c_str(), "%x:%x:%llu", &major, &minor, &inode) != 3) continue;
    if (inode == st.st_ino && major == ::major(st.st_dev) && minor == ::minor(st.st_dev) && pid > 0)
      return int(pid);
  }
  return std::nullopt;
}

Status lock_required_error(const Status& unsupported) {
  return unsupported.appended(
      "; HDF5_USE_FILE_LOCKING=TRUE requires a lock other processes see. With BEST_EFFORT (HDF5's default) or "
      "FALSE the file opens without one, and a second writer elsewhere is not refused");
}

}  // namespace h5j
