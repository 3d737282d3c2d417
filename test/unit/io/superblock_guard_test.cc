// SuperblockGuardFile: the guard on disk, byte for byte, and HDF5's bytes
// through it.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "posix_file.h"
#include "superblock_guard.h"
#include "test_util.h"

using namespace h5j;
using h5j::test::TempDir;

namespace {

// A version 0 superblock's first 24 bytes, as HDF5 writes them.
std::vector<std::byte> hdf5_head(uint8_t version) {
  const uint8_t b[24] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n', version, 0, 0, 0, 0, 8, 8, 0,
                         4,    0,   16,  0,   0,    0,    0,    0};
  std::vector<std::byte> out(sizeof b);
  for (size_t i = 0; i < sizeof b; ++i) out[i] = std::byte(b[i]);
  return out;
}

std::unique_ptr<SuperblockGuardFile> open_guarded(const std::string& path, OpenMode mode) {
  auto f = posix_filesystem().open(path, mode, IoEngine::kSync);
  REQUIRE(f);
  return std::make_unique<SuperblockGuardFile>(std::move(*f));
}

std::vector<std::byte> read_through(File& f, uint64_t offset, size_t n) {
  std::vector<std::byte> out(n);
  auto got = f.read_at(offset, out);
  REQUIRE(got);
  out.resize(*got);
  return out;
}

}  // namespace

TEST_CASE("a guarded superblock: 0x80 on disk, HDF5's version through the file") {
  TempDir dir;
  std::string path = dir.path("f.h5");
  auto f = open_guarded(path, OpenMode::kCreateTruncate);
  REQUIRE(f->guard());
  REQUIRE(f->write_at(0, hdf5_head(2)));
  auto disk = test::read_file(path);
  CHECK(disk[8] == std::byte(0x82));
  CHECK(is_guarded_head(disk, /*log_form=*/false));
  CHECK(!is_guarded_head(disk, /*log_form=*/true));
  CHECK(read_through(*f, 0, 24) == hdf5_head(2));
  CHECK(read_through(*f, 8, 1) == std::vector<std::byte>{std::byte(2)});  // a read of byte 8 alone
  auto head = hdf5_head(2);
  CHECK(read_through(*f, 9, 4) == std::vector<std::byte>(head.begin() + 9, head.begin() + 13));

  // A write of byte 8 alone is guarded too.
  REQUIRE(f->write_at(8, std::vector<std::byte>{std::byte(3)}));
  CHECK(test::read_file(path)[8] == std::byte(0x83));

  REQUIRE(f->guard(/*log_form=*/true));
  CHECK(test::read_file(path)[8] == std::byte(0xC3));
  CHECK(is_guarded_head(test::read_file(path), /*log_form=*/true));
  CHECK(read_through(*f, 0, 24)[8] == std::byte(3));

  REQUIRE(f->unguard());
  CHECK(test::read_file(path)[8] == std::byte(3));
  REQUIRE(f->write_at(0, hdf5_head(0)));  // and later writes leave it
  CHECK(test::read_file(path) == hdf5_head(0));
}

TEST_CASE("guard() on a file that holds a superblock guards it in place; on an empty file, at its first write") {
  TempDir dir;
  std::string path = dir.path("f.h5");
  test::write_file(path, hdf5_head(0));
  auto f = open_guarded(path, OpenMode::kReadWrite);
  REQUIRE(f->guard());
  CHECK(test::read_file(path)[8] == std::byte(0x80));
  CHECK(read_through(*f, 0, 24) == hdf5_head(0));

  std::string empty = dir.path("e.h5");
  auto e = open_guarded(empty, OpenMode::kCreateTruncate);
  REQUIRE(e->guard());
  CHECK(test::file_size(empty) == 0);
  REQUIRE(e->write_at(0, hdf5_head(0)));
  CHECK(test::read_file(empty)[8] == std::byte(0x80));
}

TEST_CASE("a file that does not start with HDF5's signature is never changed, nor read changed") {
  TempDir dir;
  std::string path = dir.path("u.h5");
  std::vector<std::byte> user_block(512, std::byte(0xAB));  // a user block: byte 8 is the user's
  test::write_file(path, user_block);
  auto f = open_guarded(path, OpenMode::kReadWrite);
  REQUIRE(f->guard());
  REQUIRE(f->write_at(4, std::vector<std::byte>(8, std::byte(0xF0))));
  auto disk = test::read_file(path);
  CHECK(disk[8] == std::byte(0xF0));
  CHECK(read_through(*f, 0, 16)[8] == std::byte(0xF0));
  CHECK(read_through(*f, 8, 1)[0] == std::byte(0xF0));
  REQUIRE(f->unguard());
  CHECK(test::read_file(path) == disk);
}

// A user block of 4 KiB puts the superblock at 4096 (superblock_guard.h):
// its version byte is guarded there, and byte 8, the user's, is left alone.
TEST_CASE("a superblock after a user block is guarded at its own version byte") {
  TempDir dir;
  std::string path = dir.path("u.h5");
  std::vector<std::byte> file(4096, std::byte(0xAB));  // byte 8 has the guard bits set, and is the user's
  auto head = hdf5_head(2);
  file.insert(file.end(), head.begin(), head.end());
  test::write_file(path, file);
  auto f = open_guarded(path, OpenMode::kReadWrite);
  REQUIRE(f->guard());
  auto disk = test::read_file(path);
  CHECK(disk[4096 + 8] == std::byte(0x82));
  CHECK(disk[8] == std::byte(0xAB));
  CHECK(read_through(*f, 0, 4096 + 24) == file);  // HDF5's bytes, and the user's
  CHECK(read_through(*f, 4096 + 8, 1) == std::vector<std::byte>{std::byte(2)});
  REQUIRE(f->write_at(4096, hdf5_head(3)));
  CHECK(test::read_file(path)[4096 + 8] == std::byte(0x83));
  REQUIRE(f->unguard());
  CHECK(test::read_file(path)[4096 + 8] == std::byte(3));
  CHECK(test::read_file(path)[8] == std::byte(0xAB));
}

// The driver tells the guard where HDF5 put the superblock (its base
// address).  Raw data written before the superblock reaches the file may
// hold HDF5's signature at another candidate (a file image kept in a
// dataset): its bytes are never changed.
TEST_CASE("told where the superblock is, the guard leaves a signature in raw data alone") {
  TempDir dir;
  std::string path = dir.path("e.h5");
  auto f = open_guarded(path, OpenMode::kCreateTruncate);
  f->superblock_is_at(4096);
  REQUIRE(f->guard());
  auto raw = hdf5_head(1);  // at 8192: a candidate, above the superblock
  REQUIRE(f->write_at(8192, raw));
  CHECK(test::read_file(path)[8192 + 8] == std::byte(1));
  REQUIRE(f->write_at(4096, hdf5_head(0)));
  auto disk = test::read_file(path);
  CHECK(disk[4096 + 8] == std::byte(0x80));
  CHECK(disk[8192 + 8] == std::byte(1));
  CHECK(read_through(*f, 8192, 24) == raw);
}

// A file created empty holds its signature back until its first commit
// (superblock_guard.h); with a user block, where the superblock is.
TEST_CASE("a held signature moves to the superblock after a user block") {
  TempDir dir;
  std::string path = dir.path("h.h5");
  auto f = open_guarded(path, OpenMode::kCreateTruncate);
  f->hold_signature();
  f->superblock_is_at(4096);
  auto head = hdf5_head(2);
  REQUIRE(f->write_at(4096, head));
  auto disk = test::read_file(path);
  REQUIRE(disk.size() == 4096 + 24);
  CHECK(std::all_of(disk.begin() + 4096, disk.begin() + 4096 + 9, [](std::byte b) { return b == std::byte(0); }));
  CHECK(std::equal(disk.begin() + 4096 + 9, disk.end(), head.begin() + 9));
  CHECK(read_through(*f, 4096, 24) == head);  // HDF5 reads what it wrote
  REQUIRE(f->guard());
  REQUIRE(f->release_signature());
  disk = test::read_file(path);
  CHECK(is_guarded_head(std::span(disk).subspan(4096), /*log_form=*/false));
  CHECK(read_through(*f, 4096, 24) == head);
}
