// A File that fails chosen operations: the N-th write (write_at or
// submit_write, counted across every FaultFile sharing the same Plan) or the
// N-th sync fails with a given errno.  Everything else is delegated.
#pragma once

#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "file.h"

namespace h5j::test {

struct FaultPlan {
  int fail_write_at = 0;  // 1-based; 0: never
  int fail_sync_at = 0;
  int err = EIO;
  int raise_signal = 0;  // instead of failing, raise it: SIGKILL dies there, SIGSTOP stalls
  int writes = 0, syncs = 0;
  bool injected = false;
  std::vector<std::string> locked;  // the path of every try_lock, in order
  bool write_fails() {
    if (++writes != fail_write_at) return false;
    return inject();
  }
  bool sync_fails() {
    if (++syncs != fail_sync_at) return false;
    return inject();
  }
  bool inject() {
    if (raise_signal != 0) std::raise(raise_signal);
    return injected = true;
  }
};

class FaultFile : public File {
 public:
  FaultFile(std::unique_ptr<File> inner, std::shared_ptr<FaultPlan> plan) : in_(std::move(inner)), plan_(plan) {}
  const std::string& path() const override { return in_->path(); }
  Result<size_t> read_at(uint64_t o, std::span<std::byte> out) override { return in_->read_at(o, out); }
  Status write_at(uint64_t o, std::span<const std::byte> d) override {
    if (plan_->write_fails()) return Status::from_errno(plan_->err, "write " + path());
    return in_->write_at(o, d);
  }
  Status sync_data() override {
    if (plan_->sync_fails()) return Status::from_errno(plan_->err, "fdatasync " + path());
    return in_->sync_data();
  }
  Status truncate(uint64_t s) override { return in_->truncate(s); }
  Result<uint64_t> size() override { return in_->size(); }
  Status try_lock(LockMode m) override {
    plan_->locked.push_back(path());
    return in_->try_lock(m);
  }
  std::optional<int> lock_holder() override { return in_->lock_holder(); }
  Status lock_byte_shared(uint64_t offset) override { return in_->lock_byte_shared(offset); }
  Result<bool> byte_locked(uint64_t offset) override { return in_->byte_locked(offset); }
  bool locked_by_this_process() override { return in_->locked_by_this_process(); }
  Result<std::optional<std::string>> get_xattr(const std::string& n) override { return in_->get_xattr(n); }
  Result<bool> set_xattr(const std::string& n, const std::string& v) override { return in_->set_xattr(n, v); }
  Status remove_xattr(const std::string& n) override { return in_->remove_xattr(n); }
  Status sync_all() override {
    if (plan_->sync_fails()) return Status::from_errno(plan_->err, "fsync " + path());
    return in_->sync_all();
  }
  Result<uint64_t> submit_write(uint64_t o, std::span<const std::byte> d) override {
    if (plan_->write_fails()) return Status::from_errno(plan_->err, "write " + path());
    return in_->submit_write(o, d);
  }
  Status wait_write(uint64_t t) override { return in_->wait_write(t); }
  Status sync_after_writes() override {
    if (plan_->sync_fails()) return Status::from_errno(plan_->err, "fdatasync " + path());
    return in_->sync_after_writes();
  }
  const char* engine_name() const override { return in_->engine_name(); }

 private:
  std::unique_ptr<File> in_;
  std::shared_ptr<FaultPlan> plan_;
};

// The real file system with every opened file wrapped in a FaultFile.
class FaultFileSystem : public FileSystem {
 public:
  explicit FaultFileSystem(std::shared_ptr<FaultPlan> plan) : plan_(std::move(plan)) {}
  Result<std::unique_ptr<File>> open(const std::string& p, OpenMode m, IoEngine e) override {
    auto f = posix_filesystem().open(p, m, e);
    if (!f) return f.status();
    return std::unique_ptr<File>(new FaultFile(std::move(*f), plan_));
  }
  bool exists(const std::string& p) override { return posix_filesystem().exists(p); }
  Result<FileId> id(const std::string& p) override { return posix_filesystem().id(p); }
  Status remove(const std::string& p) override { return posix_filesystem().remove(p); }
  Status sync_dir(const std::string& p) override {
    if (plan_->sync_fails()) return Status::from_errno(plan_->err, "fsync directory of " + p);
    return posix_filesystem().sync_dir(p);
  }
  Result<std::vector<std::string>> paths_with_prefix(const std::string& p) override {
    return posix_filesystem().paths_with_prefix(p);
  }

 private:
  std::shared_ptr<FaultPlan> plan_;
};

}  // namespace h5j::test
