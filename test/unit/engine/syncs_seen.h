// What the engine asks of the disk, seen from below: its syncs and write
// backs by file, and the bytes it writes to and reads from each.  For tests that count a
// commit's or a close's flushes on the real file system.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "engine_test_util.h"
#include "posix_file.h"
#include "syscalls.h"

namespace h5j::test {

struct SyncsSeen : Syscalls {
  bool deterministic() const override { return true; }  // in the order the engine made them
  std::vector<std::string> calls;    // syncs and write backs, which wait
  std::vector<std::string> started;  // writebacks started, which do not
  std::map<std::string, uint64_t> bytes_written;  // by name_of
  std::map<std::string, uint64_t> bytes_read;     // by name_of
  // "journal", "file" (*.h5), "directory", or the path.
  static std::string name_of(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) return "directory";
    char link[64], target[PATH_MAX] = "";
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = ::readlink(link, target, sizeof target - 1);
    std::string path(target, n > 0 ? size_t(n) : 0);
    return path.ends_with(".jnl") ? "journal" : path.ends_with(".h5") ? "file" : path;
  }
  ssize_t pread(int fd, void* buf, size_t n, off_t off) override {
    ssize_t done = Syscalls::pread(fd, buf, n, off);
    if (done > 0) bytes_read[name_of(fd)] += uint64_t(done);
    return done;
  }
  ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) override {
    ssize_t done = Syscalls::pwrite(fd, buf, n, off);
    if (done > 0) bytes_written[name_of(fd)] += uint64_t(done);
    return done;
  }
  int fdatasync(int fd) override {
    calls.push_back("fdatasync " + name_of(fd));
    return Syscalls::fdatasync(fd);
  }
  int fsync(int fd) override {
    calls.push_back("fsync " + name_of(fd));
    return Syscalls::fsync(fd);
  }
  int start_writeback(int fd, off_t offset, off_t length) override {
    started.push_back(name_of(fd) + " " + std::to_string(offset) + "+" + std::to_string(length));
    return Syscalls::start_writeback(fd, offset, length);
  }
  int write_back(int fd) override {
    calls.push_back("write back " + name_of(fd));
    return Syscalls::write_back(fd);
  }
};

// Fails the file's fdatasync from the n-th on, with EIO.
struct FailingFileSync : SyncsSeen {
  int file_syncs = 0, fail_from = 0;
  int fdatasync(int fd) override {
    if (name_of(fd) == "file" && ++file_syncs >= fail_from) {
      errno = EIO;
      return -1;
    }
    return SyncsSeen::fdatasync(fd);
  }
};

// The real file system, told whether one cache flush covers both files
// (the answer statfs would give on ext4, or on tmpfs).
struct OneDevice : PosixFileSystem {
  bool shares;
  OneDevice(Syscalls& sys, bool shares) : PosixFileSystem(sys), shares(shares) {}
  bool shares_cache_flush(const std::string&, const std::string&) override { return shares; }
};

// A file in a fresh directory (FileInDir), its engine's syscalls seen, on
// one device or two, with synchronous I/O: where a flush-counting case starts.
struct FileWithSyncsSeen : FileInDir {
  SyncsSeen syncs;
  OneDevice fs;
  explicit FileWithSyncsSeen(bool shares = true) : fs(syncs, shares) {
    opts.fs = &fs;
    opts.engine = IoEngine::kSync;
  }
};

}  // namespace h5j::test
