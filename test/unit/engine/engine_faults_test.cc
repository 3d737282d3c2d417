// Errors are values and fail-stop: sweep the N-th write and the N-th sync to
// failure (ENOSPC, EIO) over a small workload, and check that the error names
// the problem, that nothing is accepted afterwards, and that every
// acknowledged commit survives reopening.
#include <doctest/doctest.h>

#include <random>

#include "engine_test_util.h"
#include "fault_file.h"

using namespace h5j;
using namespace h5j::test;

namespace {

JournalOptions faulty(const std::string& journal, FaultFileSystem& fs) {
  JournalOptions o;
  o.journal_path = journal;
  o.ring = RingOptions{2, 4096, true};
  o.checkpoint_bytes = 20000;  // checkpoints inside the sweep too
  o.inplace_min_bytes = 1500;  // writes are 1 to 3000 bytes: some in place, some journaled
  // No wait for the live reader: a wait is timed, and a checkpoint put off
  // for reader_wait would land on whichever commit the clock allowed.  The
  // sweep needs the same writes in the same order on every run, however
  // loaded the machine (a run with fewer writes would end the sweep early).
  o.reader_wait = std::chrono::milliseconds(0);
  o.fs = &fs;
  return o;
}

// Runs the workload until the first error.  Returns the number of fault
// points it passed (writes or syncs), and the model's acknowledged states.
struct Outcome {
  std::vector<std::byte> acked;     // state at the last acknowledged commit
  std::vector<std::byte> attempted; // state the failed commit tried to make durable
  bool failed = false;
  std::string error;
};

// A live reader beside the faulty writer (live_readers.h), on a file system
// without faults, opened at the writer's first commit: whatever fails on the
// writer's side, it reads that commit exactly, or learns its snapshot is gone.
struct LiveReader {
  std::unique_ptr<JournaledFile> handle;
  std::vector<std::byte> snapshot;

  void open(const std::string& path, JournalOptions o, const std::vector<std::byte>& committed) {
    o.fs = &posix_filesystem();
    auto f = JournaledFile::open(path, Access::kReadOnly, o);
    REQUIRE(f);
    handle = std::move(*f);
    snapshot = committed;
  }
  void check() {
    if (!handle) return;
    CHECK(handle->size() == snapshot.size());
    std::vector<std::byte> got(snapshot.size());
    Status s = handle->read(0, got);
    CHECK((s.code() == Code::kExpired || (s && got == snapshot)));
  }
};

Outcome workload(const std::string& path, const JournalOptions& o) {
  Outcome out;
  LiveReader reader;
  struct CheckAtEnd {
    LiveReader& r;
    ~CheckAtEnd() { r.check(); }
  } check_at_end{reader};
  std::vector<std::byte> current;
  std::mt19937 rng(3);
  auto f = JournaledFile::open(path, Access::kCreateTruncate, o);
  if (!f) {
    out.failed = true;
    out.error = f.status().message();
    return out;
  }
  out.attempted = out.acked;
  for (int step = 0; step < 12; ++step) {
    for (int i = 0; i < 6; ++i) {
      uint64_t addr = current.empty() ? 0 : rng() % (current.size() + 3000);
      std::vector<std::byte> data(rng() % 3000 + 1, std::byte(step * 7 + i + 1));
      Status s = (*f)->write(addr, data, 0);
      if (!s) {
        out.failed = true;
        out.error = s.message();
        CHECK(!(*f)->commit());  // fail-stop: the transaction is poisoned
        CHECK(!(*f)->write(0, data, 0));
        return out;
      }
      if (current.size() < addr + data.size()) current.resize(addr + data.size());
      std::copy(data.begin(), data.end(), current.begin() + ptrdiff_t(addr));
    }
    out.attempted = current;
    Status s = (*f)->commit();
    if (!s) {
      out.failed = true;
      out.error = s.message();
      CHECK(!(*f)->commit());
      CHECK(!(*f)->write(0, std::vector<std::byte>(1), 0));
      return out;
    }
    out.acked = current;
    if (step == 0) reader.open(path, o, out.acked);
  }
  Status s = (*f)->close();
  if (!s) {
    out.failed = true;
    out.error = s.message();
  }
  out.attempted = out.acked;
  return out;
}

void sweep(bool syncs, int err) {
  int injected_runs = 0, made_then_failed = 0, close_made_then_failed = 0;
  for (int n = 1; n < 400; ++n) {
    CAPTURE(n);
    TempDir dir;
    std::string path = dir.path("f.h5");
    auto plan = std::make_shared<FaultPlan>();
    (syncs ? plan->fail_sync_at : plan->fail_write_at) = n;
    plan->err = err;
    FaultFileSystem fs(plan);
    Outcome out = workload(path, faulty(path + ".jnl", fs));
    if (!plan->injected) {
      CHECK(!out.failed);
      break;  // the workload completed with no fault left to inject
    }
    ++injected_runs;
    if (!out.failed && err == ENOSPC) {
      // The fault fell on the zeros the writer writes ahead of the journal's
      // records: it takes them back and goes on.  Nothing may be lost.
      CHECK(out.acked == out.attempted);
      FaultFileSystem clean_fs(std::make_shared<FaultPlan>());
      auto f = JournaledFile::open(path, Access::kReadOnly, faulty(path + ".jnl", clean_fs));
      REQUIRE(f);
      CHECK(read_all(**f) == out.acked);
      continue;
    }
    REQUIRE(out.failed);
    CHECK(out.error.find(err == ENOSPC ? "No space left" : "Input/output error") != std::string::npos);
    CHECK(out.error.find("f.h5") != std::string::npos);
    // Reopen without faults: the last acknowledged commit, or the one whose
    // acknowledgement failed (its bytes may have reached the disk).
    FaultFileSystem clean_fs(std::make_shared<FaultPlan>());
    JournalOptions clean = faulty(path + ".jnl", clean_fs);
    auto f = JournaledFile::open(path, Access::kReadOnly, clean);
    if (!f && f.status().code() == Code::kMissing) continue;  // failed before anything existed
    if (!f && f.status().code() == Code::kNeverCommitted) {   // failed before its first commit
      CHECK(out.acked.empty());
      continue;
    }
    REQUIRE(f);
    auto got = read_all(**f);
    bool ok = got == out.acked || got == out.attempted;
    CHECK(ok);
    // An error that says the commit was made and the checkpoint or the
    // close after it failed is true to its word: the file is at that commit.
    if (out.error.find(JournaledFile::kMadeThenFailed) != std::string::npos) {
      ++made_then_failed;
      close_made_then_failed += out.error.find(" is made; the close after it failed: ") != std::string::npos;
      CHECK(got == out.attempted);
    }
  }
  CHECK(injected_runs > 10);
  if (!syncs) {  // the checkpoints' writes and the close's are among the faults
    CHECK(made_then_failed > 0);
    CHECK(close_made_then_failed > 0);
  }
}

}  // namespace

TEST_CASE("fault sweep: the N-th write fails with ENOSPC") { sweep(false, ENOSPC); }
TEST_CASE("fault sweep: the N-th write fails with EIO") { sweep(false, EIO); }
TEST_CASE("fault sweep: the N-th sync fails (fail-stop, never retried)") { sweep(true, EIO); }
