// The bytes a serial writer put into the file in place since its last
// commit, as extents, each with the CRC32C of its bytes while they were
// written in one ascending run: what a commit of one flush names in its
// INPLACE records (format.h; design.md §9).
//
// An extent written over again, or out of order, loses its CRC (exact is
// false): the commit reads its bytes back from the file.  A run of
// ascending writes, each starting where the last ended, keeps one CRC,
// extended as it grows: W4's steps cost no read back.
//
// Past kMaxBytes written, or kMaxExtents extents, it keeps nothing more:
// the commit syncs the file before its COMMIT instead.  A CRC costs 37 µs
// a MiB on a Xeon with AVX-512 (ISA-L, 27 GB/s) and 52 to 100 µs on a Zen 3
// EPYC, a second cache flush about 100 µs in all: past a few MiB the flush
// is the cheaper, and past 64 MiB its share of the time to write the bytes
// is below 1% (W1 writes 1 GiB a commit).  A commit of one flush is kept up
// to 64 MiB all the same: the target is one flush a commit, and the CRC on
// a second thread, beside the step's pwrite, gained nothing measurable
// (docs/performance.md, W4's large steps).  A large write's CRC is taken
// once its writeback has started (WriteAheadFile::write_starting_writeback),
// so that the disk writes while the CRC is computed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "pooled_map.h"

namespace h5j {

class InPlaceWrites {
 public:
  struct Extent {
    uint64_t addr = 0, len = 0;
    uint32_t crc = 0;    // CRC32C of the bytes written, when exact
    bool exact = true;   // false: read the bytes back for their CRC
    uint64_t end() const { return addr + len; }
  };

  // [addr, addr + data.size()) now holds `data` in the file.
  void wrote(uint64_t addr, std::span<const std::byte> data);
  // Without extents only the bytes are counted (untold_bytes()): no CRC is
  // taken, and extents() stays empty.  Kept by default.
  void keep_extents(bool keep) { keeps_extents_ = keep; }
  // Too much written to name in INPLACE records (above): the commit syncs
  // the file before its COMMIT instead.
  bool too_many() const { return overflowed_; }
  // The extents in address order, disjoint (none once too_many()).
  std::vector<Extent> extents() const;
  void forget() {
    extents_->clear();
    bytes_ = told_ = 0;
    overflowed_ = false;
  }
  // The bytes written since the last take_untold_bytes() or forget(),
  // overwrites counted again, too_many() or not: what the background's sync
  // has yet to hear of (background_sync.h, WRITTEN AHEAD).
  uint64_t untold_bytes() const { return bytes_ - told_; }
  uint64_t told_bytes() const { return told_; }
  uint64_t take_untold_bytes() {
    uint64_t n = untold_bytes();
    told_ = bytes_;
    return n;
  }

  static constexpr size_t kMaxExtents = 4096;
  static constexpr uint64_t kMaxBytes = uint64_t(64) << 20;

 private:
  // A node per in-place write, taken while HDF5 writes: from a pool
  // (pooled_map.h), kept across forget(), of at most kMaxExtents nodes'
  // worth (too_many() past that).
  PooledMap<uint64_t, Extent> extents_;  // by address
  uint64_t bytes_ = 0;                  // written since forget()
  uint64_t told_ = 0;                   // of bytes_, taken by take_untold_bytes()
  bool overflowed_ = false;             // past kMaxBytes or kMaxExtents: nothing kept
  bool keeps_extents_ = true;           // keep_extents()
};

}  // namespace h5j
