// The closing thread (closing_thread.h): files handed to it close on its
// thread, every one by its destructor; past kMaxWaiting, and in a forked
// child, the caller closes its own.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "closing_thread.h"
#include "forwarding_file.h"
#include "posix_file.h"
#include "test_util.h"

using namespace h5j;
using h5j::test::TempDir;

namespace {

// Which threads closed the files, in order.  A gated file's close waits
// until the gate opens, so that a test can hold the thread inside it.
struct Closes {
  std::mutex mu;
  std::condition_variable cv;
  bool gate_open = false;
  bool gated_entered = false;
  std::vector<std::thread::id> by;
  // Returns once the closing thread is inside the gated file's close.
  void wait_for_gated_close() {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return gated_entered; });
  }
  void open_gate() {
    {
      std::lock_guard lock(mu);
      gate_open = true;
    }
    cv.notify_all();
  }
};

class SeenFile : public ForwardingFile {
 public:
  SeenFile(std::unique_ptr<File> inner, Closes& closes, bool gated)
      : ForwardingFile(std::move(inner)), closes_(closes), gated_(gated) {}
  ~SeenFile() override {
    std::unique_lock lock(closes_.mu);
    if (gated_) {
      closes_.gated_entered = true;
      closes_.cv.notify_all();
      closes_.cv.wait(lock, [this] { return closes_.gate_open; });
    }
    closes_.by.push_back(std::this_thread::get_id());
  }

 private:
  Closes& closes_;
  bool gated_;
};

std::unique_ptr<File> seen_file(const std::string& path, Closes& closes, bool gated = false) {
  auto f = posix_filesystem().open(path, OpenMode::kCreate, IoEngine::kSync);
  REQUIRE(f);
  return std::make_unique<SeenFile>(std::move(*f), closes, gated);
}

}  // namespace

TEST_CASE("a closing thread closes what it is given on its own thread, and all of it before it is destroyed") {
  TempDir dir;
  Closes closes;
  {
    ClosingThread thread;
    for (int i = 0; i < 3; ++i) thread.close_later(seen_file(dir.path("f" + std::to_string(i)), closes));
  }
  REQUIRE(closes.by.size() == 3);
  for (std::thread::id id : closes.by) CHECK(id != std::this_thread::get_id());
}

TEST_CASE("past kMaxWaiting files waiting, the caller closes its own") {
  TempDir dir;
  Closes closes;
  ClosingThread thread;
  thread.close_later(seen_file(dir.path("gated"), closes, /*gated=*/true));
  closes.wait_for_gated_close();
  for (size_t i = 0; i < ClosingThread::kMaxWaiting; ++i)
    thread.close_later(seen_file(dir.path("w" + std::to_string(i)), closes));
  {
    std::lock_guard lock(closes.mu);
    CHECK(closes.by.empty());  // all wait
  }
  thread.close_later(seen_file(dir.path("over"), closes));
  {
    std::lock_guard lock(closes.mu);
    CHECK(closes.by == std::vector<std::thread::id>{std::this_thread::get_id()});
  }
  closes.open_gate();
}

// The child inherits the parent's files waiting to close, and its thread
// inside a close; it must close none of them, and wait for no thread.
TEST_CASE("in a forked child a closing thread closes at once, and leaves the parent's files alone") {
  TempDir dir;
  Closes closes;
  ClosingThread thread;
  thread.close_later(seen_file(dir.path("gated"), closes, /*gated=*/true));
  closes.wait_for_gated_close();
  thread.close_later(seen_file(dir.path("waiting"), closes));
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    Closes mine;
    thread.close_later(seen_file(dir.path("child"), mine));
    int code = mine.by == std::vector<std::thread::id>{std::this_thread::get_id()} ? 0 : 1;
    thread.~ClosingThread();  // as the child's exit would
    if (!closes.by.empty()) code = 2;  // it closed a file of the parent's
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  closes.open_gate();
}
