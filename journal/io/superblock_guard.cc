#include "superblock_guard.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace h5j {
namespace {

constexpr unsigned char kHdf5Signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

bool is_hdf5_signature(std::span<const std::byte> first8) {
  return first8.size() >= 8 && std::memcmp(first8.data(), kHdf5Signature, 8) == 0;
}

// Whether [offset, offset + n) holds byte `at`.
bool covers(uint64_t offset, size_t n, uint64_t at) { return offset <= at && at < offset + n; }

// The first candidate whose version byte lies at or after `offset`.
uint64_t first_version_byte_candidate(uint64_t offset) {
  return first_superblock_candidate(offset > kSuperblockVersionOffset ? offset - kSuperblockVersionOffset : 0);
}

}  // namespace

uint64_t first_superblock_candidate(uint64_t offset) {
  uint64_t at = 0;
  while (at < offset) at = next_superblock_candidate(at);
  return at;
}

Result<std::optional<uint64_t>> locate_superblock(File& file) {
  auto size = file.size();
  if (!size) return size.status();
  return locate_superblock(*size, [&file](uint64_t at, std::span<std::byte> out) -> Status {
    auto n = file.read_at(at, out);
    return n ? Status::ok() : n.status();
  });
}

bool is_hdf5_head(std::span<const std::byte> head) { return is_hdf5_signature(head); }

bool is_guarded_head(std::span<const std::byte> head, bool log_form) {
  if (head.size() <= kSuperblockVersionOffset || !is_hdf5_signature(head.first(8))) return false;
  std::byte want = log_form ? kGuardBits : kGuardBit;
  return (head[kSuperblockVersionOffset] & kGuardBits) == want;
}

bool SuperblockGuardFile::covers_a_version_byte(uint64_t offset, size_t n) {
  return covers(offset, n, first_version_byte_candidate(offset) + kSuperblockVersionOffset);
}

// Only then need a read find the superblock.
bool SuperblockGuardFile::guard_bits_at_a_candidate(uint64_t offset, std::span<const std::byte> bytes) {
  for (uint64_t at = first_version_byte_candidate(offset);
       covers(offset, bytes.size(), at + kSuperblockVersionOffset); at = next_superblock_candidate(at))
    if ((bytes[at + kSuperblockVersionOffset - offset] & kGuardBits) != std::byte{0}) return true;
  return false;
}

void SuperblockGuardFile::superblock_is_at(uint64_t at) {
  superblock_ = at;
  if (holding_ && held_end_ == 0) held_at_ = at;
}

Result<std::optional<uint64_t>> SuperblockGuardFile::superblock_at(uint64_t offset, std::span<const std::byte> data) {
  if (superblock_) return superblock_;
  for (uint64_t at = first_superblock_candidate(offset); at + kSuperblockHead <= offset + data.size();
       at = next_superblock_candidate(at))
    if (is_hdf5_signature(data.subspan(at - offset, 8))) return std::optional<uint64_t>(at);
  auto found = locate_superblock(inner());
  if (found && *found) superblock_ = *found;
  return found;
}

Result<bool> SuperblockGuardFile::signature_at(uint64_t at, uint64_t offset, std::span<const std::byte> bytes) {
  if (offset <= at && at + 8 <= offset + bytes.size()) return is_hdf5_signature(bytes.subspan(at - offset, 8));
  auto stored = stored_version_byte();
  if (!stored) return stored.status();
  return stored->has_value() && (*stored)->superblock == at;
}

Result<std::optional<SuperblockGuardFile::StoredVersion>> SuperblockGuardFile::stored_version_byte() {
  auto at = superblock_at();
  if (!at) return at.status();
  if (!*at) return std::optional<StoredVersion>();
  std::array<std::byte, kSuperblockHead> head;
  auto n = inner().read_at(**at, head);
  if (!n) return n.status();
  if (*n < head.size() || !is_hdf5_signature(head)) return std::optional<StoredVersion>();
  return std::optional<StoredVersion>(StoredVersion{**at, head[kSuperblockVersionOffset]});
}

Status SuperblockGuardFile::store_version_byte(const StoredVersion& v) {
  return inner().write_at(v.superblock + kSuperblockVersionOffset, std::span<const std::byte>(&v.version, 1));
}

Status SuperblockGuardFile::guard(bool log_form) {
  set_bits_ = log_form ? kGuardBits : kGuardBit;
  auto stored = stored_version_byte();
  if (!stored) return stored.status();
  guard_on_disk_ = stored->has_value();
  if (!*stored || ((*stored)->version & kGuardBits) == set_bits_) return Status::ok();
  return store_version_byte({(*stored)->superblock, ((*stored)->version & ~kGuardBits) | set_bits_});
}

Status SuperblockGuardFile::unguard() {
  set_bits_ = std::byte{0};
  guard_on_disk_ = false;
  auto stored = stored_version_byte();
  if (!stored) return stored.status();
  if (!*stored || ((*stored)->version & kGuardBits) == std::byte{0}) return Status::ok();
  return store_version_byte({(*stored)->superblock, (*stored)->version & ~kGuardBits});
}

// A version byte with guard bits is cleared only at the superblock: byte 8
// of a user block, or of raw data that holds a signature, is returned as it
// is.
Result<size_t> SuperblockGuardFile::read_at(uint64_t offset, std::span<std::byte> out) {
  auto n = inner().read_at(offset, out);
  if (n && holding_)
    for (uint64_t at = std::max(offset, held_at_); at < held_at_ + kSuperblockHead && at < offset + *n; ++at)
      out[at - offset] = held_[at - held_at_];
  if (!n || !guard_bits_at_a_candidate(offset, out.first(*n))) return n;
  auto at = superblock_at();
  if (!at) return at.status();
  if (!*at || !covers(offset, *n, **at + kSuperblockVersionOffset)) return n;
  std::byte& version = out[**at + kSuperblockVersionOffset - offset];
  if ((version & kGuardBits) == std::byte{0}) return n;
  auto signature = signature_at(**at, offset, out.first(*n));
  if (!signature) return signature.status();
  if (*signature) version &= ~kGuardBits;
  return n;
}

// The held part as zeros, then the rest as it is: no copy of a large write
// (an image's first run reaches 8 MiB).
Status SuperblockGuardFile::write_held(uint64_t offset, std::span<const std::byte> data) {
  const std::array<std::byte, kSuperblockHead> zeros{};
  if (offset < held_at_) {
    const size_t before = size_t(held_at_ - offset);
    H5J_RETURN_IF_ERROR(inner().write_at(offset, data.first(before)));
    return write_held(held_at_, data.subspan(before));
  }
  const uint64_t into = offset - held_at_;
  const size_t head = std::min(data.size(), size_t(kSuperblockHead - into));
  std::copy_n(data.begin(), head, held_.begin() + ptrdiff_t(into));
  held_end_ = std::max(held_end_, size_t(into) + head);
  H5J_RETURN_IF_ERROR(inner().write_at(offset, std::span(zeros).first(head)));
  return head == data.size() ? Status::ok() : inner().write_at(offset + head, data.subspan(head));
}

// The file was created empty: bytes of the held place no write reached are
// zeros there anyway.
Status SuperblockGuardFile::release_signature() {
  if (!holding_) return Status::ok();
  holding_ = false;
  return held_end_ == 0 ? Status::ok() : write_at(held_at_, std::span(held_).first(held_end_));
}

// Like reads, only at the superblock: the bytes written, or the file's.
Status SuperblockGuardFile::write_at(uint64_t offset, std::span<const std::byte> data) {
  if (overlaps_held(offset, data.size())) return write_held(offset, data);
  if (set_bits_ == std::byte{0} || !covers_a_version_byte(offset, data.size())) return inner().write_at(offset, data);
  auto at = superblock_at(offset, data);
  if (!at) return at.status();
  if (!*at || !covers(offset, data.size(), **at + kSuperblockVersionOffset)) return inner().write_at(offset, data);
  auto signature = signature_at(**at, offset, data);
  if (!signature) return signature.status();
  if (!*signature) return inner().write_at(offset, data);
  std::vector<std::byte> guarded(data.begin(), data.end());
  guarded[**at + kSuperblockVersionOffset - offset] |= set_bits_;
  H5J_RETURN_IF_ERROR(inner().write_at(offset, guarded));
  guard_on_disk_ = true;
  return Status::ok();
}

Result<bool> SuperblockGuardFile::guard_intact() {
  if (!guard_on_disk_) return true;
  auto stored = stored_version_byte();
  if (!stored) return stored.status();
  return stored->has_value() && ((*stored)->version & kGuardBits) == set_bits_;
}

Result<bool> SuperblockGuardFile::holds_plain_superblock() {
  auto stored = stored_version_byte();
  if (!stored) return stored.status();
  return stored->has_value() && ((*stored)->version & kGuardBits) == std::byte{0};
}

// The engine writes the HDF5 file with write_at only; an asynchronous write
// could not be guarded without a copy that outlives it.
Result<uint64_t> SuperblockGuardFile::submit_write(uint64_t offset, std::span<const std::byte> data) {
  if ((set_bits_ != std::byte{0} && covers_a_version_byte(offset, data.size())) || overlaps_held(offset, data.size()))
    return Status(Code::kInvalid, path() + ": the superblock is written with write_at, not submit_write");
  return inner().submit_write(offset, data);
}

}  // namespace h5j
