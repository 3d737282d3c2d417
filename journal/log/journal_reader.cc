#include "journal_reader.h"

#include <algorithm>
#include <cstring>

#include "aligned_buffer.h"
#include "coding.h"
#include "crc32c.h"

namespace h5j {

const char* stream_end_name(StreamEnd e) {
  switch (e) {
    case StreamEnd::kEndOfFile: return "end of file";
    case StreamEnd::kZeroes: return "zero-filled tail";
    case StreamEnd::kStale: return "record of an older generation";
    case StreamEnd::kTorn: return "torn record at the end of the file";
    case StreamEnd::kBadChecksum: return "record checksum mismatch";
    case StreamEnd::kBadRecord: return "malformed record";
    case StreamEnd::kBadSequence: return "record out of transaction order";
    case StreamEnd::kDataMismatch: return "data log bytes that fail their CRC";
    case StreamEnd::kInPlaceMissing: return "a last commit whose bytes in the file never reached the disk (never acknowledged)";
  }
  return "unknown";
}

std::string JournalReader::end_detail() const {
  // A journal that ends inside its header region has no records at all.
  if (end_ == StreamEnd::kEndOfFile && offset_ > file_size_)
    return "end of file at offset " + std::to_string(file_size_) + ", before the first record's place at " +
           std::to_string(kFirstRecordOffset);
  return std::string(stream_end_name(end_)) + " at offset " + std::to_string(offset_);
}

bool clean_end(StreamEnd e) {
  return e == StreamEnd::kEndOfFile || e == StreamEnd::kZeroes || e == StreamEnd::kStale ||
         e == StreamEnd::kInPlaceMissing;
}

Result<std::optional<uint64_t>> JournalReader::resync(uint64_t from, bool begin_only) {
  // Candidates are screened on their header (salt, LSN, type) read in large
  // pieces; only those are validated in full.
  uint64_t pos = align_up(std::max(from, kFirstRecordOffset), 8);
  if (pos + kRecordHeaderSize > file_size_) {
    seek(file_size_);
    return std::optional<uint64_t>();
  }
  const size_t kPiece = std::min<uint64_t>(1 << 20, file_size_ - pos);
  auto buffer = file_.allocate_buffer(kPiece + kRecordHeaderSize, Pages::kSystem);
  if (!buffer) return buffer.status();
  while (pos + kRecordHeaderSize <= file_size_) {
    size_t n = std::min<uint64_t>(kPiece + kRecordHeaderSize, file_size_ - pos);
    H5J_RETURN_IF_ERROR(read_exact(file_, pos, std::span(buffer->data(), n)));
    for (size_t i = 0; i + kRecordHeaderSize <= n && i < kPiece; i += 8) {
      auto h = decode_record_header(std::span<const std::byte, kRecordHeaderSize>(buffer->data() + i, kRecordHeaderSize));
      if (h.salt != header_.salt || h.lsn != pos + i || !is_known_type(uint8_t(h.type))) continue;
      if (begin_only && h.type != RecordType::kBegin) continue;
      seek(pos + i);
      auto r = next();
      if (!r) return r.status();
      if (r->has_value()) {
        seek(pos + i);
        return std::optional<uint64_t>(pos + i);
      }
    }
    pos += kPiece;
  }
  seek(file_size_);
  return std::optional<uint64_t>();
}

Result<std::unique_ptr<JournalReader>> JournalReader::open(File& file) {
  auto size = file.size();
  if (!size) return size.status();
  std::optional<JournalHeader> best;
  std::string why = "journal " + file.path() + " is shorter than its header";
  bool any_written = false;
  for (uint64_t slot_offset : kHeaderSlotOffset) {
    alignas(8) std::byte slot[kHeaderSlotSize] = {};
    auto n = file.read_at(slot_offset, slot);
    if (!n) return n.status();
    if (std::any_of(slot, slot + kHeaderSlotSize, [](std::byte b) { return b != std::byte(0); }))
      any_written = true;
    else
      continue;
    auto h = decode_header(std::span<const std::byte, kHeaderSlotSize>(slot));
    if (!h) {
      why = file.path() + ": " + h.status().message();
      continue;
    }
    if (!best || h->generation > best->generation) best = std::move(*h);
  }
  if (!best && !any_written)
    return Status(Code::kMissing, "journal " + file.path() + " has no header (never written)");
  if (!best) return Status(Code::kCorrupt, why);
  return std::unique_ptr<JournalReader>(new JournalReader(file, std::move(*best), *size));
}

// The CRC covers header bytes [4, 32) and the whole payload, read in pieces.
Result<bool> JournalReader::payload_crc_matches(const RecordHeader& h, const std::byte* hdr) {
  uint32_t crc = crc32c(hdr + 4, kRecordHeaderSize - 4);
  uint64_t pos = h.lsn + kRecordHeaderSize, done = 0;
  while (done < h.payload_len) {
    auto piece = piece_.read(file_, pos + done, size_t(std::min<uint64_t>(h.payload_len - done, kPiece)), file_size_);
    if (!piece) return piece.status();
    crc = crc32c(piece->data(), piece->size(), crc);
    if (done < kHead) std::memcpy(head_.data() + done, piece->data(), std::min<uint64_t>(piece->size(), kHead - done));
    done += piece->size();
  }
  return unmask_crc(h.masked_crc) == crc;
}

Status JournalReader::refresh() {
  auto size = file_.size();
  if (!size) return size.status();
  file_size_ = *size;
  piece_.drop();  // the file may hold new bytes where the piece holds old ones
  return Status::ok();
}

// After a COMMIT (format.h, FILE LAYOUT): the record right after it, or,
// where nothing of this generation is there, a BEGIN at the next multiple of
// the block size, where a sync sealed the COMMIT's block (from version 8).
// Only a BEGIN: in a packed stream the bytes at that boundary may be any
// later record, and one found there after a torn one would skip it.
Result<std::optional<Record>> JournalReader::next() {
  auto r = read_record();
  const bool nothing_here = r && !r->has_value() && (end_ == StreamEnd::kZeroes || end_ == StreamEnd::kStale);
  const uint64_t here = offset_, sealed = sealed_block_start(offset_, header_.block_size, header_.version);
  if (!nothing_here || !after_commit_ || sealed == here) {
    if (r && r->has_value()) after_commit_ = (*r)->header.type == RecordType::kCommit;
    return r;
  }
  const StreamEnd why = end_;
  offset_ = sealed;
  auto begin = read_record();
  if (!begin) return begin.status();
  if (begin->has_value() && (*begin)->header.type == RecordType::kBegin) {
    after_commit_ = false;
    return begin;
  }
  offset_ = here;
  return stop(why);
}

Result<std::optional<Record>> JournalReader::read_record() {
  if (offset_ + kRecordHeaderSize > file_size_) return stop(StreamEnd::kEndOfFile);
  alignas(8) std::byte hdr[kRecordHeaderSize];
  auto bytes = piece_.read(file_, offset_, kRecordHeaderSize, file_size_);
  if (!bytes) return bytes.status();
  std::memcpy(hdr, bytes->data(), kRecordHeaderSize);
  if (std::all_of(hdr, hdr + kRecordHeaderSize, [](std::byte b) { return b == std::byte(0); }))
    return stop(StreamEnd::kZeroes);
  Record rec;
  rec.header = decode_record_header(std::span<const std::byte, kRecordHeaderSize>(hdr));
  const RecordHeader& h = rec.header;
  if (h.salt != header_.salt || h.lsn != offset_) return stop(StreamEnd::kStale);
  if (!is_known_type(uint8_t(h.type)) || h.payload_len > kMaxPayload) return stop(StreamEnd::kBadRecord);
  if (offset_ + kRecordHeaderSize + h.payload_len > file_size_) return stop(StreamEnd::kTorn);
  auto crc_ok = payload_crc_matches(h, hdr);
  if (!crc_ok) return crc_ok.status();
  if (!*crc_ok) return stop(StreamEnd::kBadChecksum);

  uint64_t payload = offset_ + kRecordHeaderSize;
  const std::byte* head = head_.data();  // the payload's first bytes, from the CRC pass
  switch (h.type) {
    case RecordType::kBegin:
      if (h.payload_len != kBeginPayloadSize) return stop(StreamEnd::kBadRecord);
      break;
    case RecordType::kWrite: {
      if (h.payload_len < kWritePayloadHeader) return stop(StreamEnd::kBadRecord);
      rec.write = decode_write_payload_header(std::span<const std::byte, kWritePayloadHeader>(head, kWritePayloadHeader));
      if (rec.write.length != h.payload_len - kWritePayloadHeader) return stop(StreamEnd::kBadRecord);
      if (rec.write.address + rec.write.length < rec.write.address) return stop(StreamEnd::kBadRecord);
      rec.data_offset = payload + kWritePayloadHeader;
      break;
    }
    case RecordType::kCommit: {
      size_t size = commit_payload_size(header_.version);
      if (h.payload_len != size) return stop(StreamEnd::kBadRecord);
      rec.commit = decode_commit(std::span<const std::byte>(head, size));
      // Before version 7 every transaction before this one was durable
      // whole when this COMMIT was written (a commit of one flush began
      // only after the one before it returned).
      if (header_.version < 7) rec.commit.durable_txn = h.txn - 1;
      break;
    }
    case RecordType::kZero:
    case RecordType::kPlaced: {  // the same payload; PLACED since version 4
      if (h.payload_len != kZeroPayloadSize) return stop(StreamEnd::kBadRecord);
      if (h.type == RecordType::kPlaced && header_.version < 4) return stop(StreamEnd::kBadRecord);
      ZeroPayload z = decode_zero(std::span<const std::byte, kZeroPayloadSize>(head, kZeroPayloadSize));
      rec.write = WritePayloadHeader{z.address, z.length, 0};
      if (rec.write.address + rec.write.length < rec.write.address) return stop(StreamEnd::kBadRecord);
      break;
    }
    case RecordType::kInPlace: {
      if (h.payload_len != kInPlacePayloadSize || header_.version < 6) return stop(StreamEnd::kBadRecord);
      InPlacePayload p = decode_in_place(std::span<const std::byte, kInPlacePayloadSize>(head, kInPlacePayloadSize));
      if (p.length == 0 || p.address + p.length < p.address) return stop(StreamEnd::kBadRecord);
      rec.write = WritePayloadHeader{p.address, p.length, 0};
      rec.data_crc = p.masked_crc;
      break;
    }
    case RecordType::kData: {
      // An index record (its bytes in the data log), or a data log's own
      // record (its bytes follow, and its offset field says so).
      size_t fixed = header_.version >= 3 ? kDataPayloadSize : kDataPayloadSizeV2;
      if (h.payload_len < fixed) return stop(StreamEnd::kBadRecord);
      DataPayload d = decode_data(std::span<const std::byte>(head, fixed));
      bool bytes_here = h.payload_len > fixed;
      if (!d.pattern.valid() || d.log_offset >= kMaxDataLogOffset) return stop(StreamEnd::kBadRecord);
      if (bytes_here && (d.pattern.bytes() != h.payload_len - fixed || d.log_offset != payload + fixed))
        return stop(StreamEnd::kBadRecord);
      rec.pattern = d.pattern;
      rec.write = WritePayloadHeader{d.pattern.addr, d.pattern.bytes(), 0};
      rec.data_offset = d.log_offset;
      rec.data_crc = d.masked_crc;
      rec.data_log = d.log;
      break;
    }
    case RecordType::kComment: {
      rec.comment.assign(reinterpret_cast<const char*>(head), std::min<size_t>(h.payload_len, kHead));
      break;
    }
  }
  rec.next_offset = offset_ = next_record_offset(offset_, h, header_.block_size, header_.version);
  return std::optional<Record>(std::move(rec));
}

}  // namespace h5j
