// Test tool: changes a journal on purpose, in ways the tests need.
//
//   journal_tamper reseal JOURNAL
//       recomputes the CRC of both header slots and of every record of the
//       current generation, so that bytes a test planted validate: the case
//       only h5recover --verify can catch.
//   journal_tamper set-generation JOURNAL G
//       rewrites every valid header slot with generation G (validly sealed).
//
// Everything about the bytes comes from format.h.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "format.h"

using namespace h5j;

namespace {

std::vector<std::byte> read_all(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(raw.size());
  if (!raw.empty()) std::memcpy(bytes.data(), raw.data(), raw.size());
  return bytes;
}

void write_all(const char* path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

std::span<std::byte, kHeaderSlotSize> slot(std::vector<std::byte>& j, int i) {
  return std::span<std::byte, kHeaderSlotSize>(j.data() + kHeaderSlotOffset[i], kHeaderSlotSize);
}

bool has_magic(std::span<const std::byte, kHeaderSlotSize> s) { return std::memcmp(s.data(), kMagic, 8) == 0; }

int reseal(std::vector<std::byte>& j) {
  std::optional<JournalHeader> newest;
  for (int i = 0; i < 2; ++i) {
    if (!has_magic(slot(j, i))) continue;
    seal_header_slot(slot(j, i));
    auto h = decode_header(slot(j, i));
    if (h && (!newest || h->generation > newest->generation)) newest = *h;
  }
  if (!newest) return 0;
  auto record_at = [&](uint64_t off) -> std::optional<RecordHeader> {
    if (off + kRecordHeaderSize > j.size()) return std::nullopt;
    RecordHeader h = decode_record_header(std::span<const std::byte, kRecordHeaderSize>(j.data() + off, kRecordHeaderSize));
    if (h.salt != newest->salt || h.lsn != off || off + kRecordHeaderSize + h.payload_len > j.size()) return std::nullopt;
    return h;
  };
  int sealed = 0;
  bool after_commit = false;
  for (uint64_t off = kFirstRecordOffset;;) {
    auto h = record_at(off);
    // Past a COMMIT whose block a sync sealed, a BEGIN (format.h, FILE LAYOUT).
    if (!h && after_commit) {
      h = record_at(off = sealed_block_start(off, newest->block_size, newest->version));
      if (h && h->type != RecordType::kBegin) h.reset();
    }
    if (!h) break;
    seal_record(std::span(j.data() + off, kRecordHeaderSize + h->payload_len));
    ++sealed;
    after_commit = h->type == RecordType::kCommit;
    off = next_record_offset(off, *h, newest->block_size, newest->version);
  }
  return sealed;
}

int set_generation(std::vector<std::byte>& j, uint64_t generation) {
  int changed = 0;
  for (int i = 0; i < 2; ++i) {
    auto h = decode_header(slot(j, i));
    if (!h) continue;
    h->generation = generation;
    encode_header(*h, slot(j, i));
    ++changed;
  }
  return changed;
}

}  // namespace

int main(int argc, char** argv) {
  std::string verb = argc >= 3 ? argv[1] : "";
  if (!((verb == "reseal" && argc == 3) || (verb == "set-generation" && argc == 4))) {
    std::fprintf(stderr, "usage: journal_tamper reseal JOURNAL | journal_tamper set-generation JOURNAL G\n");
    return 2;
  }
  std::vector<std::byte> j = read_all(argv[2]);
  if (j.size() < kFirstRecordOffset) {
    std::fprintf(stderr, "journal_tamper: %s is shorter than a journal's header region\n", argv[2]);
    return 1;
  }
  if (verb == "reseal") std::printf("resealed %d records\n", reseal(j));
  else std::printf("set the generation of %d header slot(s)\n", set_generation(j, std::stoull(argv[3])));
  write_all(argv[2], j);
  return 0;
}
