#include "journal_listing.h"

#include <algorithm>
#include <cinttypes>
#include <ctime>

#include "journal_reader.h"
#include "posix_file.h"

namespace h5j {
namespace {

std::string utc(uint64_t ns) {
  std::time_t t = std::time_t(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void list_slots(File& file, std::FILE* out, uint64_t in_use_generation) {
  for (int i = 0; i < 2; ++i) {
    alignas(8) std::byte slot[kHeaderSlotSize] = {};
    auto n = file.read_at(kHeaderSlotOffset[i], slot);
    bool zero = n && std::all_of(slot, slot + kHeaderSlotSize, [](std::byte b) { return b == std::byte(0); });
    std::fprintf(out, "slot %d at %" PRIu64 ": ", i, kHeaderSlotOffset[i]);
    if (!n || *n < kHeaderSlotSize || zero) {
      std::fprintf(out, "empty\n");
      continue;
    }
    auto h = decode_header(slot);
    if (!h) std::fprintf(out, "invalid (%s)\n", h.status().message().c_str());
    else
      std::fprintf(out, "generation %" PRIu64 "%s\n", h->generation,
                   h->generation == in_use_generation ? " in use" : "");
  }
}

std::string field(uint64_t v) { return std::to_string(v); }

void list_record(const Record& r, std::FILE* out) {
  std::string address = "-", length = "-", bytes_at = "-", note;
  switch (r.header.type) {
    case RecordType::kWrite:
      address = field(r.write.address), length = field(r.write.length), bytes_at = field(r.data_offset);
      break;
    case RecordType::kZero:
    case RecordType::kPlaced: address = field(r.write.address), length = field(r.write.length); break;
    case RecordType::kData:
      address = field(r.pattern.addr), length = field(r.pattern.bytes());
      bytes_at = field(r.data_log) + ":" + field(r.data_offset);
      note = "end " + field(r.pattern.end()) + ", runs of " + field(r.pattern.run_len) + " x " +
             field(r.pattern.count1) + " (stride " + field(r.pattern.stride1) + ") x " + field(r.pattern.count2) +
             " (stride " + field(r.pattern.stride2) + ")";
      break;
    case RecordType::kInPlace: {
      address = field(r.write.address), length = field(r.write.length);
      char crc[16];
      std::snprintf(crc, sizeof crc, "%08x", r.data_crc);
      note = "in the file, masked CRC32C " + std::string(crc);
      break;
    }
    case RecordType::kCommit:
      note = "size " + field(r.commit.logical_size) + ", " + field(r.commit.record_count) + " records, BEGIN at " +
             field(r.commit.begin_lsn);
      if (r.commit.file_size != 0) note += ", file " + field(r.commit.file_size) + " bytes on disk";
      note += ", durable through transaction " + field(r.commit.durable_txn);
      break;
    case RecordType::kComment: note = "\"" + r.comment + "\""; break;
    case RecordType::kBegin: break;
  }
  std::fprintf(out, "%" PRIu64 " %s %" PRIu64 " %s %s %s ok%s%s\n", r.header.lsn, record_type_name(r.header.type),
               r.header.txn, address.c_str(), length.c_str(), bytes_at.c_str(), note.empty() ? "" : " ",
               note.c_str());
}

}  // namespace

Status list_journal(const std::string& path, bool data_log, std::FILE* out) {
  auto file = posix_filesystem().open(path, OpenMode::kReadOnly, IoEngine::kSync);
  if (!file) return file.status();
  auto size = (*file)->size();
  if (!size) return size.status();
  auto reader = JournalReader::open(**file);
  std::fprintf(out, "%s %s: %" PRIu64 " bytes", data_log ? "data log" : "journal", path.c_str(), *size);
  if (!reader) {
    std::fprintf(out, "\n");
    list_slots(**file, out, 0);
    return reader.status();
  }
  const JournalHeader& h = (*reader)->header();
  std::fprintf(out, ", format version %u\n", h.version);
  list_slots(**file, out, h.generation);
  std::fprintf(out,
               "header: generation %" PRIu64 ", uuid %s, salt 0x%08x, first transaction %" PRIu64
               ", created %s, base size %" PRIu64 ", target \"%s\"\n",
               h.generation, uuid_hex(h.uuid).c_str(), h.salt, h.first_txn, utc(h.created_ns).c_str(), h.base_size,
               h.target_name.c_str());
  if (h.version >= 5) std::fprintf(out, "fingerprint: %zu sample(s)\n", h.fingerprint.size());
  std::fprintf(out, "commits aligned to %u bytes%s\n", h.block_size,
               h.block_size == kUnalignedCommits      ? " (written with durable=false)"
               : h.version >= kPackedCommitsVersion ? ", or packed until a sync seals them (durable=100ms)"
                                                      : "");
  std::fprintf(out, "offset type txn address length bytes_at crc note\n");
  uint64_t committed = 0, first = 0, last = 0, after_commit = 0, records_end = kFirstRecordOffset;
  auto on_record = [&](const Record& r) {
    list_record(r, out);
    records_end = r.header.lsn + record_span(r.header.payload_len);
    ++after_commit;
    if (r.header.type != RecordType::kCommit) return;
    if (committed++ == 0) first = r.header.txn;
    last = r.header.txn;
    after_commit = 0;
  };
  H5J_RETURN_IF_ERROR(for_each_salvaged_record(**reader, on_record, [&](uint64_t at, StreamEnd why) {
    std::fprintf(out, "%" PRIu64 " DAMAGED - - - - bad %s\n", at, stream_end_name(why));
  }));
  // Past a COMMIT the reader looks for the next record on the next block,
  // which may lie past the end of the file.
  std::fprintf(out, "end: %s at offset %" PRIu64 "\n", stream_end_name((*reader)->end()),
               std::min((*reader)->end_offset(), *size));
  if (data_log) {
    // A data log's records belong to the transactions whose DATA records index them.
    std::fprintf(out, "summary: %" PRIu64 " record(s), records end at %" PRIu64 "\n", after_commit, records_end);
    return Status::ok();
  }
  std::fprintf(out, "summary: %" PRIu64 " committed transaction(s)", committed);
  if (committed > 0) std::fprintf(out, " [%" PRIu64 "..%" PRIu64 "]", first, last);
  std::fprintf(out, ", %" PRIu64 " record(s) after the last commit, records end at %" PRIu64 "\n", after_commit,
               records_end);
  return Status::ok();
}

}  // namespace h5j
