// A close's cost on the disk: the flushes and bytes of a job that writes a
// file and closes it, committing once (commit.cc, close_materialized).
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine_test_util.h"
#include "syncs_seen.h"

using namespace h5j;
using namespace h5j::test;

namespace {

// 8 KiB that start as an HDF5 file does, so that the commit holding them
// holds a superblock (first_superblock_committed), then 56 KiB of data.
std::vector<std::byte> hdf5_like_file() {
  std::vector<std::byte> bytes(64 << 10);
  const char signature[] = "\x89HDF\r\n\x1a\n";
  std::memcpy(bytes.data(), signature, 8);
  for (size_t i = 9; i < bytes.size(); ++i) bytes[i] = std::byte(i * 13 + 5);
  return bytes;
}

}  // namespace

TEST_CASE_FIXTURE(FileWithSyncsSeen, "a file created, written and closed: one commit, no checkpoint before the close, no zeros ahead") {
  const std::vector<std::byte> content = hdf5_like_file();
  {
    auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(f);
    REQUIRE((*f)->write(0, content, 0));
    REQUIRE((*f)->close());
  }
  // The commit: the journal's name, the binding with the file's bytes, the
  // COMMIT.  The close: its image, the binding's removal, the journal's.
  // A checkpoint before the close would add two flushes and rebind.
  CHECK(syncs.calls == std::vector<std::string>{"fsync directory", "fsync file", "fdatasync journal",
                                                "fdatasync file", "fsync file", "fsync directory"});
  // Its records, a block or two: no MiB of zeros for commits that never come.
  CHECK(syncs.bytes_written["journal"] < (64u << 10));
  std::ifstream in(path, std::ios::binary);
  std::vector<char> got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(got.size() == content.size());
  CHECK(std::memcmp(got.data(), content.data(), got.size()) == 0);
}
