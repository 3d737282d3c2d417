// Test tool: recomputes the CRC of every record of a journal in place (and of
// its header slots), so a test can plant wrong bytes that still validate:
// the case only h5recover --verify can catch.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "coding.h"
#include "crc32c.h"
#include "format.h"

using namespace h5j;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: journal_reseal JOURNAL\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> j(raw.size());
  if (!raw.empty()) std::memcpy(j.data(), raw.data(), raw.size());
  if (j.size() < kFirstRecordOffset) return 1;
  uint32_t salt = 0;
  for (uint64_t slot : kHeaderSlotOffset) {
    std::byte* p = j.data() + slot;
    if (std::memcmp(p, kMagic, 8) != 0) continue;
    put_u32(p + 508, mask_crc(crc32c(p, 508)));
    salt = get_u32(p + 24);  // the later slot wins, as generations alternate
  }
  int sealed = 0;
  for (uint64_t off = kFirstRecordOffset; off + kRecordHeaderSize <= j.size();) {
    std::byte* r = j.data() + off;
    uint32_t len = get_u32(r + 8);
    if (get_u32(r + 12) != salt || get_u64(r + 16) != off || off + kRecordHeaderSize + len > j.size()) break;
    put_u32(r, mask_crc(crc32c(r + 4, kRecordHeaderSize - 4 + len)));
    ++sealed;
    uint64_t next = off + record_span(len);
    off = uint8_t(r[4]) == uint8_t(RecordType::kCommit) ? align_up(next, kBlockSize) : next;
  }
  std::ofstream out(argv[1], std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(j.data()), std::streamsize(j.size()));
  std::printf("resealed %d records\n", sealed);
  return 0;
}
