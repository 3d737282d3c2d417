// Shared by the fuzz targets: turn fuzzer bytes into a journal.  Half the
// inputs are used as they are; the other half have their header slots' and
// records' CRCs, salts and LSNs repaired first, so the fuzzer reaches the
// transaction grammar and replay instead of stopping at the first checksum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "coding.h"
#include "crc32c.h"
#include "format.h"

namespace h5j::fuzz {

inline std::vector<std::byte> journal_from(const uint8_t* data, size_t size) {
  std::vector<std::byte> j(reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + size);
  if (size == 0 || (data[0] & 1) == 0) return j;
  // Repair: a header in slot 1 (generation 1), then records wherever the
  // lengths lead, each given the salt, its own LSN and a valid CRC.
  if (j.size() < kFirstRecordOffset) j.resize(kFirstRecordOffset);
  std::byte* slot = j.data() + kHeaderSlotOffset[1];
  std::memcpy(slot, kMagic, 8);
  put_u32(slot + 8, kFormatVersion);
  put_u32(slot + 12, kHeaderSlotSize);
  if (get_u64(slot + 16) == 0) put_u64(slot + 16, 1);
  put_u32(slot + 28, kBlockSize);
  put_u16(slot + 84, uint16_t(get_u16(slot + 84) % (kMaxTargetName + 1)));
  // Half the repaired headers fingerprint a file of at most 8 KiB (the
  // recovery target's file is smaller), with as many windows as that size
  // gets, so that recovery reaches the fingerprint's comparison.
  if ((data[0] & 2) != 0) {
    put_u64(slot + 64, get_u64(slot + 64) % 8192);
    put_u16(slot + 486, uint16_t(fingerprint_windows(get_u64(slot + 64))));
  } else {
    put_u16(slot + 486, uint16_t(get_u16(slot + 486) % (kFingerprintWindows + 1)));
  }
  put_u32(slot + 508, mask_crc(crc32c(slot, 508)));
  uint32_t salt = get_u32(slot + 24);
  uint64_t off = kFirstRecordOffset;
  while (off + kRecordHeaderSize <= j.size()) {
    std::byte* r = j.data() + off;
    uint64_t len = get_u32(r + 8) % 4096;  // keep records short so many fit
    if (off + kRecordHeaderSize + len > j.size()) break;
    put_u32(r + 8, uint32_t(len));
    put_u32(r + 12, salt);
    put_u64(r + 16, off);
    put_u32(r, mask_crc(crc32c(r + 4, kRecordHeaderSize - 4 + len)));
    uint64_t next = off + record_span(len);
    if (uint8_t(r[4]) == uint8_t(RecordType::kCommit)) next = align_up(next, kBlockSize);
    off = next;
  }
  return j;
}

}  // namespace h5j::fuzz
