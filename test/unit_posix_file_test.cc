// PosixFile's uncached writes (File::write_uncached_at): whole blocks go
// around the page cache where the filesystem takes O_DIRECT, through it
// where it does not, and reads see them either way.
#include <doctest/doctest.h>
#include <fcntl.h>

#include <cstring>
#include <vector>

#include "posix_file.h"
#include "test_util.h"

using namespace h5j;
using h5j::test::TempDir;

namespace {

bool has_direct(int fd) { return (::fcntl(fd, F_GETFL) & O_DIRECT) != 0; }

// Real calls, counting the writes made in O_DIRECT mode; optionally refusing
// them (EINVAL, as a filesystem that opens with O_DIRECT but wants another
// alignment does) or cutting the first one short inside a block.
class DirectWatchingSyscalls : public Syscalls {
 public:
  bool refuse = false;
  size_t first_short = 0;  // bytes the first direct write stops after; 0: whole
  int direct_writes = 0;

  ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) override {
    if (!has_direct(fd)) return Syscalls::pwrite(fd, buf, n, off);
    if (++direct_writes == 1 && first_short > 0) {
      // A short count that is not a whole block cannot be had from O_DIRECT
      // itself: write it through the cache, as a stand-in.
      int flags = ::fcntl(fd, F_GETFL);
      ::fcntl(fd, F_SETFL, flags & ~O_DIRECT);
      ssize_t done = Syscalls::pwrite(fd, buf, first_short, off);
      ::fcntl(fd, F_SETFL, flags);
      return done;
    }
    if (refuse) {
      errno = EINVAL;
      return -1;
    }
    return Syscalls::pwrite(fd, buf, n, off);
  }
};

struct Fixture {
  TempDir dir;
  DirectWatchingSyscalls sys;
  PosixFile file{dir.path("f"), UniqueFd(::open(dir.path("f").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)), sys};
  std::vector<std::byte> model = std::vector<std::byte>(32 << 10, std::byte(0xAA));

  Fixture() { REQUIRE(file.write_at(0, model)); }

  // Writes 12 KiB of `b` at 8 KiB, uncached, from aligned memory.
  void write_blocks(std::byte b) {
    auto buffer = file.allocate_buffer(12 << 10);
    REQUIRE(buffer);
    std::memset(buffer->data(), int(b), 12 << 10);
    REQUIRE(file.write_uncached_at(8 << 10, std::span<const std::byte>(buffer->data(), 12 << 10)));
    std::fill(model.begin() + (8 << 10), model.begin() + (20 << 10), b);
  }
  void check_reads_model() {
    std::vector<std::byte> got(model.size());
    auto n = file.read_at(0, got);
    REQUIRE(n);
    CHECK(*n == got.size());
    CHECK(got == model);
    CHECK_FALSE(has_direct(file.fd()));  // O_DIRECT was for the write alone
  }
};

}  // namespace

TEST_CASE("an uncached write goes around the page cache, and a read that cached the old bytes sees the new") {
  Fixture f;
  f.check_reads_model();  // the old bytes are in the page cache now
  f.write_blocks(std::byte(0x11));
  f.check_reads_model();
  // The test directory's filesystem takes O_DIRECT (ext4, tmpfs since Linux
  // 6.6); if it did not, this test would not be testing the direct path.
  CHECK(f.sys.direct_writes == 1);
}

TEST_CASE("a filesystem that refuses O_DIRECT writes gets them through the page cache, and is asked once") {
  Fixture f;
  f.sys.refuse = true;
  f.write_blocks(std::byte(0x22));
  f.write_blocks(std::byte(0x33));
  f.check_reads_model();
  CHECK(f.sys.direct_writes == 1);
}

TEST_CASE("an uncached write cut short inside a block is finished through the page cache") {
  Fixture f;
  f.sys.first_short = 5000;
  f.write_blocks(std::byte(0x44));
  f.check_reads_model();
  CHECK(f.sys.direct_writes == 1);
  REQUIRE(f.file.write_at(3, std::span<const std::byte>(f.model.data(), 100)));  // unaligned: the flag is gone
}
