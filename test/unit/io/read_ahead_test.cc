// ReadAhead (io/read_ahead.h): the bytes it serves are the file's, and its
// buffer grows only as its misses need, so a small file costs a small one.
#include <doctest/doctest.h>
#include <fcntl.h>

#include <cstring>
#include <random>
#include <vector>

#include "allocations_file.h"
#include "posix_file.h"
#include "read_ahead.h"
#include "test_util.h"

using namespace h5j;
using h5j::test::AllocationsFile;
using h5j::test::TempDir;

namespace {

struct WrittenFile {
  TempDir dir;
  std::vector<std::byte> bytes;
  AllocationsFile file;
  explicit WrittenFile(size_t size)
      : bytes(make_bytes(size)), file(dir.path("f"), open_written(dir.path("f"), bytes)) {}

  static std::vector<std::byte> make_bytes(size_t n) {
    std::vector<std::byte> v(n);
    std::mt19937 rng(7);
    for (auto& b : v) b = std::byte(rng());
    return v;
  }
  static UniqueFd open_written(const std::string& path, const std::vector<std::byte>& bytes) {
    test::write_file(path, bytes);
    return UniqueFd(::open(path.c_str(), O_RDWR));
  }
  // Reads [0, size) through `window` in steps of `step`, checking every byte.
  void read_all(ReadAhead& window, size_t step) {
    for (size_t off = 0; off < bytes.size(); off += step) {
      size_t n = std::min(step, bytes.size() - off);
      auto got = window.read(file, off, n, bytes.size());
      REQUIRE(got);
      REQUIRE(got->size() == n);
      REQUIRE(std::memcmp(got->data(), bytes.data() + off, n) == 0);
    }
  }
};

}  // namespace

TEST_CASE("read_ahead: a file smaller than the window takes the room of a first miss, not the window's") {
  WrittenFile f(6000);
  ReadAhead window(1 << 20, 16 << 10);
  f.read_all(window, 100);
  CHECK(f.file.asked == std::vector<size_t>{16 << 10});
}

TEST_CASE("read_ahead: the buffer doubles with the reads, up to the window's size") {
  WrittenFile f(3 << 20);
  ReadAhead window(1 << 20, 16 << 10);
  f.read_all(window, 4096);
  std::vector<size_t> doubling;
  for (size_t s = 16 << 10; s <= (1 << 20); s *= 2) doubling.push_back(s);
  CHECK(f.file.asked == doubling);
}

TEST_CASE("read_ahead: a window of one size allocates once, at its first miss") {
  WrittenFile f(300 << 10);
  ReadAhead window(64 << 10);
  CHECK(f.file.asked.empty());
  f.read_all(window, 1000);
  CHECK(f.file.asked == std::vector<size_t>{64 << 10});
}

TEST_CASE("read_ahead: after drop() the window reads the file again, in the room it has") {
  WrittenFile f(200 << 10);
  ReadAhead window(1 << 20, 16 << 10);
  f.read_all(window, 512);
  size_t allocations = f.file.asked.size();
  f.bytes[100] = std::byte(~uint8_t(f.bytes[100]));
  test::write_file(f.dir.path("f"), f.bytes);
  window.drop();
  f.read_all(window, 512);
  CHECK(f.file.asked.size() == allocations);
}

TEST_CASE("read_ahead: a refused buffer is an error, and the next read may succeed") {
  WrittenFile f(64 << 10);
  ReadAhead window(1 << 20, 16 << 10);
  f.file.refuse = true;
  auto got = window.read(f.file, 0, 10, f.bytes.size());
  REQUIRE(!got);
  CHECK(got.status().message().find("buffer allocation refused") != std::string::npos);
  f.file.refuse = false;
  f.read_all(window, 10);
}
