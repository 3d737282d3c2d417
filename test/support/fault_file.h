// A File that fails chosen operations: the N-th write (write_at or
// submit_write, counted across every FaultFile sharing the same Plan) or the
// N-th sync fails with a given errno.  Everything else is delegated.
#pragma once

#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "forwarding_file.h"

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

class FaultFile : public ForwardingFile {
 public:
  FaultFile(std::unique_ptr<File> inner, std::shared_ptr<FaultPlan> plan)
      : ForwardingFile(std::move(inner)), plan_(std::move(plan)) {}
  Status write_at(uint64_t o, std::span<const std::byte> d) override {
    if (plan_->write_fails()) return Status::from_errno(plan_->err, "write " + path());
    return inner().write_at(o, d);
  }
  Status sync_data() override {
    if (plan_->sync_fails()) return Status::from_errno(plan_->err, "fdatasync " + path());
    return inner().sync_data();
  }
  Status write_back() override {
    if (plan_->sync_fails()) return Status::from_errno(plan_->err, "sync_file_range " + path());
    return inner().write_back();
  }
  Status try_lock(LockMode m) override {
    plan_->locked.push_back(path());
    return inner().try_lock(m);
  }
  Status sync_all() override {
    if (plan_->sync_fails()) return Status::from_errno(plan_->err, "fsync " + path());
    return inner().sync_all();
  }
  Result<uint64_t> submit_write(uint64_t o, std::span<const std::byte> d) override {
    if (plan_->write_fails()) return Status::from_errno(plan_->err, "write " + path());
    return inner().submit_write(o, d);
  }
  Status sync_after_writes() override {
    if (plan_->sync_fails()) return Status::from_errno(plan_->err, "fdatasync " + path());
    return inner().sync_after_writes();
  }

 private:
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
  std::string not_a_regular_file(const std::string& p) override { return posix_filesystem().not_a_regular_file(p); }
  Status remove(const std::string& p) override { return posix_filesystem().remove(p); }
  Status sync_dir(const std::string& p) override {
    if (plan_->sync_fails()) return Status::from_errno(plan_->err, "fsync directory of " + p);
    return posix_filesystem().sync_dir(p);
  }
  Result<std::vector<std::string>> paths_with_prefix(const std::string& p) override {
    return posix_filesystem().paths_with_prefix(p);
  }
  bool shares_cache_flush(const std::string& a, const std::string& b) override {
    return posix_filesystem().shares_cache_flush(a, b);
  }
  std::string empties_at_reboot(const std::string& p) override { return posix_filesystem().empties_at_reboot(p); }
  std::string absolute(const std::string& p) override { return posix_filesystem().absolute(p); }
  // Faults are injected by count.
  bool deterministic() const override { return true; }

 private:
  std::shared_ptr<FaultPlan> plan_;
};

}  // namespace h5j::test
