// advise_huge_pages (huge_pages.h): the part of a buffer it advises; and
// the pages an AlignedBuffer asks for.
#include <doctest/doctest.h>
#include <sys/mman.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "aligned_buffer.h"
#include "huge_pages.h"

using namespace h5j;

namespace {

// The mapping of /proc/self/smaps that holds `start`: its end and whether
// its VmFlags hold "hg" (madvise(MADV_HUGEPAGE)) or "nh"
// (MADV_NOHUGEPAGE), or end 0 if no mapping holds it.
struct Mapping {
  uintptr_t end = 0;
  bool huge_advised = false;
  bool small_advised = false;
};
Mapping mapping_at(uintptr_t start) {
  std::ifstream smaps("/proc/self/smaps");
  Mapping found;
  bool in = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t from = 0, to = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> from >> dash >> to && dash == '-' && line.find(':') > line.find(' ')) {
      in = from <= start && start < to;
      if (in) found.end = to;
    } else if (in && line.rfind("VmFlags:", 0) == 0) {
      found.huge_advised = line.find(" hg") != std::string::npos;
      found.small_advised = line.find(" nh") != std::string::npos;
    }
  }
  return found;
}

}  // namespace

// Only the 2 MiB-aligned part of a buffer is advised (huge_pages.h): the
// kernel splits the mapping there, so smaps shows the advised part as a
// mapping of its own, flagged, between two that are not.
TEST_CASE("advise_huge_pages advises the buffer's 2 MiB-aligned part, and nothing around it") {
  const size_t len = 4 * kHugePage;
  void* map = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(map != MAP_FAILED);
  auto at = reinterpret_cast<uintptr_t>(map);
  uintptr_t buffer = (at + kHugePage - 1) / kHugePage * kHugePage - 4096;  // starts a page before a huge page
  if (buffer < at) buffer += kHugePage;
  REQUIRE(buffer + 2 * kHugePage <= at + len);
  advise_huge_pages(reinterpret_cast<void*>(buffer), kHugePage + 8192);  // ends a page past the next one
  const uintptr_t from = buffer + 4096, to = from + kHugePage;
  Mapping advised = mapping_at(from);
  CHECK(advised.end == to);
  CHECK(advised.huge_advised);
  CHECK_FALSE(mapping_at(to).huge_advised);
  CHECK_FALSE(mapping_at(at).huge_advised);
  advise_huge_pages(reinterpret_cast<void*>(to + 4096), kHugePage - 8192);  // no aligned part: no advice
  CHECK_FALSE(mapping_at(to).huge_advised);
  ::munmap(map, len);
}

// A buffer that fills whole asks for huge pages, and starts on one so that
// the advice covers all of it; the journal's ring, mostly untouched, asks
// never to have them, so that a system whose transparent huge pages are
// "always" does not zero 2 MiB for a commit's few hundred bytes.
TEST_CASE("an AlignedBuffer's pages are the ones it asks for") {
  AlignedBuffer huge(2 * kHugePage, real_syscalls(), Pages::kHuge);
  REQUIRE(huge.valid());
  const auto h = reinterpret_cast<uintptr_t>(huge.data());
  CHECK(h % kHugePage == 0);
  CHECK(mapping_at(h).huge_advised);
  CHECK(mapping_at(h + 2 * kHugePage - 1).huge_advised);

  AlignedBuffer small(2 * kHugePage, real_syscalls(), Pages::kSmall);
  REQUIRE(small.valid());
  const auto s = reinterpret_cast<uintptr_t>(small.data());
  CHECK(s % 4096 == 0);
  CHECK(mapping_at(s).small_advised);
  CHECK(mapping_at(s + 2 * kHugePage - 1).small_advised);
  CHECK_FALSE(mapping_at(s).huge_advised);

  AlignedBuffer plain(2 * kHugePage, real_syscalls());
  REQUIRE(plain.valid());
  const auto p = reinterpret_cast<uintptr_t>(plain.data());
  CHECK(p % 4096 == 0);
  CHECK_FALSE(mapping_at(p).huge_advised);
  CHECK_FALSE(mapping_at(p).small_advised);
}
