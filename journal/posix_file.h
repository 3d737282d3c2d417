// The synchronous engine: pread, pwrite and fdatasync on one descriptor.
#pragma once

#include "file.h"
#include "unique_fd.h"

namespace h5j {

class PosixFile : public File {
 public:
  PosixFile(std::string path, UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}

  const std::string& path() const override { return path_; }
  Result<size_t> read_at(uint64_t offset, std::span<std::byte> out) override;
  Status write_at(uint64_t offset, std::span<const std::byte> data) override;
  Status sync_data() override;
  Status truncate(uint64_t size) override;
  Result<uint64_t> size() override;
  Status try_lock(LockMode mode) override;
  Status unlock() override;
  Result<std::optional<std::string>> get_xattr(const std::string& name) override;
  Result<bool> set_xattr(const std::string& name, const std::string& value) override;
  Status remove_xattr(const std::string& name) override;
  Status sync_all() override;
  Result<uint64_t> submit_write(uint64_t offset, std::span<const std::byte> data) override;
  Status wait_write(uint64_t ticket) override;
  Status sync_after_writes() override { return sync_data(); }
  const char* engine_name() const override { return "sync"; }

  int fd() const { return fd_.get(); }

 protected:
  Status error(int err, const char* op) const;

 private:
  std::string path_;
  UniqueFd fd_;
  // The lock lives on a descriptor of its own that io_uring never holds: a
  // killed process's ring may keep fd_'s open file description alive for a
  // while after death, and a lock on it would outlive the process.
  UniqueFd lock_fd_;
  uint64_t next_ticket_ = 1;
};

}  // namespace h5j
