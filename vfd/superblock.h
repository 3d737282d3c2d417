// HDF5 superblock knowledge the driver needs: where the superblock is, and
// its status flags.  HDF5 sets WRITE_ACCESS in the superblock of a file open
// for writing (all superblock versions, when the driver has a lock callback)
// and refuses to open a version 3 file that has it set.  A recovered file's
// committed superblock carries the flag, so recovery clears it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "file.h"
#include "recovered_image.h"

namespace h5j {

// A read-only RecoveredImage over a File, for inspecting a file's superblock
// without journaling it (reads past the end are zeros).
class FileImageView : public RecoveredImage {
 public:
  FileImageView(File& f, uint64_t size) : f_(f), size_(size) {}
  Status read(uint64_t addr, std::span<std::byte> out) override;
  Status patch(uint64_t, std::span<const std::byte>) override { return Status(Code::kInvalid, "read-only view"); }
  uint64_t size() const override { return size_; }

 private:
  File& f_;
  uint64_t size_;
};

struct SuperblockInfo {
  uint64_t offset = 0;  // 0, 512, 1024, 2048, ... (after a user block)
  unsigned version = 0;
  uint32_t status_flags = 0;
};

// Looks for the superblock signature within the image.
Result<std::optional<SuperblockInfo>> find_superblock(RecoveredImage& image);
// The end-of-file address (EOA) the superblock records, counted from the
// start of the file (base address included); nullopt if it cannot be read.
std::optional<uint64_t> superblock_eoa(RecoveredImage& image, const SuperblockInfo& sb);
// HDF5 marks the file open for writing.  Only a version 3 superblock's flag
// counts: HDF5 ignores the flags of older versions, so files in the wild
// (HDF5's own test files among them) carry stale ones that sec2 opens.
inline bool marked_open_for_writing(const SuperblockInfo& sb) { return sb.version >= 3 && (sb.status_flags & 1); }
// The error for a file so marked that has no journal.
Status left_open_without_journal(const std::string& file, const std::string& journal);
// Clears the status flags (and fixes the checksum of a v2/v3 superblock).
Status clear_status_flags(RecoveredImage& image);

}  // namespace h5j
