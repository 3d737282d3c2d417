// The readers file (live_readers.h) between one writer and its readers, in
// one process (its locks are open-file-description locks, which tell the
// descriptors of one process apart): who is present, an expired snapshot,
// a checkpoint put off for a window, and a closed file.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "live_readers.h"
#include "posix_file.h"
#include "test_util.h"

using namespace h5j;
using namespace std::chrono_literals;
using h5j::test::TempDir;

namespace {

struct WriterAndPath {
  TempDir dir;
  std::string journal = dir.path("f.h5.jnl");
  std::unique_ptr<ReadersFile> writer;
  WriterAndPath() {
    auto w = ReadersFile::open(posix_filesystem(), journal);
    REQUIRE(w);
    writer = std::move(*w);
  }
  std::unique_ptr<ReaderRegistration> register_reader(std::chrono::milliseconds wait = 0ms) {
    auto r = ReaderRegistration::register_reader(posix_filesystem(), journal, wait);
    REQUIRE(r);
    return std::move(*r);
  }
};

// The real file system, counting the opens of one name.
struct OpensCounted : PosixFileSystem {
  std::string counted;
  int opens = 0;
  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode, IoEngine engine) override {
    if (path == counted) ++opens;
    return PosixFileSystem::open(path, mode, engine);
  }
};

// How many of this process's descriptors are open on `path`.
int descriptors_on(const std::string& path) {
  int n = 0;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    n += std::filesystem::read_symlink(fd.path(), error) == path;
  }
  return n;
}

}  // namespace

TEST_CASE_FIXTURE(WriterAndPath, "a reader is present while it holds its registration, and only then") {
  CHECK(writer->path() == readers_path_for(journal));
  CHECK_FALSE(writer->readers_present());
  auto reader = register_reader();
  REQUIRE(reader != nullptr);
  CHECK(reader->epoch() % 2 == 0);
  CHECK(writer->readers_present());
  CHECK(*reader->snapshot_holds(reader->epoch()));
  reader.reset();  // its descriptor, and the locks with it
  CHECK_FALSE(writer->readers_present());
}

TEST_CASE_FIXTURE(WriterAndPath, "a rewrite expires the snapshots open, for good, and readers after it get a new epoch") {
  auto reader = register_reader();
  uint64_t epoch = reader->epoch();
  REQUIRE(writer->begin_rewrite());
  CHECK_FALSE(*reader->unchanged_since(epoch));
  CHECK_FALSE(*reader->snapshot_holds(epoch));
  CHECK_FALSE(writer->readers_present());  // an expired snapshot holds nothing off
  REQUIRE(writer->end_rewrite());
  CHECK_FALSE(*reader->snapshot_holds(epoch));  // once gone, never back
  auto later = register_reader();
  CHECK(later->epoch() == epoch + 2);
  CHECK(*later->snapshot_holds(later->epoch()));
}

TEST_CASE_FIXTURE(WriterAndPath, "a checkpoint is put off for a reader, for one window, and not without readers") {
  CHECK_FALSE(*writer->put_off_checkpoint(10s));  // nobody to wait for
  REQUIRE(writer->begin_rewrite());
  REQUIRE(writer->end_rewrite());
  auto reader = register_reader();
  CHECK(*writer->put_off_checkpoint(100ms));
  CHECK(*writer->put_off_checkpoint(100ms));  // within the window
  std::this_thread::sleep_for(150ms);
  CHECK_FALSE(*writer->put_off_checkpoint(100ms));  // the window is over: the checkpoint goes ahead
  CHECK(writer->readers_present());                  // though the reader is still there
}

TEST_CASE_FIXTURE(WriterAndPath, "a reader waits a bounded time for a writer closing, which then reports how long") {
  auto reader = register_reader();
  bool told = false;
  auto waited = writer->wait_for_readers(30ms, [&] { told = true; });
  REQUIRE(waited);
  CHECK(told);
  CHECK(waited->readers);
  CHECK(waited->outlasted);
  CHECK(waited->waited >= 30ms);
  reader.reset();
  told = false;
  waited = writer->wait_for_readers(30ms, [&] { told = true; });
  CHECK_FALSE(told);
  CHECK_FALSE(waited->readers);
}

TEST_CASE_FIXTURE(WriterAndPath, "a closed readers file registers nobody: the file is read as a closed one") {
  REQUIRE(writer->close_for_readers());
  CHECK(register_reader() == nullptr);
  CHECK_FALSE(writer->readers_present());
}

// A checkpoint's hold, probe, mark and two headers, and a close's, each go
// through one open; between rewrites, a probe included, the writer holds
// no descriptor.
TEST_CASE("the writer opens the readers file once a rewrite, and holds it only until readers are let in") {
  TempDir dir;
  OpensCounted fs;
  fs.counted = readers_path_for(dir.path("f.h5.jnl"));
  auto writer = ReadersFile::open(fs, dir.path("f.h5.jnl"));
  REQUIRE(writer);
  CHECK(descriptors_on(fs.counted) == 0);
  CHECK_FALSE((*writer)->readers_present());  // a commit's question, between rewrites
  CHECK(descriptors_on(fs.counted) == 0);
  fs.opens = 0;
  CHECK_FALSE(*(*writer)->put_off_checkpoint(10s));
  REQUIRE((*writer)->begin_rewrite());
  CHECK(descriptors_on(fs.counted) == 1);
  REQUIRE((*writer)->end_rewrite());
  CHECK(fs.opens == 1);
  CHECK(descriptors_on(fs.counted) == 0);
  REQUIRE((*writer)->wait_for_readers(10ms, {}));
  REQUIRE((*writer)->begin_rewrite());
  REQUIRE((*writer)->close_for_readers());
  CHECK(fs.opens == 2);
  CHECK(descriptors_on(fs.counted) == 0);
}
