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
#include <utility>

#include "image_layers.h"
#include "in_place_writes.h"
#include "superblock_guard.h"
#include "unwritten_space.h"

namespace h5j {

class WriteAheadFile : public SuperblockGuardFile {
 public:
  // `image` and `unwritten` are the owner's, and outlive this file.
  WriteAheadFile(std::unique_ptr<File> file, const ImageLayers& image, const UnwrittenSpace& unwritten)
      : SuperblockGuardFile(std::move(file)), image_(image), unwritten_(unwritten) {}

  Status write_at(uint64_t offset, std::span<const std::byte> data) override {
    return write(offset, data, /*writeback_first=*/false);
  }
  // write_at, a piece of kWritebackPiece at a time, each piece's writeback
  // started as soon as it is in the page cache and before its CRC is taken
  // (in_place_writes.h).  The disk then writes the first pieces while the
  // later ones are copied and their CRCs computed, where a write made whole
  // leaves it idle for the whole copy and then for the CRC (1 ms and 0.25 ms
  // for each of W4's 4 MiB steps here).  The pieces' CRCs chain into the
  // one CRC of the write's extent.  A piece that fails leaves the pieces
  // before it in the file, and in in_place(): a commit that follows names
  // what is there.
  Status write_starting_writeback(uint64_t offset, std::span<const std::byte> data) {
    const uint64_t end = offset + data.size();
    for (uint64_t at = offset; at < end;) {
      // Pieces end on a multiple of kWritebackPiece, so that no page of the
      // file is in two of them: a page under writeback makes a write into it
      // wait.
      uint64_t next = std::min(end, (at / kWritebackPiece + 1) * kWritebackPiece);
      H5J_RETURN_IF_ERROR(write(at, data.subspan(at - offset, next - at), /*writeback_first=*/true));
      at = next;
    }
    return Status::ok();
  }
  // Small enough that the disk starts early, large enough that a write
  // costs few calls.  Measured against 256 KiB and 1 MiB pieces and against
  // the write made whole (docs/performance.md, "Writeback in pieces").
  static constexpr uint64_t kWritebackPiece = 512 << 10;
  static_assert(kWritebackPiece % 4096 == 0, "a piece ends on a page boundary");
  Result<uint64_t> submit_write(uint64_t offset, std::span<const std::byte> data) override {
    assert(may_change(offset, offset + data.size()));
    auto ticket = SuperblockGuardFile::submit_write(offset, data);
    if (ticket) wrote(offset, data);
    return ticket;
  }
  Status truncate(uint64_t size) override {
    assert(rewriting_ || size >= image_.committed_size);
    if (!rewriting_) cut_in_place_ = true;
    if (synced_size_) synced_size_ = std::min(*synced_size_, size);  // a cut may reach the disk unsynced
    written_size_.reset();  // a failed cut may have cut part of the way
    std::optional<uint64_t> by_commits = std::exchange(size_for_commits_, std::nullopt);
    H5J_RETURN_IF_ERROR(SuperblockGuardFile::truncate(size));
    written_size_ = size;
    // A rewrite's growth waits for its sync; any cut may reach the disk.
    size_for_commits_ = rewriting_ && by_commits ? std::min(*by_commits, size) : size;
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

  // The size a commit records as the file's (COMMIT's file size): its size
  // as written, less what rewrites grew it by since its last sync.  An early
  // write-back (early_write_back.cc) grows the file unsynced while commits go on, and
  // a power loss may take that growth back: a sound file must never be
  // shorter than its last commit records (file_match.h).  Its bytes are in
  // the journal still.
  Result<uint64_t> size_for_commits() {
    if (!size_for_commits_) {
      auto size = size_as_written();
      if (!size) return size.status();
      size_for_commits_ = *size;
    }
    return *size_for_commits_;
  }

  // The writes in place since the last commit (not a rewrite's), counted
  // from track_in_place() on and, `named`, kept as extents with their CRCs,
  // which a commit of one flush names in INPLACE records.
  void track_in_place(bool named) {
    tracks_in_place_ = true;
    in_place_.keep_extents(named);
  }
  // From now on tracked writes are kept as extents: from the first commit
  // (file_sharing.h).  Nothing changes where nothing is tracked.
  void name_in_place() { in_place_.keep_extents(true); }
  const InPlaceWrites& in_place() const { return in_place_; }
  uint64_t take_untold_in_place_bytes() { return in_place_.take_untold_bytes(); }
  // Whether a cut changed the file's size since the last commit: a size
  // no INPLACE record can vouch for, so the commit syncs the file first.
  bool cut_in_place() const { return cut_in_place_; }
  // At a commit: what in_place() and cut_in_place() held is durable.
  void forget_in_place() {
    in_place_.forget();
    cut_in_place_ = false;
  }

  Status sync_data() override { return synced(SuperblockGuardFile::sync_data()); }
  Status sync_all() override { return synced(SuperblockGuardFile::sync_all()); }
  Status sync_after_writes() override { return synced(SuperblockGuardFile::sync_after_writes()); }
  // The size the file has on disk for certain: as its last sync left it
  // (cut shorter since, perhaps).  nullopt until a sync with size_as_written
  // known.
  std::optional<uint64_t> synced_size() const { return synced_size_; }

  // Committed bytes may be written from now until end_rewrite.
  void begin_rewrite() { rewriting_ = true; }
  void end_rewrite() { rewriting_ = false; }

 private:
  bool may_change(uint64_t lo, uint64_t hi) const {
    return rewriting_ || lo >= image_.committed_size || unwritten_.declared(lo, hi);
  }
  Status synced(Status s) {
    if (s) synced_size_ = written_size_;
    if (s && written_size_) size_for_commits_ = written_size_;
    return s;
  }
  Status write(uint64_t offset, std::span<const std::byte> data, bool writeback_first) {
    assert(may_change(offset, offset + data.size()));
    H5J_RETURN_IF_ERROR(SuperblockGuardFile::write_at(offset, data));
    if (writeback_first) start_writeback(offset, data.size());
    wrote(offset, data);
    return Status::ok();
  }
  void wrote(uint64_t offset, std::span<const std::byte> data) {
    if (written_size_) written_size_ = std::max(*written_size_, offset + data.size());
    if (size_for_commits_ && !rewriting_) size_for_commits_ = std::max(*size_for_commits_, offset + data.size());
    if (tracks_in_place_ && !rewriting_) in_place_.wrote(offset, data);
  }

  const ImageLayers& image_;
  const UnwrittenSpace& unwritten_;
  bool rewriting_ = false;
  std::optional<uint64_t> written_size_;  // size_as_written(), once asked
  std::optional<uint64_t> size_for_commits_;  // size_for_commits(), once asked
  bool tracks_in_place_ = false;
  InPlaceWrites in_place_;
  bool cut_in_place_ = false;
  std::optional<uint64_t> synced_size_;
};

}  // namespace h5j
