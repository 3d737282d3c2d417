// Where writes go (write_routing.cc): the write-ahead rule's protected end,
// and writes in place into space declared unwritten.
#include <doctest/doctest.h>

#include <vector>

#include "engine_test_util.h"
#include "journaled_file.h"
#include "test_util.h"

using namespace h5j;
using h5j::test::TempDir;
using h5j::test::FileInDir;
using h5j::test::options;
using h5j::test::read_all;
using h5j::test::crash_after_two_commits;

TEST_CASE_FIXTURE(FileInDir, "above the protected end, a short write is journaled and a long one goes in place") {
  opts.inplace_min_bytes = 4096;
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  REQUIRE((*f)->write(0, std::vector<std::byte>(4095, std::byte(1)), 0));     // short: journaled
  CHECK(test::file_size(path) == 0);
  REQUIRE((*f)->write(8192, std::vector<std::byte>(4096, std::byte(2)), 0));  // long: in place
  CHECK(test::file_size(path) == 8192 + 4096);
  REQUIRE((*f)->commit());
  std::vector<std::byte> back(4095);
  REQUIRE((*f)->read(0, back));
  CHECK(back == std::vector<std::byte>(4095, std::byte(1)));
  f = Status(Code::kIoError, "crashed");
  auto r = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(r);
  REQUIRE((*r)->close());
  auto bytes = test::read_file(path);
  REQUIRE(bytes.size() == 8192 + 4096);
  CHECK(bytes[0] == std::byte(1));
  CHECK(bytes[4094] == std::byte(1));
  CHECK(bytes[4095] == std::byte(0));
  CHECK(bytes[8192] == std::byte(2));
}

TEST_CASE_FIXTURE(FileInDir, "a write in place into space declared unwritten after a checkpoint recovers") {
  opts.checkpoint_bytes = 256 << 10;
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  REQUIRE((*f)->set_size(8 << 20));  // HDF5 allocates 8 MiB, writes 1 MiB of it
  REQUIRE((*f)->write_raw(0, std::vector<std::byte>(1 << 20, std::byte(1)), 0));
  REQUIRE((*f)->commit());
  REQUIRE((*f)->write(0, std::vector<std::byte>(300 << 10, std::byte(2)), 0));  // journaled: a checkpoint is due
  REQUIRE((*f)->commit());  // declares [1 MiB, 8 MiB) unwritten, then checkpoints
  CHECK((*f)->stats().checkpoints == 1);
  REQUIRE((*f)->write(0, std::vector<std::byte>(100, std::byte(4)), 0));
  REQUIRE((*f)->commit());  // declares it again, in the new generation
  std::vector<std::byte> part(1 << 20, std::byte(3));
  for (uint64_t at = 1 << 20; at < (8u << 20); at += 1 << 20) REQUIRE((*f)->write_raw(at, part, 0));
  REQUIRE((*f)->commit());
  f.value().reset();  // a crash
  auto recovered = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE_MESSAGE(recovered, recovered.status().message());
  std::vector<std::byte> back(1 << 20);
  REQUIRE((*recovered)->read(5 << 20, back));
  CHECK(back == part);
}

// --- live readers (live_readers.h) ----------------------------------------------
