// A File that passes every operation to another File it owns.  Files that
// change a few operations (superblock_guard.h; the tests' fault injection)
// derive from it and override only those.
#pragma once

#include <memory>
#include <utility>

#include "file.h"

namespace h5j {

class ForwardingFile : public File {
 public:
  explicit ForwardingFile(std::unique_ptr<File> inner) : in_(std::move(inner)) {}
  File& inner() { return *in_; }

  const std::string& path() const override { return in_->path(); }
  Result<size_t> read_at(uint64_t o, std::span<std::byte> out) override { return in_->read_at(o, out); }
  Status write_at(uint64_t o, std::span<const std::byte> d) override { return in_->write_at(o, d); }
  Status sync_data() override { return in_->sync_data(); }
  Status write_back() override { return in_->write_back(); }
  void start_writeback(uint64_t o, uint64_t n) override { in_->start_writeback(o, n); }
  Status truncate(uint64_t s) override { return in_->truncate(s); }
  Result<uint64_t> size() override { return in_->size(); }
  Result<bool> removed() override { return in_->removed(); }
  DataRun data_run(uint64_t offset) override { return in_->data_run(offset); }
  std::string current_name() override { return in_->current_name(); }
  Status try_lock(LockMode m) override { return in_->try_lock(m); }
  std::optional<int> lock_holder() override { return in_->lock_holder(); }
  bool locked_by_this_process() override { return in_->locked_by_this_process(); }
  Status lock_byte_shared(uint64_t offset) override { return in_->lock_byte_shared(offset); }
  Result<bool> byte_locked(uint64_t offset) override { return in_->byte_locked(offset); }
  Result<std::optional<std::string>> get_xattr(const std::string& n) override { return in_->get_xattr(n); }
  Result<bool> set_xattr(const std::string& n, const std::string& v) override { return in_->set_xattr(n, v); }
  Status remove_xattr(const std::string& n) override { return in_->remove_xattr(n); }
  Status sync_all() override { return in_->sync_all(); }
  Result<bool> remove_write_permission() override { return in_->remove_write_permission(); }
  Status restore_write_permission() override { return in_->restore_write_permission(); }
  Result<uint64_t> submit_write(uint64_t o, std::span<const std::byte> d) override { return in_->submit_write(o, d); }
  Status wait_write(uint64_t t) override { return in_->wait_write(t); }
  Status sync_after_writes() override { return in_->sync_after_writes(); }
  const char* engine_name() const override { return in_->engine_name(); }
  Result<AlignedBuffer> allocate_buffer(size_t size, Pages pages) override { return in_->allocate_buffer(size, pages); }

 private:
  std::unique_ptr<File> in_;
};

}  // namespace h5j
