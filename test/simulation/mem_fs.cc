#include "mem_fs.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace h5j::explorer {
namespace {

class MemFile : public File {
 public:
  MemFile(MemFileSystem& fs, std::string path, std::shared_ptr<MemNode> node, bool writable)
      : fs_(fs), path_(std::move(path)), node_(std::move(node)), writable_(writable) {}
  ~MemFile() override { release_lock(); }

  const std::string& path() const override { return path_; }

  Result<size_t> read_at(uint64_t offset, std::span<std::byte> out) override {
    if (offset >= node_->data.size()) return size_t(0);
    size_t n = std::min<uint64_t>(out.size(), node_->data.size() - offset);
    std::memcpy(out.data(), node_->data.data() + offset, n);
    return n;
  }
  Status write_at(uint64_t offset, std::span<const std::byte> data) override {
    if (!writable_) return Status(Code::kIoError, "write " + path_ + ": read-only");
    if (offset + data.size() > fs_.max_file_size() || offset + data.size() < offset)
      return Status::from_errno(ENOSPC, "write " + path_);
    if (node_->data.size() < offset + data.size()) node_->data.resize(offset + data.size());
    std::memcpy(node_->data.data() + offset, data.data(), data.size());
    fs_.record(Op{Op::kWrite, path_, offset, std::vector<std::byte>(data.begin(), data.end()), {}, {}});
    return Status::ok();
  }
  Status sync_data() override {
    fs_.record(Op{Op::kSyncData, path_, 0, {}, {}, {}});
    return Status::ok();
  }
  Status write_back() override {
    fs_.record(Op{Op::kWriteBack, path_, 0, {}, {}, {}});
    return Status::ok();
  }
  Status sync_all() override {
    fs_.record(Op{Op::kSyncAll, path_, 0, {}, {}, {}});
    return Status::ok();
  }
  Status truncate(uint64_t size) override {
    if (size > fs_.max_file_size()) return Status::from_errno(ENOSPC, "truncate " + path_);
    node_->data.resize(size);
    fs_.record(Op{Op::kTruncate, path_, size, {}, {}, {}});
    return Status::ok();
  }
  Result<uint64_t> size() override { return uint64_t(node_->data.size()); }
  // Every 4 KiB block of zeros counts as a hole, as a file system's
  // never-written block would: more holes than a real file system reports,
  // so that replay's zeros are skipped wherever they may be.
  DataRun data_run(uint64_t offset) override {
    const std::vector<std::byte>& d = node_->data;
    if (offset >= d.size()) return {kNoData, kNoData};
    auto zeros = [&](uint64_t block) {
      uint64_t from = block * kBlock, to = std::min<uint64_t>(from + kBlock, d.size());
      return std::all_of(d.begin() + ptrdiff_t(from), d.begin() + ptrdiff_t(to), [](std::byte b) { return b == std::byte(0); });
    };
    uint64_t blocks = (d.size() + kBlock - 1) / kBlock, b = offset / kBlock;
    while (b < blocks && zeros(b)) ++b;
    if (b >= blocks) return {kNoData, kNoData};
    uint64_t first = std::max(offset, b * kBlock);
    while (b < blocks && !zeros(b)) ++b;
    return {first, std::min<uint64_t>(b * kBlock, d.size())};
  }
  Status try_lock(LockMode mode) override {
    release_lock();
    if (node_->exclusive_lock || (mode == LockMode::kExclusive && node_->shared_locks > 0))
      return Status(Code::kBusy, path_ + " is locked by another open handle");
    if (mode == LockMode::kExclusive) node_->exclusive_lock = true;
    else ++node_->shared_locks;
    held_ = mode;
    holding_ = true;
    return Status::ok();
  }
  void release_lock() {
    if (!holding_) return;
    if (held_ == LockMode::kExclusive) node_->exclusive_lock = false;
    else --node_->shared_locks;
    holding_ = false;
  }
  Result<std::optional<std::string>> get_xattr(const std::string& name) override {
    auto it = node_->xattrs.find(name);
    if (it == node_->xattrs.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }
  Result<bool> set_xattr(const std::string& name, const std::string& value) override {
    node_->xattrs[name] = value;
    fs_.record(Op{Op::kSetXattr, path_, 0, {}, name, value});
    return true;
  }
  Status remove_xattr(const std::string& name) override {
    if (node_->xattrs.erase(name) > 0) fs_.record(Op{Op::kRemoveXattr, path_, 0, {}, name, {}});
    return Status::ok();
  }
  Result<uint64_t> submit_write(uint64_t offset, std::span<const std::byte> data) override {
    H5J_RETURN_IF_ERROR(write_at(offset, data));
    return ++tickets_;
  }
  Status wait_write(uint64_t) override { return Status::ok(); }
  Status sync_after_writes() override { return sync_data(); }
  const char* engine_name() const override { return "memory"; }

 private:
  static constexpr uint64_t kBlock = 4096;
  MemFileSystem& fs_;
  std::string path_;
  std::shared_ptr<MemNode> node_;
  bool writable_;
  bool holding_ = false;
  LockMode held_ = LockMode::kShared;
  uint64_t tickets_ = 0;
};

}  // namespace

MemFileSystem::MemFileSystem(Image image) {
  for (auto& [path, node] : image) {
    auto& live = nodes_[path] = std::make_shared<MemNode>(std::move(node));
    live->inode = next_inode_++;
    live->shared_locks = 0;
    live->exclusive_lock = false;
  }
}

Image MemFileSystem::image() const {
  Image out;
  for (const auto& [path, node] : nodes_) out[path] = *node;
  return out;
}

Image MemFileSystem::release_image() {
  Image out;
  for (auto& [path, node] : nodes_) out[path] = std::move(*node);
  nodes_.clear();
  return out;
}

Result<std::unique_ptr<File>> MemFileSystem::open(const std::string& path, OpenMode mode, IoEngine) {
  auto it = nodes_.find(path);
  bool create = mode == OpenMode::kCreate || mode == OpenMode::kCreateTruncate || mode == OpenMode::kCreateExclusive;
  if (it == nodes_.end()) {
    if (!create) return Status(Code::kMissing, "open " + path + ": no such file");
    auto node = std::make_shared<MemNode>();
    node->inode = next_inode_++;
    it = nodes_.emplace(path, node).first;
    record(Op{Op::kCreate, path, 0, {}, {}, {}});
  } else if (mode == OpenMode::kCreateExclusive) {
    return Status(Code::kIoError, "open " + path + ": File exists", EEXIST);
  } else if (mode == OpenMode::kCreateTruncate && !it->second->data.empty()) {
    it->second->data.clear();
    record(Op{Op::kTruncate, path, 0, {}, {}, {}});
  }
  return std::unique_ptr<File>(new MemFile(*this, path, it->second, mode != OpenMode::kReadOnly));
}

void apply_to_node(MemNode& node, const Op& op) {
  switch (op.kind) {
    case Op::kWrite:
      if (node.data.size() < op.offset + op.bytes.size()) node.data.resize(op.offset + op.bytes.size());
      std::memcpy(node.data.data() + op.offset, op.bytes.data(), op.bytes.size());
      break;
    case Op::kTruncate: node.data.resize(op.offset); break;
    case Op::kSetXattr: node.xattrs[op.name] = op.value; break;
    case Op::kRemoveXattr: node.xattrs.erase(op.name); break;
    default: break;
  }
}

void MemFileSystem::apply(const Op& op) {
  if (op.kind == Op::kRemove) {
    nodes_.erase(op.path);  // open handles keep the node, as an unlinked file
    return;
  }
  auto it = nodes_.find(op.path);
  if (it == nodes_.end() && op.kind == Op::kCreate) {
    auto node = std::make_shared<MemNode>();
    node->inode = next_inode_++;
    it = nodes_.emplace(op.path, node).first;
  }
  if (it != nodes_.end()) apply_to_node(*it->second, op);
}

Result<FileId> MemFileSystem::id(const std::string& path) {
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return Status(Code::kMissing, "stat " + path + ": no such file");
  return FileId{1, it->second->inode};
}

Status MemFileSystem::remove(const std::string& path) {
  if (nodes_.erase(path) > 0) record(Op{Op::kRemove, path, 0, {}, {}, {}});
  return Status::ok();
}

Status MemFileSystem::sync_dir(const std::string& path) {
  record(Op{Op::kSyncDir, path, 0, {}, {}, {}});
  return Status::ok();
}

Result<std::vector<std::string>> MemFileSystem::paths_with_prefix(const std::string& prefix) {
  std::vector<std::string> paths;
  for (auto it = nodes_.lower_bound(prefix); it != nodes_.end() && it->first.starts_with(prefix); ++it) {
    if (it->first.find('/', prefix.size()) == std::string::npos) paths.push_back(it->first);  // not in a subdirectory
  }
  return paths;
}

}  // namespace h5j::explorer
