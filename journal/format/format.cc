#include "format.h"

#include <chrono>
#include <cstring>

#include "coding.h"
#include "crc32c.h"

namespace h5j {

void encode_header(const JournalHeader& h, std::span<std::byte, kHeaderSlotSize> out) {
  namespace slot = header_slot;
  assert(h.target_name.size() <= kMaxTargetName);
  assert(h.fingerprint.size() <= kFingerprintSamples);
  std::byte* p = out.data();
  std::memset(p, 0, kHeaderSlotSize);
  std::memcpy(p + slot::kMagic.at, kMagic, slot::kMagic.len);
  put_field<slot::kVersion>(p, kFormatVersion);
  put_field<slot::kSlotSize>(p, kHeaderSlotSize);
  put_field<slot::kGeneration>(p, h.generation);
  put_field<slot::kSalt>(p, h.salt);
  put_field<slot::kBlockSize>(p, h.block_size);
  std::memcpy(p + slot::kUuid.at, h.uuid.data(), slot::kUuid.len);
  put_field<slot::kFirstTxn>(p, h.first_txn);
  put_field<slot::kCreated>(p, h.created_ns);
  put_field<slot::kBaseSize>(p, h.base_size);
  put_field<slot::kNameLength>(p, uint16_t(h.target_name.size()));
  std::memcpy(p + slot::kName.at, h.target_name.data(), h.target_name.size());
  put_field<slot::kSamples>(p, uint16_t(h.fingerprint.size()));
  for (size_t i = 0; i < h.fingerprint.size(); ++i) put_u16(p + slot::kFingerprint.at + 2 * i, h.fingerprint[i]);
  seal_header_slot(out);
}

Result<JournalHeader> decode_header(std::span<const std::byte, kHeaderSlotSize> in) {
  namespace slot = header_slot;
  const std::byte* p = in.data();
  auto bad = [](const std::string& what) { return Status(Code::kCorrupt, "journal header: " + what); };
  if (std::memcmp(p + slot::kMagic.at, kMagic, slot::kMagic.len) != 0) return bad("bad magic (not an h5journal journal)");
  if (unmask_crc(get_field<slot::kCrc>(p)) != crc32c(p, slot::kCrc.at)) return bad("checksum mismatch");
  JournalHeader h;
  h.version = get_field<slot::kVersion>(p);
  if (h.version < kOldestFormatVersion || h.version > kFormatVersion)
    return bad("unsupported format version " + std::to_string(h.version));
  if (get_field<slot::kSlotSize>(p) != kHeaderSlotSize) return bad("bad slot size");
  h.generation = get_field<slot::kGeneration>(p);
  h.salt = get_field<slot::kSalt>(p);
  h.block_size = get_field<slot::kBlockSize>(p);
  std::memcpy(h.uuid.data(), p + slot::kUuid.at, slot::kUuid.len);
  h.first_txn = get_field<slot::kFirstTxn>(p);
  h.created_ns = get_field<slot::kCreated>(p);
  h.base_size = get_field<slot::kBaseSize>(p);
  size_t name_len = get_field<slot::kNameLength>(p);
  if (h.generation == 0) return bad("generation 0");
  if (h.block_size != kBlockSize && h.block_size != kUnalignedCommits) return bad("unsupported block size");
  if (name_len > kMaxTargetName) return bad("target name too long");
  h.target_name.assign(reinterpret_cast<const char*>(p + slot::kName.at), name_len);
  if (h.version >= 5) {
    size_t samples = get_field<slot::kSamples>(p);
    if (samples > kFingerprintSamples) return bad("too many fingerprint samples");
    for (size_t i = 0; i < samples; ++i) h.fingerprint.push_back(get_u16(p + slot::kFingerprint.at + 2 * i));
  }
  return h;
}

void encode_record_header(const RecordHeader& h, std::span<std::byte, kRecordHeaderSize> out) {
  using namespace record_header;
  std::byte* p = out.data();
  put_field<kCrc>(p, h.masked_crc);
  put_field<kType>(p, uint8_t(h.type));
  put_field<kFlags>(p, uint8_t(0));
  put_field<kReserved>(p, uint16_t(0));
  put_field<kPayloadLength>(p, h.payload_len);
  put_field<kSalt>(p, h.salt);
  put_field<kLsn>(p, h.lsn);
  put_field<kTxn>(p, h.txn);
}

RecordHeader decode_record_header(std::span<const std::byte, kRecordHeaderSize> in) {
  using namespace record_header;
  const std::byte* p = in.data();
  RecordHeader h;
  h.masked_crc = get_field<kCrc>(p);
  h.type = RecordType(get_field<kType>(p));
  h.payload_len = get_field<kPayloadLength>(p);
  h.salt = get_field<kSalt>(p);
  h.lsn = get_field<kLsn>(p);
  h.txn = get_field<kTxn>(p);
  return h;
}

bool is_known_type(uint8_t type) { return type >= uint8_t(RecordType::kBegin) && type <= uint8_t(RecordType::kInPlace); }

const char* record_type_name(RecordType t) {
  switch (t) {
    case RecordType::kBegin: return "BEGIN";
    case RecordType::kWrite: return "WRITE";
    case RecordType::kCommit: return "COMMIT";
    case RecordType::kComment: return "COMMENT";
    case RecordType::kZero: return "ZERO";
    case RecordType::kData: return "DATA";
    case RecordType::kPlaced: return "PLACED";
    case RecordType::kInPlace: return "INPLACE";
  }
  return "UNKNOWN";
}

void encode_write_payload_header(const WritePayloadHeader& w, std::span<std::byte, kWritePayloadHeader> out) {
  using namespace write_payload;
  put_field<kAddress>(out.data(), w.address);
  put_field<kLength>(out.data(), w.length);
  put_field<kTag>(out.data(), w.tag);
  put_field<kReserved>(out.data(), uint32_t(0));
}

WritePayloadHeader decode_write_payload_header(std::span<const std::byte, kWritePayloadHeader> in) {
  using namespace write_payload;
  return {get_field<kAddress>(in.data()), get_field<kLength>(in.data()), get_field<kTag>(in.data())};
}

void encode_data(const DataPayload& d, std::span<std::byte, kDataPayloadSize> out) {
  using namespace data_payload;
  std::byte* p = out.data();
  put_field<kAddress>(p, d.pattern.addr);
  put_field<kRunLength>(p, d.pattern.run_len);
  put_field<kLogOffset>(p, d.log_offset);
  put_field<kCrc>(p, d.masked_crc);
  put_field<kCount1>(p, d.pattern.count1);
  put_field<kStride1>(p, d.pattern.stride1);
  put_field<kCount2>(p, d.pattern.count2);
  put_field<kLog>(p, d.log);
  put_field<kStride2>(p, d.pattern.stride2);
}

DataPayload decode_data(std::span<const std::byte> in) {
  using namespace data_payload;
  const std::byte* p = in.data();
  DataPayload d{RawPattern::contiguous(get_field<kAddress>(p), get_field<kRunLength>(p)), get_field<kLogOffset>(p),
                get_field<kCrc>(p)};
  if (in.size() < kDataPayloadSize) return d;  // version 2: one run
  d.pattern.count1 = get_field<kCount1>(p);
  d.pattern.stride1 = get_field<kStride1>(p);
  d.pattern.count2 = get_field<kCount2>(p);
  d.log = get_field<kLog>(p);
  d.pattern.stride2 = get_field<kStride2>(p);
  return d;
}

void encode_begin(const BeginPayload& b, std::span<std::byte, kBeginPayloadSize> out) {
  put_field<begin_payload::kTime>(out.data(), b.time_ns);
}

BeginPayload decode_begin(std::span<const std::byte, kBeginPayloadSize> in) {
  return {get_field<begin_payload::kTime>(in.data())};
}

void encode_zero(const ZeroPayload& z, std::span<std::byte, kZeroPayloadSize> out) {
  put_field<range_payload::kAddress>(out.data(), z.address);
  put_field<range_payload::kLength>(out.data(), z.length);
}

ZeroPayload decode_zero(std::span<const std::byte, kZeroPayloadSize> in) {
  return {get_field<range_payload::kAddress>(in.data()), get_field<range_payload::kLength>(in.data())};
}

void encode_in_place(const InPlacePayload& p, std::span<std::byte, kInPlacePayloadSize> out) {
  using namespace in_place_payload;
  put_field<kAddress>(out.data(), p.address);
  put_field<kLength>(out.data(), p.length);
  put_field<kCrc>(out.data(), p.masked_crc);
  put_field<kReserved>(out.data(), uint32_t(0));
}

InPlacePayload decode_in_place(std::span<const std::byte, kInPlacePayloadSize> in) {
  using namespace in_place_payload;
  return {get_field<kAddress>(in.data()), get_field<kLength>(in.data()), get_field<kCrc>(in.data())};
}

void encode_commit(const CommitPayload& c, std::span<std::byte, kCommitPayloadSize> out) {
  using namespace commit_payload;
  std::byte* p = out.data();
  put_field<kLogicalSize>(p, c.logical_size);
  put_field<kRecordCount>(p, c.record_count);
  put_field<kBeginLsn>(p, c.begin_lsn);
  put_field<kTime>(p, c.time_ns);
  put_field<kFileSize>(p, c.file_size);
  put_field<kDurableTxn>(p, c.durable_txn);
}

size_t commit_payload_size(uint32_t version) {
  return version >= 7 ? kCommitPayloadSize : version >= 5 ? kCommitPayloadSizeV6 : kCommitPayloadSizeV4;
}

CommitPayload decode_commit(std::span<const std::byte> in) {
  using namespace commit_payload;
  assert(in.size() == kCommitPayloadSize || in.size() == kCommitPayloadSizeV6 || in.size() == kCommitPayloadSizeV4);
  const std::byte* p = in.data();
  CommitPayload c{get_field<kLogicalSize>(p), get_field<kRecordCount>(p), get_field<kBeginLsn>(p), get_field<kTime>(p)};
  if (in.size() >= kCommitPayloadSizeV6) c.file_size = get_field<kFileSize>(p);
  if (in.size() >= kCommitPayloadSize) c.durable_txn = get_field<kDurableTxn>(p);
  return c;
}

uint64_t fingerprint_sample_at(uint64_t size, unsigned samples, unsigned i) {
  assert(i < samples && samples <= fingerprint_samples(size));
  uint64_t last = size - kFingerprintSampleSize;  // where the last sample starts
  uint64_t at = samples == 1 ? 0 : last / (samples - 1) * i;
  return at & ~uint64_t(7);
}

uint16_t sample_fingerprint(std::span<const std::byte> sample) {
  return uint16_t(crc32c(sample.data(), sample.size()) & 0xffff);
}

uint32_t record_crc(std::span<const std::byte, kRecordHeaderSize> header, std::span<const std::byte> payload_head,
                    std::span<const std::span<const std::byte>> payload_rest) {
  uint32_t crc = crc32c(header.data() + record_header::kCrc.end(), kRecordHeaderSize - record_header::kCrc.end());
  crc = crc32c(payload_head.data(), payload_head.size(), crc);
  for (auto piece : payload_rest) crc = crc32c(piece.data(), piece.size(), crc);
  return mask_crc(crc);
}

void seal_header_slot(std::span<std::byte, kHeaderSlotSize> slot) {
  put_field<header_slot::kCrc>(slot.data(), mask_crc(crc32c(slot.data(), header_slot::kCrc.at)));
}

void seal_record(std::span<std::byte> record) {
  auto header = record.first<kRecordHeaderSize>();
  uint32_t len = decode_record_header(header).payload_len;
  assert(record.size() >= kRecordHeaderSize + len);
  put_field<record_header::kCrc>(record.data(), record_crc(header, record.subspan(kRecordHeaderSize, len)));
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
  std::memcpy(p + binding_value::kUuid.at, b.uuid.data(), binding_value::kUuid.len);
  put_field<binding_value::kGeneration>(p, b.generation);
  return v + b.journal_path;
}

std::optional<Binding> decode_binding(std::string_view value) {
  if (value.size() < kBindingFixedSize) return std::nullopt;
  const auto* p = reinterpret_cast<const std::byte*>(value.data());
  Binding b;
  std::memcpy(b.uuid.data(), p + binding_value::kUuid.at, binding_value::kUuid.len);
  b.generation = get_field<binding_value::kGeneration>(p);
  b.journal_path = std::string(value.substr(kBindingFixedSize));
  return b;
}

std::string encode_applying(const JournalHeader& h, uint64_t durable_txn) {
  std::string v(kApplyingValueSize, '\0');
  auto* p = reinterpret_cast<std::byte*>(v.data());
  std::memcpy(p + applying_value::kUuid.at, h.uuid.data(), applying_value::kUuid.len);
  put_field<applying_value::kGeneration>(p, h.generation);
  put_field<applying_value::kDurableTxn>(p, durable_txn);
  return v;
}

uint64_t applying_durable_txn(std::string_view value, const JournalHeader& h) {
  if (value.size() != kApplyingValueSize) return 0;
  const auto* p = reinterpret_cast<const std::byte*>(value.data());
  if (std::memcmp(p + applying_value::kUuid.at, h.uuid.data(), applying_value::kUuid.len) != 0 ||
      get_field<applying_value::kGeneration>(p) != h.generation)
    return 0;
  return get_field<applying_value::kDurableTxn>(p);
}

uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count());
}

}  // namespace h5j
