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

bool covers_version(uint64_t offset, size_t size) {
  return offset <= kSuperblockVersionOffset && kSuperblockVersionOffset < offset + size;
}

}  // namespace

bool is_hdf5_head(std::span<const std::byte> head) { return is_hdf5_signature(head); }

bool is_guarded_head(std::span<const std::byte> head, bool log_form) {
  if (head.size() <= kSuperblockVersionOffset || !is_hdf5_signature(head.first(8))) return false;
  std::byte want = log_form ? kGuardBits : kGuardBit;
  return (head[kSuperblockVersionOffset] & kGuardBits) == want;
}

Result<std::optional<std::byte>> SuperblockGuardFile::stored_version_byte() {
  std::array<std::byte, kSuperblockVersionOffset + 1> head;
  auto n = inner().read_at(0, head);
  if (!n) return n.status();
  if (*n < head.size() || !is_hdf5_signature(head)) return std::optional<std::byte>();
  return std::optional<std::byte>(head[kSuperblockVersionOffset]);
}

Status SuperblockGuardFile::store_version_byte(std::byte b) {
  return inner().write_at(kSuperblockVersionOffset, std::span<const std::byte>(&b, 1));
}

Status SuperblockGuardFile::guard(bool log_form) {
  set_bits_ = log_form ? kGuardBits : kGuardBit;
  auto stored = stored_version_byte();
  if (!stored) return stored.status();
  guard_on_disk_ = stored->has_value();
  if (!*stored || (**stored & kGuardBits) == set_bits_) return Status::ok();
  return store_version_byte((**stored & ~kGuardBits) | set_bits_);
}

Status SuperblockGuardFile::unguard() {
  set_bits_ = std::byte{0};
  guard_on_disk_ = false;
  auto stored = stored_version_byte();
  if (!stored) return stored.status();
  if (!*stored || (**stored & kGuardBits) == std::byte{0}) return Status::ok();
  return store_version_byte(**stored & ~kGuardBits);
}

// Whether the file starts with HDF5's signature: by `bytes`, which cover
// byte 8 from `offset`, when they cover the signature too; else by the file.
Result<bool> SuperblockGuardFile::starts_with_signature(uint64_t offset, std::span<const std::byte> bytes) {
  if (offset == 0) return is_hdf5_signature(bytes.first(8));
  auto stored = stored_version_byte();
  if (!stored) return stored.status();
  return stored->has_value();
}

// A version byte with guard bits is cleared only where the file starts with
// HDF5's signature: elsewhere byte 8 is not a superblock's (a user block's,
// say) and is returned as it is.
Result<size_t> SuperblockGuardFile::read_at(uint64_t offset, std::span<std::byte> out) {
  auto n = inner().read_at(offset, out);
  if (n && holding_)
    for (uint64_t at = offset; at < held_.size() && at < offset + *n; ++at) out[at - offset] = held_[at];
  if (!n || !covers_version(offset, *n)) return n;
  std::byte& version = out[kSuperblockVersionOffset - offset];
  if ((version & kGuardBits) == std::byte{0}) return n;
  auto signature = starts_with_signature(offset, out);
  if (!signature) return signature.status();
  if (*signature) version &= ~kGuardBits;
  return n;
}

// The held part as zeros, then the rest as it is: no copy of a large write
// (an image's first run reaches 8 MiB).
Status SuperblockGuardFile::write_held(uint64_t offset, std::span<const std::byte> data) {
  const size_t head = std::min(data.size(), size_t(held_.size() - offset));
  std::copy_n(data.begin(), head, held_.begin() + offset);
  held_end_ = std::max(held_end_, size_t(offset) + head);
  const std::array<std::byte, kSuperblockVersionOffset + 1> zeros{};
  H5J_RETURN_IF_ERROR(inner().write_at(offset, std::span(zeros).first(head)));
  return head == data.size() ? Status::ok() : inner().write_at(offset + head, data.subspan(head));
}

// The file was created empty: bytes of [0, held_end_) no write reached are
// zeros there anyway.
Status SuperblockGuardFile::release_signature() {
  if (!holding_) return Status::ok();
  holding_ = false;
  return held_end_ == 0 ? Status::ok() : write_at(0, std::span(held_).first(held_end_));
}

// Like reads, only where the file starts with HDF5's signature: the bytes
// written, or the file's.
Status SuperblockGuardFile::write_at(uint64_t offset, std::span<const std::byte> data) {
  if (holding_ && offset < held_.size()) return write_held(offset, data);
  if (set_bits_ == std::byte{0} || !covers_version(offset, data.size())) return inner().write_at(offset, data);
  auto signature = starts_with_signature(offset, data);
  if (!signature) return signature.status();
  if (!*signature) return inner().write_at(offset, data);
  std::vector<std::byte> guarded(data.begin(), data.end());
  guarded[kSuperblockVersionOffset - offset] |= set_bits_;
  H5J_RETURN_IF_ERROR(inner().write_at(offset, guarded));
  guard_on_disk_ = true;
  return Status::ok();
}

Result<bool> SuperblockGuardFile::guard_intact() {
  if (!guard_on_disk_) return true;
  auto stored = stored_version_byte();
  if (!stored) return stored.status();
  return stored->has_value() && (**stored & kGuardBits) == set_bits_;
}

// The engine writes the HDF5 file with write_at only; an asynchronous write
// could not be guarded without a copy that outlives it.
Result<uint64_t> SuperblockGuardFile::submit_write(uint64_t offset, std::span<const std::byte> data) {
  if ((set_bits_ != std::byte{0} && covers_version(offset, data.size())) || (holding_ && offset < held_.size()))
    return Status(Code::kInvalid, path() + ": the superblock is written with write_at, not submit_write");
  return inner().submit_write(offset, data);
}

}  // namespace h5j
