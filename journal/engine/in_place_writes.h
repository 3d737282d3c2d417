// The bytes a serial writer put into the file in place since its last
// commit, as extents, each with the CRC32C of its bytes while they were
// written in one ascending run: what a commit of one flush names in its
// INPLACE records (format.h; design.md §9).
//
// An extent written over again, or out of order, loses its CRC (exact is
// false): the commit reads its bytes back from the file.  A run of
// ascending writes, each starting where the last ended, keeps one CRC,
// extended as it grows: W4's steps and W1's pieces cost no read back.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

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
  // More extents than a commit's records should hold: the commit syncs the
  // file before its COMMIT instead.
  bool too_many() const { return extents_.size() > kMaxExtents; }
  // The extents in address order, disjoint.
  std::vector<Extent> extents() const;
  void forget() { extents_.clear(); }

  static constexpr size_t kMaxExtents = 4096;

 private:
  std::map<uint64_t, Extent> extents_;  // by address
};

}  // namespace h5j
