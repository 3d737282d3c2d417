#include "format.h"

#include <chrono>
#include <cstring>

#include "coding.h"
#include "crc32c.h"

namespace h5j {

void encode_header(const JournalHeader& h, std::span<std::byte, kHeaderSlotSize> out) {
  assert(h.target_name.size() <= kMaxTargetName);
  std::byte* p = out.data();
  std::memset(p, 0, kHeaderSlotSize);
  std::memcpy(p, kMagic, 8);
  put_u32(p + 8, kFormatVersion);
  put_u32(p + 12, kHeaderSlotSize);
  put_u64(p + 16, h.generation);
  put_u32(p + 24, h.salt);
  put_u32(p + 28, h.block_size);
  std::memcpy(p + 32, h.uuid.data(), 16);
  put_u64(p + 48, h.first_txn);
  put_u64(p + 56, h.created_ns);
  put_u64(p + 64, h.base_size);
  put_u16(p + 84, uint16_t(h.target_name.size()));
  std::memcpy(p + 86, h.target_name.data(), h.target_name.size());
  assert(h.fingerprint.size() <= kFingerprintWindows);
  put_u16(p + 486, uint16_t(h.fingerprint.size()));
  for (size_t i = 0; i < h.fingerprint.size(); ++i) put_u16(p + 488 + 2 * i, h.fingerprint[i]);
  seal_header_slot(out);
}

Result<JournalHeader> decode_header(std::span<const std::byte, kHeaderSlotSize> in) {
  const std::byte* p = in.data();
  auto bad = [](const std::string& what) { return Status(Code::kCorrupt, "journal header: " + what); };
  if (std::memcmp(p, kMagic, 8) != 0) return bad("bad magic (not an h5journal journal)");
  if (unmask_crc(get_u32(p + 508)) != crc32c(p, 508)) return bad("checksum mismatch");
  if (get_u32(p + 8) < kOldestFormatVersion || get_u32(p + 8) > kFormatVersion)
    return bad("unsupported format version " + std::to_string(get_u32(p + 8)));
  if (get_u32(p + 12) != kHeaderSlotSize) return bad("bad slot size");
  JournalHeader h;
  h.version = get_u32(p + 8);
  h.generation = get_u64(p + 16);
  h.salt = get_u32(p + 24);
  h.block_size = get_u32(p + 28);
  std::memcpy(h.uuid.data(), p + 32, 16);
  h.first_txn = get_u64(p + 48);
  h.created_ns = get_u64(p + 56);
  h.base_size = get_u64(p + 64);
  size_t name_len = get_u16(p + 84);
  if (h.generation == 0) return bad("generation 0");
  if (h.block_size != kBlockSize) return bad("unsupported block size");
  if (name_len > kMaxTargetName) return bad("target name too long");
  h.target_name.assign(reinterpret_cast<const char*>(p + 86), name_len);
  if (h.version >= 5) {
    size_t windows = get_u16(p + 486);
    if (windows > kFingerprintWindows) return bad("too many fingerprint windows");
    for (size_t i = 0; i < windows; ++i) h.fingerprint.push_back(get_u16(p + 488 + 2 * i));
  }
  return h;
}

void encode_record_header(const RecordHeader& h, std::span<std::byte, kRecordHeaderSize> out) {
  std::byte* p = out.data();
  put_u32(p, h.masked_crc);
  p[4] = std::byte(h.type);
  p[5] = std::byte(0);
  put_u16(p + 6, 0);
  put_u32(p + 8, h.payload_len);
  put_u32(p + 12, h.salt);
  put_u64(p + 16, h.lsn);
  put_u64(p + 24, h.txn);
}

RecordHeader decode_record_header(std::span<const std::byte, kRecordHeaderSize> in) {
  const std::byte* p = in.data();
  RecordHeader h;
  h.masked_crc = get_u32(p);
  h.type = RecordType(uint8_t(p[4]));
  h.payload_len = get_u32(p + 8);
  h.salt = get_u32(p + 12);
  h.lsn = get_u64(p + 16);
  h.txn = get_u64(p + 24);
  return h;
}

bool is_known_type(uint8_t type) { return type >= uint8_t(RecordType::kBegin) && type <= uint8_t(RecordType::kPlaced); }

const char* record_type_name(RecordType t) {
  switch (t) {
    case RecordType::kBegin: return "BEGIN";
    case RecordType::kWrite: return "WRITE";
    case RecordType::kCommit: return "COMMIT";
    case RecordType::kComment: return "COMMENT";
    case RecordType::kZero: return "ZERO";
    case RecordType::kData: return "DATA";
    case RecordType::kPlaced: return "PLACED";
  }
  return "UNKNOWN";
}

void encode_write_payload_header(const WritePayloadHeader& w, std::span<std::byte, kWritePayloadHeader> out) {
  put_u64(out.data(), w.address);
  put_u64(out.data() + 8, w.length);
  put_u32(out.data() + 16, w.tag);
  put_u32(out.data() + 20, 0);
}

WritePayloadHeader decode_write_payload_header(std::span<const std::byte, kWritePayloadHeader> in) {
  return {get_u64(in.data()), get_u64(in.data() + 8), get_u32(in.data() + 16)};
}

void encode_data(const DataPayload& d, std::span<std::byte, kDataPayloadSize> out) {
  std::byte* p = out.data();
  put_u64(p, d.pattern.addr);
  put_u64(p + 8, d.pattern.run_len);
  put_u64(p + 16, d.log_offset);
  put_u32(p + 24, d.masked_crc);
  put_u32(p + 28, d.pattern.count1);
  put_u64(p + 32, d.pattern.stride1);
  put_u32(p + 40, d.pattern.count2);
  put_u32(p + 44, d.log);
  put_u64(p + 48, d.pattern.stride2);
}

DataPayload decode_data(std::span<const std::byte> in) {
  const std::byte* p = in.data();
  DataPayload d{RawPattern::contiguous(get_u64(p), get_u64(p + 8)), get_u64(p + 16), get_u32(p + 24)};
  if (in.size() < kDataPayloadSize) return d;  // version 2: one run
  d.pattern.count1 = get_u32(p + 28);
  d.pattern.stride1 = get_u64(p + 32);
  d.pattern.count2 = get_u32(p + 40);
  d.log = get_u32(p + 44);
  d.pattern.stride2 = get_u64(p + 48);
  return d;
}

void encode_begin(const BeginPayload& b, std::span<std::byte, kBeginPayloadSize> out) { put_u64(out.data(), b.time_ns); }

BeginPayload decode_begin(std::span<const std::byte, kBeginPayloadSize> in) { return {get_u64(in.data())}; }

void encode_zero(const ZeroPayload& z, std::span<std::byte, kZeroPayloadSize> out) {
  put_u64(out.data(), z.address);
  put_u64(out.data() + 8, z.length);
}

ZeroPayload decode_zero(std::span<const std::byte, kZeroPayloadSize> in) {
  return {get_u64(in.data()), get_u64(in.data() + 8)};
}

void encode_commit(const CommitPayload& c, std::span<std::byte, kCommitPayloadSize> out) {
  put_u64(out.data(), c.logical_size);
  put_u64(out.data() + 8, c.record_count);
  put_u64(out.data() + 16, c.begin_lsn);
  put_u64(out.data() + 24, c.time_ns);
  put_u64(out.data() + 32, c.file_size);
}

CommitPayload decode_commit(std::span<const std::byte> in) {
  assert(in.size() == kCommitPayloadSize || in.size() == kCommitPayloadSizeV4);
  CommitPayload c{get_u64(in.data()), get_u64(in.data() + 8), get_u64(in.data() + 16), get_u64(in.data() + 24)};
  if (in.size() == kCommitPayloadSize) c.file_size = get_u64(in.data() + 32);
  return c;
}

uint64_t fingerprint_window(uint64_t size, unsigned windows, unsigned i) {
  assert(i < windows && windows <= fingerprint_windows(size));
  uint64_t last = size - kFingerprintWindowSize;  // where the last window starts
  uint64_t at = windows == 1 ? 0 : last / (windows - 1) * i;
  return at & ~uint64_t(7);
}

uint16_t window_fingerprint(std::span<const std::byte> window) {
  return uint16_t(crc32c(window.data(), window.size()) & 0xffff);
}

uint32_t record_crc(std::span<const std::byte, kRecordHeaderSize> header, std::span<const std::byte> payload_head,
                    std::span<const std::span<const std::byte>> payload_rest) {
  uint32_t crc = crc32c(header.data() + 4, kRecordHeaderSize - 4);
  crc = crc32c(payload_head.data(), payload_head.size(), crc);
  for (auto piece : payload_rest) crc = crc32c(piece.data(), piece.size(), crc);
  return mask_crc(crc);
}

void seal_header_slot(std::span<std::byte, kHeaderSlotSize> slot) {
  put_u32(slot.data() + 508, mask_crc(crc32c(slot.data(), 508)));
}

void seal_record(std::span<std::byte> record) {
  auto header = record.first<kRecordHeaderSize>();
  uint32_t len = decode_record_header(header).payload_len;
  assert(record.size() >= kRecordHeaderSize + len);
  put_u32(record.data(), record_crc(header, record.subspan(kRecordHeaderSize, len)));
}

std::string uuid_hex(const std::array<uint8_t, 16>& uuid) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t b : uuid) s += {d[b >> 4], d[b & 15]};
  return s;
}

std::string encode_binding(const Binding& b) {
  std::string v(kBindingFixedSize, '\0');
  auto* p = reinterpret_cast<std::byte*>(v.data());
  std::memcpy(p, b.uuid.data(), 16);
  put_u64(p + 16, b.generation);
  return v + b.journal_path;
}

std::optional<Binding> decode_binding(std::string_view value) {
  if (value.size() < kBindingFixedSize) return std::nullopt;
  const auto* p = reinterpret_cast<const std::byte*>(value.data());
  Binding b;
  std::memcpy(b.uuid.data(), p, 16);
  b.generation = get_u64(p + 16);
  b.journal_path = std::string(value.substr(kBindingFixedSize));
  return b;
}

uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count());
}

}  // namespace h5j
