// The synchronous engine: pread, pwrite and fdatasync on one descriptor.
#pragma once

#include <sys/stat.h>

#include <functional>

#include "file.h"
#include "file_lock.h"
#include "syscalls.h"
#include "unique_fd.h"

namespace h5j {

class PosixFile : public File {
 public:
  PosixFile(std::string path, UniqueFd fd, Syscalls& sys = real_syscalls())
      : sys_(sys), path_(std::move(path)), fd_(std::move(fd)) {}

  const std::string& path() const override { return path_; }
  Result<size_t> read_at(uint64_t offset, std::span<std::byte> out) override;
  Status write_at(uint64_t offset, std::span<const std::byte> data) override;
  Status sync_data() override;
  Status write_back() override;
  void start_writeback(uint64_t offset, uint64_t length) override;
  Status truncate(uint64_t size) override;
  Result<uint64_t> size() override;
  Result<bool> removed() override;
  DataRun data_run(uint64_t offset) override;
  std::string current_name() override;
  Status try_lock(LockMode mode) override;
  std::optional<int> lock_holder() override;
  Status lock_byte_shared(uint64_t offset) override;
  Result<bool> byte_locked(uint64_t offset) override;
  bool locked_by_this_process() override { return FileLock::held_exclusively_in_process(lock_descriptor()); }
  Result<std::optional<std::string>> get_xattr(const std::string& name) override;
  Result<bool> set_xattr(const std::string& name, const std::string& value) override;
  Status remove_xattr(const std::string& name) override;
  Status sync_all() override;
  Result<bool> remove_write_permission() override;  // write_protection.cc
  Status restore_write_permission() override;
  Result<uint64_t> submit_write(uint64_t offset, std::span<const std::byte> data) override;
  Status wait_write(uint64_t ticket) override;
  Status sync_after_writes() override { return sync_data(); }
  const char* engine_name() const override { return "sync"; }

  Result<AlignedBuffer> allocate_buffer(size_t size, Pages pages) override {
    return h5j::allocate_buffer(sys_, size, pages, path_);
  }

  int fd() const { return fd_.get(); }

 protected:
  Status error(int err, const char* op) const;
  // fstat of the descriptor, its failure named as error() names it.
  Result<struct stat> file_status() const;
  int lock_descriptor() const { return lock_fd_.valid() ? lock_fd_.get() : fd_.get(); }
  // True when a ring may hold fd_'s open file description beyond this
  // process's life; the lock then needs a descriptor of its own.
  virtual bool ring_shares_descriptor() const { return false; }
  int change_xattr(const std::function<int()>& change);
  Syscalls& sys_;
  // EAGAIN and EINTR are retried, but not forever: a device that never makes
  // progress must surface as an error, not a hang.
  static constexpr int kMaxRetries = 1000;

 private:
  std::string path_;
  UniqueFd fd_;
  // Under io_uring the lock lives on a descriptor of its own that the ring
  // never holds: a killed process's ring may keep fd_'s open file description
  // alive for a while after death, and a lock on it would outlive the
  // process.  Otherwise fd_ carries the lock (one descriptor per file, as
  // sec2 has: HDF5's family driver opens thousands of members).
  UniqueFd lock_fd_;
  bool lock_fd_writable_ = false;
  // Declared after the descriptors it locks: released before they close.
  FileLock lock_;
  uint64_t next_ticket_ = 1;
};

// The real file system over a Syscalls (the real calls unless a test
// injects faults below the engines).
class PosixFileSystem : public FileSystem {
 public:
  explicit PosixFileSystem(Syscalls& sys = real_syscalls()) : sys_(sys) {}
  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode, IoEngine engine) override;
  bool exists(const std::string& path) override;
  Result<FileId> id(const std::string& path) override;
  Status remove(const std::string& path) override;
  Status sync_dir(const std::string& path) override;
  bool shares_cache_flush(const std::string& a, const std::string& b) override;
  std::string empties_at_reboot(const std::string& path) override;
  std::string not_a_regular_file(const std::string& path) override;
  std::string absolute(const std::string& path) override { return absolute_name(path); }
  Result<std::vector<std::string>> paths_with_prefix(const std::string& prefix) override;
  bool deterministic() const override { return sys_.deterministic(); }

 private:
  Syscalls& sys_;
};

}  // namespace h5j
