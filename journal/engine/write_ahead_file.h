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
#include <memory>

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
    return SuperblockGuardFile::write_at(offset, data);
  }
  Result<uint64_t> submit_write(uint64_t offset, std::span<const std::byte> data) override {
    assert(may_change(offset, offset + data.size()));
    return SuperblockGuardFile::submit_write(offset, data);
  }
  Status truncate(uint64_t size) override {
    assert(rewriting_ || size >= image_.committed_size);
    return SuperblockGuardFile::truncate(size);
  }

  // Committed bytes may be written from now until end_rewrite.
  void begin_rewrite() { rewriting_ = true; }
  void end_rewrite() { rewriting_ = false; }

 private:
  bool may_change(uint64_t lo, uint64_t hi) const {
    return rewriting_ || lo >= image_.committed_size || unwritten_.declared(lo, hi);
  }

  const ImageLayers& image_;
  const UnwrittenSpace& unwritten_;
  bool rewriting_ = false;
};

}  // namespace h5j
