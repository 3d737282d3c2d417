// Shared by the fuzz targets: turn fuzzer bytes into a journal.  Half the
// inputs are used as they are; the other half have their header slots' and
// records' CRCs, salts and LSNs repaired first, so the fuzzer reaches the
// transaction grammar and replay instead of stopping at the first checksum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "format.h"

namespace h5j::fuzz {

inline std::vector<std::byte> journal_from(const uint8_t* data, size_t size) {
  std::vector<std::byte> j(reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + size);
  if (size == 0 || (data[0] & 1) == 0) return j;
  // Repair: a header in slot 1 (generation 1), then records wherever the
  // lengths lead, each given the salt, its own LSN and a valid CRC.
  if (j.size() < kFirstRecordOffset) j.resize(kFirstRecordOffset);
  std::byte* slot = j.data() + kHeaderSlotOffset[1];
  namespace hs = header_slot;
  namespace rh = record_header;
  std::memcpy(slot + hs::kMagic.at, kMagic, hs::kMagic.len);
  put_field<hs::kVersion>(slot, kFormatVersion);
  put_field<hs::kSlotSize>(slot, kHeaderSlotSize);
  if (get_field<hs::kGeneration>(slot) == 0) put_field<hs::kGeneration>(slot, uint64_t(1));
  put_field<hs::kBlockSize>(slot, kBlockSize);
  put_field<hs::kNameLength>(slot, uint16_t(get_field<hs::kNameLength>(slot) % (kMaxTargetName + 1)));
  // Half the repaired headers fingerprint a file of at most 8 KiB (the
  // recovery target's file is smaller), with as many samples as that size
  // gets, so that recovery reaches the fingerprint's comparison.
  if ((data[0] & 2) != 0) {
    put_field<hs::kBaseSize>(slot, get_field<hs::kBaseSize>(slot) % 8192);
    put_field<hs::kSamples>(slot, uint16_t(fingerprint_samples(get_field<hs::kBaseSize>(slot))));
  } else {
    put_field<hs::kSamples>(slot, uint16_t(get_field<hs::kSamples>(slot) % (kFingerprintSamples + 1)));
  }
  seal_header_slot(std::span<std::byte, kHeaderSlotSize>(slot, kHeaderSlotSize));
  uint32_t salt = get_field<hs::kSalt>(slot);
  uint64_t off = kFirstRecordOffset;
  while (off + kRecordHeaderSize <= j.size()) {
    std::byte* r = j.data() + off;
    uint64_t len = get_field<rh::kPayloadLength>(r) % 4096;  // keep records short so many fit
    if (off + kRecordHeaderSize + len > j.size()) break;
    put_field<rh::kPayloadLength>(r, uint32_t(len));
    put_field<rh::kSalt>(r, salt);
    put_field<rh::kLsn>(r, off);
    seal_record(std::span(r, kRecordHeaderSize + len));
    uint64_t next = off + record_span(len);
    if (get_field<rh::kType>(r) == uint8_t(RecordType::kCommit)) next = align_up(next, kBlockSize);
    off = next;
  }
  return j;
}

}  // namespace h5j::fuzz
