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
//   off  HDF5's superblock       guarded
//     0  \211 H D F \r \n \032 \n  unchanged
//     8  version (0 to 3)        version | 0x80         (a writer's, or a crash's)
//                                version | 0x80 | 0x40  (closed in log form)
//
// HDF5 refuses a superblock version above its latest ("bad superblock
// version number"); a version 2 or 3 superblock's checksum fails as well.
// Only a superblock at offset 0 is guarded: a file with a user block keeps
// its superblock at 512 or beyond, and is left as it is.
//
// Through this File the guard is invisible: a read of byte 8 gets the
// version, with the guard bits cleared, wherever the file starts with HDF5's
// signature; while guarding, a write of byte 8 sets the bit.  So the
// engine's image, fingerprints and replay all see HDF5's bytes, whether the
// file on disk is guarded or not.
//
// Before a file created empty has a commit, it has no guard but a held
// signature: bytes 0 to 8 go to the disk as zeros, and are written at the
// first commit (guarded) or by a close that committed nothing, once the
// rest of the file is durable.  Until then the disk holds no HDF5 file.
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

inline constexpr uint64_t kSuperblockVersionOffset = 8;
inline constexpr std::byte kGuardBit{0x80};
inline constexpr std::byte kLogFormBit{0x40};
inline constexpr std::byte kGuardBits = kGuardBit | kLogFormBit;

class SuperblockGuardFile : public ForwardingFile {
 public:
  explicit SuperblockGuardFile(std::unique_ptr<File> inner) : ForwardingFile(std::move(inner)) {}

  // From now on writes of byte 8 set the guard bit; the bit is set in the
  // file now if it holds a superblock at 0.  With `log_form`, the log-form
  // bit too.
  Status guard(bool log_form = false);
  // Clears the guard bits in the file, and stops setting them.
  Status unguard();
  // False if this writer put its guard into the file and the file no longer
  // holds it: another process cut or rewrote the superblock behind the
  // driver's back (the writer itself never writes byte 8 without it).
  Result<bool> guard_intact();

  // From now on writes of bytes [0, 9), the signature and the version
  // byte, put zeros there, and reads return the bytes written: until
  // release_signature(), the file on disk starts with no HDF5 signature, so
  // that no reader takes a file half written for HDF5's
  // (close_uncommitted.cc).
  void hold_signature() {
    assert(set_bits_ == std::byte{0});  // a file with a guard has a commit: never held
    holding_ = true;
  }
  // Writes the held bytes in place in one write, the version byte guarded
  // if guard() came first, and stops holding (if it was).
  Status release_signature();
  bool holds_signature() const { return holding_; }

  Result<size_t> read_at(uint64_t offset, std::span<std::byte> out) override;
  Status write_at(uint64_t offset, std::span<const std::byte> data) override;
  Result<uint64_t> submit_write(uint64_t offset, std::span<const std::byte> data) override;

 private:
  // Byte 8 as the file holds it, if the file starts with HDF5's signature.
  Result<std::optional<std::byte>> stored_version_byte();
  Status store_version_byte(std::byte b);
  Result<bool> starts_with_signature(uint64_t offset, std::span<const std::byte> bytes);

  // Writes `data` at `offset` (below 9), its bytes in [0, 9) kept in held_
  // and zeros in their place.
  Status write_held(uint64_t offset, std::span<const std::byte> data);

  std::byte set_bits_{0};  // what writes of byte 8 add: 0 while not guarding
  bool guard_on_disk_ = false;  // the file holds a superblock this writer guarded
  bool holding_ = false;
  std::array<std::byte, kSuperblockVersionOffset + 1> held_{};  // what writes put there while holding
  size_t held_end_ = 0;                                         // how far into held_ they reached
};

// True if `head` (a file's first bytes) starts with HDF5's signature.
bool is_hdf5_head(std::span<const std::byte> head);
// True if `head` (a file's first bytes, at least 9) is a guarded superblock;
// `log_form` says which guard.
bool is_guarded_head(std::span<const std::byte> head, bool log_form);

}  // namespace h5j
