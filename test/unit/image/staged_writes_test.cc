// Staged writes (staged_writes.h): what is staged reads back at once, and
// placing writes exactly the staged runs below the limit, the gaps between
// them as GapFill says, and forgets them all.
#include <doctest/doctest.h>

#include <vector>

#include "posix_file.h"
#include "staged_writes.h"
#include "test_util.h"

using namespace h5j;
using h5j::test::TempDir;

namespace {

constexpr size_t kFileSize = 64 << 10;

// 10 runs of 100 bytes every 300 bytes from 1000, then 2000 bytes at 50000.
struct Staged {
  RawPattern strided{1000, 100, 10, 300, 1, 0};
  RawPattern beyond = RawPattern::contiguous(50000, 2000);
  std::vector<std::byte> strided_bytes = std::vector<std::byte>(1000, std::byte(3));
  std::vector<std::byte> beyond_bytes = std::vector<std::byte>(2000, std::byte(7));
  StagedWrites staged;

  Staged() {
    std::span<const std::byte> a[] = {strided_bytes};
    staged.add(strided, a);
    std::span<const std::byte> b[] = {beyond_bytes};
    staged.add(beyond, b);
  }
};

bool in_a_run(uint64_t at) { return at >= 1000 && at < 3800 && (at - 1000) % 300 < 100; }

}  // namespace

TEST_CASE_FIXTURE(Staged, "staged runs read back over the file's bytes before they are placed") {
  CHECK_FALSE(staged.empty());
  CHECK(staged.touches(1050, 1051));
  CHECK_FALSE(staged.touches(1100, 1300));  // a gap between runs
  CHECK(staged.touches(0, 1001));
  std::vector<std::byte> out(4000, std::byte(0xAA));
  REQUIRE(staged.lay_onto(0, out));
  for (uint64_t at = 0; at < out.size(); ++at)
    CHECK(out[at] == (in_a_run(at) ? std::byte(3) : std::byte(0xAA)));
}

TEST_CASE_FIXTURE(Staged, "placing writes the runs below the limit, leaves or refills the gaps, and forgets the rest") {
  for (GapFill gaps : {GapFill::kLeave, GapFill::kFromFile}) {
    TempDir dir;
    std::string path = dir.path("f.h5");
    test::write_file(path, std::vector<std::byte>(kFileSize, std::byte(0xAA)));
    auto file = posix_filesystem().open(path, OpenMode::kReadWrite, IoEngine::kSync);
    REQUIRE(file);
    Staged fresh;
    ApplyBuffers kept;
    REQUIRE(fresh.staged.place(**file, /*limit=*/40000, gaps, /*writeback=*/true, kept));
    CHECK(fresh.staged.empty());
    auto bytes = test::read_file(path);
    REQUIRE(bytes.size() == kFileSize);  // placing never sets the size
    for (uint64_t at = 0; at < kFileSize; ++at)
      if (bytes[at] != (in_a_run(at) ? std::byte(3) : std::byte(0xAA))) FAIL_CHECK("byte " << at);  // 50000 is past the limit
  }
}

TEST_CASE("staging is full at its bound of memory, and empty once placed") {
  TempDir dir;
  std::string path = dir.path("f.h5");
  auto file = posix_filesystem().open(path, OpenMode::kCreateTruncate, IoEngine::kSync);
  REQUIRE(file);
  StagedWrites staged;
  std::vector<std::byte> mib(1 << 20, std::byte(5));
  std::span<const std::byte> one[] = {mib};
  uint64_t at = 0;
  for (; !staged.full(); at += 2 << 20) staged.add(RawPattern::contiguous(at, mib.size()), one);
  CHECK(at == StagedWrites::kMaxBytes * 2);  // a MiB every 2 MiB
  ApplyBuffers kept;
  REQUIRE(staged.place(**file, UINT64_MAX, GapFill::kLeave, false, kept));
  CHECK(staged.empty());
  CHECK_FALSE(staged.full());
  std::vector<std::byte> back(mib.size());
  REQUIRE((*file)->read_at(at - (2 << 20), back));
  CHECK(back == mib);
}
