// An in-memory file system behind the I/O seam, optionally recording every
// operation (with its data, in issue order) for the crash-state explorer.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "file.h"

namespace h5j::explorer {

// One recorded operation.  Writes and truncates become durable at the next
// kSyncData/kSyncAll of their file, xattr changes only at kSyncAll, and
// creates and removes at the next kSyncDir: what a disk keeps.  All files
// share one device: a file's writes that kWriteBack sent to it become
// durable at the next kSyncData/kSyncAll of any file (its cache flush).
struct Op {
  enum Kind { kWrite, kTruncate, kSyncData, kSyncAll, kCreate, kRemove, kSyncDir, kSetXattr, kRemoveXattr, kWriteBack };
  Kind kind;
  std::string path;
  uint64_t offset = 0;  // write: where; truncate: the new size
  std::vector<std::byte> bytes;
  std::string name, value;  // xattr
  bool is_sync() const { return kind == kSyncData || kind == kSyncAll || kind == kSyncDir; }
};

struct MemNode {
  std::vector<std::byte> data;
  std::map<std::string, std::string> xattrs;
  uint64_t inode = 0;
  int shared_locks = 0;
  bool exclusive_lock = false;
};

// A snapshot of a file system's contents: what the explorer materialises.
using Image = std::map<std::string, MemNode>;

// A write, truncate or xattr change done to `node`; other kinds change no node.
void apply_to_node(MemNode& node, const Op& op);

class MemFileSystem : public FileSystem {
 public:
  MemFileSystem() = default;
  // Its files take the image's bytes: a caller that keeps the image copies
  // it, one that is done with it moves it in.  (The explorer copies whole
  // images at every crash state, and under ASan each copy of more than
  // 128 KiB is new memory, a page fault a page.)
  explicit MemFileSystem(Image image);
  // From now on, every mutating operation is appended to `log`.
  void record_into(std::vector<Op>* log) { log_ = log; }
  // Writes and truncates beyond this size fail with ENOSPC (for fuzzing,
  // where a hostile journal may name any address).
  void limit_file_size(uint64_t bytes) { max_size_ = bytes; }
  uint64_t max_file_size() const { return max_size_; }
  Image image() const;
  // The image, its bytes moved out, for a file system about to go.
  Image release_image();
  // `op`, as a writer issued it, done to the live files: what another
  // process on the host sees at once (syncs change nothing).  Not recorded.
  void apply(const Op& op);

  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode, IoEngine engine) override;
  bool exists(const std::string& path) override { return nodes_.count(path) > 0; }
  Result<FileId> id(const std::string& path) override;
  Status remove(const std::string& path) override;
  Status sync_dir(const std::string& path) override;
  // One device, whose every file's sync flushes its cache.
  bool shares_cache_flush(const std::string&, const std::string&) override { return true; }
  // A recording replays only in the order it was made.
  bool deterministic() const override { return true; }
  Result<std::vector<std::string>> paths_with_prefix(const std::string& prefix) override;

  void record(Op op) {
    if (log_ != nullptr) log_->push_back(std::move(op));
  }

 private:
  std::map<std::string, std::shared_ptr<MemNode>> nodes_;
  std::vector<Op>* log_ = nullptr;
  uint64_t next_inode_ = 1;
  uint64_t max_size_ = UINT64_MAX;
};

}  // namespace h5j::explorer
