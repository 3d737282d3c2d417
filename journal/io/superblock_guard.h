// The HDF5 file's superblock version byte, guarded on disk while a journal
// holds the file's last commit.
//
// While a journal is bound to a file, the bytes on disk can be older than
// the last commit (the journal holds the rest), or, after a crash, torn.
// A reader without the driver (h5dump, netCDF, h5py with sec2) must not
// take them for the file.  Yet netCDF decides a file's format from its
// first bytes before HDF5 opens it, and refuses a file without HDF5's
// signature even through the driver.  So the signature stays, and the byte
// after it is guarded:
//
//   off    HDF5's superblock       guarded
//   S      \211 H D F \r \n \032 \n  unchanged
//   S + 8  version (0 to 3)        version | 0x80         (a writer's, or a crash's)
//                                  version | 0x80 | 0x40  (closed in log form)
//
// S is where HDF5 finds its superblock: the first of offset 0, 512, 1024,
// 2048 and each power of two after, that holds the signature
// (H5FD_locate_signature).  A file with a user block keeps its superblock
// at the block's end, 512 or any power of two beyond; bytes at other
// offsets are never changed, whatever they hold.  HDF5 refuses a
// superblock version above its latest ("bad superblock version number"); a
// version 2 or 3 superblock's checksum fails as well.
//
// Through this File the guard is invisible: a read of byte S + 8 gets the
// version, with the guard bits cleared; while guarding, a write of byte
// S + 8 sets the bit.  So the engine's image, fingerprints and replay all
// see HDF5's bytes, whether the file on disk is guarded or not.  S is kept
// once the driver tells it (HDF5's base address) or it is found in the
// file: HDF5 never moves a superblock.  A write's own bytes say where S is
// only for that write, since raw data may hold a signature too.
//
// Before a file created empty has a commit, it has no guard but a held
// signature: bytes S to S + 8 go to the disk as zeros, and are written at
// the first commit (guarded) or by a close that committed nothing, once the
// rest of the file is durable.  Until then the disk holds no HDF5 file.
// The held place is 0 until the driver tells S, which it does before
// HDF5's first write.
#pragma once

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "forwarding_file.h"

namespace h5j {

inline constexpr uint64_t kSuperblockVersionOffset = 8;  // from the superblock's start
inline constexpr size_t kSuperblockHead = kSuperblockVersionOffset + 1;  // the signature and the version

// Where HDF5 looks for its superblock, in its order: 0, then 512, 1024, and
// each power of two after.
inline constexpr uint64_t next_superblock_candidate(uint64_t at) { return at == 0 ? 512 : 2 * at; }
// The first candidate at or after `offset`.
uint64_t first_superblock_candidate(uint64_t offset);
// The superblock's offset in a file of `size` bytes whose bytes `read(offset,
// out)` gives: the first candidate that holds HDF5's signature, and nullopt
// if none does.
template <class Read>
Result<std::optional<uint64_t>> locate_superblock(uint64_t size, Read&& read);
// The same, of `file` as it is on disk.
Result<std::optional<uint64_t>> locate_superblock(File& file);
inline constexpr std::byte kGuardBit{0x80};
inline constexpr std::byte kLogFormBit{0x40};
inline constexpr std::byte kGuardBits = kGuardBit | kLogFormBit;

class SuperblockGuardFile : public ForwardingFile {
 public:
  explicit SuperblockGuardFile(std::unique_ptr<File> inner) : ForwardingFile(std::move(inner)) {}

  // From now on writes of the version byte set the guard bit; the bit is
  // set in the file now if it holds a superblock.  With `log_form`, the
  // log-form bit too.
  Status guard(bool log_form = false);
  // Clears the guard bits in the file, and stops setting them.
  Status unguard();
  // False if this writer put its guard into the file and the file no longer
  // holds it: another process cut or rewrote the superblock behind the
  // driver's back (the writer itself never writes the version byte without it).
  Result<bool> guard_intact();
  // True if the file on disk holds HDF5's superblock with no guard bits: a
  // whole file, as HDF5 leaves one written without the driver.
  Result<bool> holds_plain_superblock();

  // From now on writes of the superblock's signature and version byte put
  // zeros there, and reads return the bytes written: until
  // release_signature(), the file on disk holds no HDF5 signature, so that
  // no reader takes a file half written for HDF5's (close_uncommitted.cc).
  void hold_signature() {
    assert(set_bits_ == std::byte{0});  // a file with a guard has a commit: never held
    holding_ = true;
  }
  // Writes the held bytes in place in one write, the version byte guarded
  // if guard() came first, and stops holding (if it was).
  Status release_signature();
  bool holds_signature() const { return holding_; }

  // Where HDF5 put the superblock (its base address: after a user block, if
  // any), as the driver knows it.  Held bytes not yet written move there.
  void superblock_is_at(uint64_t at);
  // Where the superblock is, as told or found so far; 0 (HDF5's place for
  // it without a user block) while unknown.
  uint64_t superblock_offset() const { return superblock_.value_or(0); }

  Result<size_t> read_at(uint64_t offset, std::span<std::byte> out) override;
  Status write_at(uint64_t offset, std::span<const std::byte> data) override;
  Result<uint64_t> submit_write(uint64_t offset, std::span<const std::byte> data) override;

 private:
  // The superblock's version byte as the file holds it, and where, if the
  // file holds a superblock.
  struct StoredVersion {
    uint64_t superblock = 0;
    std::byte version{0};
  };
  Result<std::optional<StoredVersion>> stored_version_byte();
  Status store_version_byte(const StoredVersion& v);
  // Where the superblock is: as told (superblock_is_at), else where `data`,
  // written at `offset`, puts HDF5's signature, else found in the file;
  // nullopt while none is known.  Only what is told or found in the file is
  // kept: a write may be raw data that holds a signature.
  Result<std::optional<uint64_t>> superblock_at(uint64_t offset = 0, std::span<const std::byte> data = {});
  // Whether the superblock at `at` starts with HDF5's signature: by `bytes`,
  // read or written at `offset`, when they cover it; else by the file.
  Result<bool> signature_at(uint64_t at, uint64_t offset, std::span<const std::byte> bytes);
  // Whether [offset, offset + n) covers some candidate's version byte.
  static bool covers_a_version_byte(uint64_t offset, size_t n);
  // Whether `bytes`, read at `offset`, set guard bits in some candidate's
  // version byte.
  static bool guard_bits_at_a_candidate(uint64_t offset, std::span<const std::byte> bytes);
  // Whether [offset, offset + n) overlaps the held bytes' place.
  bool overlaps_held(uint64_t offset, size_t n) const {
    return holding_ && offset < held_at_ + kSuperblockHead && held_at_ < offset + n;
  }
  // Writes `data` at `offset`, its bytes in the held place kept in held_ and
  // zeros in their place.
  Status write_held(uint64_t offset, std::span<const std::byte> data);

  std::byte set_bits_{0};  // what writes of the version byte add: 0 while not guarding
  bool guard_on_disk_ = false;  // the file holds a superblock this writer guarded
  std::optional<uint64_t> superblock_;  // where the superblock is, once found
  bool holding_ = false;
  uint64_t held_at_ = 0;  // where the held bytes go: the superblock's offset
  std::array<std::byte, kSuperblockHead> held_{};  // what writes put there while holding
  size_t held_end_ = 0;                           // how far into held_ they reached
};

// True if `head` (a superblock's first bytes) starts with HDF5's signature.
bool is_hdf5_head(std::span<const std::byte> head);
// True if `head` (a superblock's first bytes, at least 9) is guarded;
// `log_form` says which guard.
bool is_guarded_head(std::span<const std::byte> head, bool log_form);

template <class Read>
Result<std::optional<uint64_t>> locate_superblock(uint64_t size, Read&& read) {
  for (uint64_t at = 0; at + kSuperblockHead <= size; at = next_superblock_candidate(at)) {
    std::array<std::byte, 8> first8{};
    H5J_RETURN_IF_ERROR(read(at, std::span(first8)));
    if (is_hdf5_head(first8)) return std::optional<uint64_t>(at);
  }
  return std::optional<uint64_t>();
}

}  // namespace h5j
