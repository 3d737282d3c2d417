#include "superblock.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "coding.h"
#include "superblock_guard.h"  // where HDF5 looks for a superblock
#include "hdf5_private.h"  // H5_checksum_metadata: HDF5's own, so our checksums are identical to its

namespace h5j {
namespace {

constexpr unsigned char kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
constexpr uint64_t kV0FlagsOffset = 20;  // u32, versions 0 and 1
constexpr uint64_t kV2FlagsOffset = 11;  // u8, versions 2 and 3

}  // namespace

Status FileImageView::read(uint64_t addr, std::span<std::byte> out) {
  auto n = f_.read_at(addr, out);
  if (!n) return n.status();
  std::fill(out.begin() + ptrdiff_t(*n), out.end(), std::byte(0));
  return Status::ok();
}

Result<std::optional<SuperblockInfo>> find_superblock(RecoveredImage& image) {
  for (uint64_t off = 0; off + 48 <= image.size(); off = next_superblock_candidate(off)) {
    std::byte head[24];
    H5J_RETURN_IF_ERROR(image.read(off, head));
    if (std::memcmp(head, kSignature, 8) != 0) continue;
    SuperblockInfo sb;
    sb.offset = off;
    sb.version = unsigned(head[8]);
    if (sb.version <= 1) sb.status_flags = get_u32(head + kV0FlagsOffset);
    else if (sb.version <= 3) sb.status_flags = uint32_t(head[kV2FlagsOffset]);
    else return Status(Code::kCorrupt, "unknown HDF5 superblock version " + std::to_string(sb.version));
    return std::optional<SuperblockInfo>(sb);
  }
  return std::optional<SuperblockInfo>();
}

std::optional<uint64_t> superblock_eoa(RecoveredImage& image, const SuperblockInfo& sb) {
  // v0/v1: sizes at 13 (offsets), then base, free-space, EOF and driver
  // addresses after 24 (v0) or 28 (v1) bytes.  v2/v3: sizes at 9, then base,
  // extension, EOF and root addresses after 12 bytes.
  std::byte head[128];
  if (!image.read(sb.offset, head)) return std::nullopt;
  unsigned offset_size = unsigned(sb.version <= 1 ? head[13] : head[9]);
  if (offset_size != 8 && offset_size != 4) return std::nullopt;
  uint64_t first = sb.version == 0 ? 24 : sb.version == 1 ? 28 : 12;
  auto addr = [&](uint64_t at) {
    uint64_t v = 0;
    for (unsigned i = 0; i < offset_size; ++i) v |= uint64_t(head[at + i]) << (8 * i);
    return v;
  };
  uint64_t base = addr(first), eof = addr(first + 2 * offset_size);
  return base + eof;
}

Status left_open_without_journal(const std::string& file, const std::string& journal) {
  return Status(Code::kMissing, file + " was not closed cleanly (HDF5 marks it open for writing) and has no journal " +
                                    journal + ": it was not written through h5journal, or its journal was removed. "
                                    "Nothing can be replayed; 'h5clear -s " + file + "' accepts the file as it is");
}

Status clear_status_flags(RecoveredImage& image) {
  auto found = find_superblock(image);
  if (!found) return found.status();
  if (!found->has_value() || (*found)->status_flags == 0) return Status::ok();
  const SuperblockInfo& sb = **found;
  if (sb.version <= 1) {
    std::byte zero[4] = {};
    return image.patch(sb.offset + kV0FlagsOffset, zero);
  }
  // v2/v3: signature, version, offset size, length size, flags, four
  // addresses, then a checksum of everything before it.
  std::byte sizes[2];
  H5J_RETURN_IF_ERROR(image.read(sb.offset + 9, sizes));
  unsigned offset_size = unsigned(sizes[0]);
  if (offset_size != 2 && offset_size != 4 && offset_size != 8 && offset_size != 16)
    return Status(Code::kCorrupt, "HDF5 superblock has a bad offset size");
  size_t body = 12 + 4 * offset_size;
  std::vector<std::byte> image_bytes(body + 4);
  H5J_RETURN_IF_ERROR(image.read(sb.offset, image_bytes));
  image_bytes[kV2FlagsOffset] = std::byte(0);
  put_u32(image_bytes.data() + body, H5_checksum_metadata(image_bytes.data(), body, 0));
  return image.patch(sb.offset, image_bytes);
}

}  // namespace h5j
