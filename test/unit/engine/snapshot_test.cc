// Live readers through the engine (snapshot.h, live_readers.h): a reader's
// snapshot across commits, checkpoints put off and expired, a close that
// waits.
#include <doctest/doctest.h>

#include <vector>
#include <thread>
#include <chrono>
#include <atomic>

#include "engine_test_util.h"
#include "journaled_file.h"
#include "test_util.h"

using namespace h5j;
using namespace h5j::test;

namespace {
std::byte first_byte(JournaledFile& f, Status* why = nullptr) {
  std::vector<std::byte> b(1);
  Status s = f.read(0, b);
  if (why != nullptr) *why = s;
  return s ? b[0] : std::byte(0xff);
}
}  // namespace

// A writer whose first commit put 200 KiB of 1s in place, new space, and a
// reader of that commit; then 100 KiB of 2s, journaled, bring a checkpoint
// due, which the writer puts off for the reader.
struct CheckpointPutOff : FileInDir {
  std::unique_ptr<JournaledFile> writer, reader;

  void start(std::chrono::milliseconds reader_wait) {
    opts.checkpoint_bytes = 64 << 10;
    opts.reader_wait = reader_wait;
    auto w = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(w);
    writer = std::move(*w);
    commit(200 << 10, 1);
    auto r = JournaledFile::open(path, Access::kReadOnly, opts);
    REQUIRE(r);
    reader = std::move(*r);
    CHECK(reader->report().live_snapshot);
    commit(100 << 10, 2);
    REQUIRE(writer->stats().checkpoints == 0);  // put off: a reader holds a snapshot
  }
  void commit(size_t bytes, int value) {
    REQUIRE(writer->write(0, std::vector<std::byte>(bytes, std::byte(value)), 0));
    REQUIRE(writer->commit());
  }
};

TEST_CASE_FIXTURE(CheckpointPutOff, "a reader's snapshot holds across commits and a put-off checkpoint, then expires") {
  start(std::chrono::milliseconds(300));
  CHECK(first_byte(*reader) == std::byte(1));
  std::this_thread::sleep_for(opts.reader_wait + std::chrono::milliseconds(50));
  commit(10, 3);
  CHECK(writer->stats().checkpoints == 1);  // no longer
  Status why;
  first_byte(*reader, &why);
  CHECK(why.code() == Code::kExpired);
  CHECK(why.message().find("is gone") != std::string::npos);
  // The reader cannot know the writer's reader_wait (300 ms here): it names
  // the default, and that a configuration may set another.
  CHECK(why.message().find("reader_wait (5000 ms unless its configuration sets another)") != std::string::npos);
  auto newer = JournaledFile::open(path, Access::kReadOnly, opts);
  REQUIRE(newer);
  CHECK(first_byte(**newer) == std::byte(3));
  REQUIRE((*newer)->close());
  // The expired reader, left open, gave its lock back with its snapshot: it
  // holds no later checkpoint off.
  commit(100 << 10, 4);
  CHECK(writer->stats().checkpoints == 2);
  first_byte(*reader, &why);
  CHECK(why.code() == Code::kExpired);
  REQUIRE(reader->close());
  // With no reader left, a due checkpoint is not put off.
  commit(100 << 10, 5);
  CHECK(writer->stats().checkpoints == 3);
  REQUIRE(writer->close());
}

// A session left open on the file, idle: its snapshot expired at the first
// checkpoint after its window, and it holds no later checkpoint off, though
// it never reads again to learn so (its generation's byte is not the one
// the writer asks about).
TEST_CASE_FIXTURE(CheckpointPutOff, "an idle reader whose snapshot expired holds off no later checkpoint") {
  start(std::chrono::milliseconds(200));  // a window for the reader, which stays idle
  std::this_thread::sleep_for(opts.reader_wait + std::chrono::milliseconds(50));
  commit(10, 3);
  REQUIRE(writer->stats().checkpoints == 1);  // the window is over: it expires
  for (int i = 2; i <= 4; ++i) {
    commit(100 << 10, 3 + i);
    CHECK(writer->stats().checkpoints == uint64_t(i));  // at once, not after a window
  }
  Status why;
  first_byte(*reader, &why);
  CHECK(why.code() == Code::kExpired);
  REQUIRE(reader->close());
  REQUIRE(writer->close());
}

TEST_CASE_FIXTURE(CheckpointPutOff, "while a checkpoint waits for a reader, a new reader waits for the checkpoint") {
  start(std::chrono::milliseconds(2000));
  std::atomic<bool> opened = false;
  std::unique_ptr<JournaledFile> newcomer;
  std::thread opening([&] {
    auto f = JournaledFile::open(path, Access::kReadOnly, opts);
    REQUIRE(f);
    newcomer = std::move(*f);
    opened = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(!opened);  // held off: its snapshot would expire at the checkpoint
  Status why;
  CHECK(first_byte(*reader, &why) == std::byte(1));  // the reader present is never cut off
  REQUIRE(reader->close());
  commit(10, 3);
  CHECK(writer->stats().checkpoints == 1);  // nobody left: it goes ahead, and lets the newcomer in
  opening.join();
  REQUIRE(newcomer);
  CHECK(first_byte(*newcomer, &why) == std::byte(3));
  commit(10, 4);
  CHECK(first_byte(*newcomer, &why) == std::byte(3));  // a snapshot of the new generation
  REQUIRE(newcomer->close());
  REQUIRE(writer->close());
}

// THE WRITER'S RULE for a writer that stops committing while it holds
// readers off: a reader waits out the window and reader_wait more, then
// registers late, and the writer's next commit opens a window for it.
TEST_CASE_FIXTURE(CheckpointPutOff, "a reader held off by an idle writer registers late, and gets a window of its own") {
  start(std::chrono::milliseconds(300));  // a window of 300 ms for the reader present
  auto asked = std::chrono::steady_clock::now();
  std::atomic<bool> opened = false;
  std::unique_ptr<JournaledFile> late;
  std::thread opening([&] {
    auto f = JournaledFile::open(path, Access::kReadOnly, opts);
    REQUIRE(f);
    late = std::move(*f);
    opened = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(450));
  CHECK(!opened);  // the window is over, but the writer has not committed since: it may yet
  opening.join();  // at the window's end plus reader_wait, it registers late
  CHECK(std::chrono::steady_clock::now() - asked >= std::chrono::milliseconds(550));
  REQUIRE(late);
  CHECK(first_byte(*late) == std::byte(2));
  commit(10, 3);
  CHECK(writer->stats().checkpoints == 0);  // a new window, for the late reader
  Status why;
  CHECK(first_byte(*late, &why) == std::byte(2));
  std::this_thread::sleep_for(opts.reader_wait + std::chrono::milliseconds(50));
  commit(10, 4);
  CHECK(writer->stats().checkpoints == 1);  // no reader registered late since: the window is not renewed
  first_byte(*late, &why);
  CHECK(why.code() == Code::kExpired);
  first_byte(*reader, &why);
  CHECK(why.code() == Code::kExpired);
  REQUIRE(late->close());
  REQUIRE(reader->close());
  REQUIRE(writer->close());
}

TEST_CASE_FIXTURE(FileInDir, "a close waits for a reader to finish, and a recovery expires one that does not") {
  opts.reader_wait = std::chrono::milliseconds(5000);
  auto writer = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(writer);
  REQUIRE((*writer)->write(0, std::vector<std::byte>(4096, std::byte(1)), 0));
  REQUIRE((*writer)->commit());
  REQUIRE((*writer)->write(0, std::vector<std::byte>(10, std::byte(2)), 0));
  auto reader = JournaledFile::open(path, Access::kReadOnly, opts);
  REQUIRE(reader);
  Status read_during_close;
  std::thread finishing([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    first_byte(**reader, &read_during_close);  // the close is waiting: the snapshot still holds
    REQUIRE((*reader)->close());
    reader.value().reset();
  });
  REQUIRE((*writer)->close());
  finishing.join();
  CHECK(read_during_close);
  // A crashed writer's file: its reader keeps its snapshot until a recovery,
  // which waits reader_wait for it, then goes ahead.
  crash_after_two_commits(path, opts, 5);
  auto crashed_reader = JournaledFile::open(path, Access::kReadOnly, opts);
  REQUIRE(crashed_reader);
  CHECK(first_byte(**crashed_reader) == std::byte(6));  // its last commit
  opts.reader_wait = std::chrono::milliseconds(100);
  auto recovering = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(recovering);
  CHECK((*recovering)->report().recovered);
  Status why;
  first_byte(**crashed_reader, &why);
  CHECK(why.code() == Code::kExpired);
  REQUIRE((*recovering)->close());
}
