// The HDF5 file as the engine writes it: every write and cut of its bytes
// passes here, and here the write-ahead rule is asserted (design.md §3).
//
// THE RULE, as this file checks it.  A write or a cut may change:
//  - new space: bytes at or above the committed size (the committed state
//    references nothing there), or a range HDF5 allocated and never wrote
//    that the last commit declared (it reads as zeros in that commit,
//    whatever lands in place: unwritten_space.h);
//  - committed bytes, only during a rewrite (begin_rewrite .. end_rewrite):
//    a checkpoint, a close or a recovery writing an image whose commits are
//    durable in the journal, which holds them until the rewrite ends, so
//    that a crash midway replays them again.
// Nothing else may write the file: it is the one File the engine holds on
// it, and the superblock guard's writes are beneath it.
//
// Worked example.  HDF5 frees a committed dataset's space and, in the next
// transaction, writes a new object there.  The write lies below the
// committed size, so routing journals it (write_routing.cc).  Had routing
// sent it in place, the process killed before the next COMMIT would leave
// the committed dataset overwritten and no record to bring it back: this
// file's write_at refuses exactly that write, by assertion, in every test
// that builds with assertions (the sanitizer stage).
#pragma once

#include <cassert>
#include <algorithm>
#include <memory>
#include <optional>

#include "image_layers.h"
#include "superblock_guard.h"
#include "unwritten_space.h"

namespace h5j {

class WriteAheadFile : public SuperblockGuardFile {
 public:
  // `image` and `unwritten` are the owner's, and outlive this file.
  WriteAheadFile(std::unique_ptr<File> file, const ImageLayers& image, const UnwrittenSpace& unwritten)
      : SuperblockGuardFile(std::move(file)), image_(image), unwritten_(unwritten) {}

  Status write_at(uint64_t offset, std::span<const std::byte> data) override {
    assert(may_change(offset, offset + data.size()));
    H5J_RETURN_IF_ERROR(SuperblockGuardFile::write_at(offset, data));
    grew_to(offset + data.size());
    return Status::ok();
  }
  Result<uint64_t> submit_write(uint64_t offset, std::span<const std::byte> data) override {
    assert(may_change(offset, offset + data.size()));
    auto ticket = SuperblockGuardFile::submit_write(offset, data);
    if (ticket) grew_to(offset + data.size());
    return ticket;
  }
  Status truncate(uint64_t size) override {
    assert(rewriting_ || size >= image_.committed_size);
    written_size_.reset();  // a failed cut may have cut part of the way
    H5J_RETURN_IF_ERROR(SuperblockGuardFile::truncate(size));
    written_size_ = size;
    return Status::ok();
  }

  // The file's size as this process's writes and cuts left it, asked of
  // the file once: for a file no other process writes (a serial writer's,
  // which the lock and the write protection keep to itself), so that a
  // commit records it without a system call.
  Result<uint64_t> size_as_written() {
    if (!written_size_) {
      auto size = SuperblockGuardFile::size();
      if (!size) return size.status();
      written_size_ = *size;
    }
    return *written_size_;
  }

  // Committed bytes may be written from now until end_rewrite.
  void begin_rewrite() { rewriting_ = true; }
  void end_rewrite() { rewriting_ = false; }

 private:
  bool may_change(uint64_t lo, uint64_t hi) const {
    return rewriting_ || lo >= image_.committed_size || unwritten_.declared(lo, hi);
  }
  void grew_to(uint64_t end) {
    if (written_size_) written_size_ = std::max(*written_size_, end);
  }

  const ImageLayers& image_;
  const UnwrittenSpace& unwritten_;
  bool rewriting_ = false;
  std::optional<uint64_t> written_size_;  // size_as_written(), once asked
};

}  // namespace h5j
