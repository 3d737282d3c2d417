// A close's cost on the disk: the flushes and bytes of a job that writes a
// file and closes it, committing at the close only (close_uncommitted.cc)
// or once before it (commit.cc, close_materialized); and what it removes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "data_logs.h"
#include "engine_test_util.h"
#include "forwarding_file.h"
#include "syncs_seen.h"

using namespace h5j;
using namespace h5j::test;

namespace {

// A session that creates the file, writes `content` and closes it,
// committing once before the close if `commit`.
void create_and_close(const std::string& path, const JournalOptions& opts, const std::vector<std::byte>& content,
                      bool commit) {
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  REQUIRE((*f)->write(0, content, 0));
  if (commit) REQUIRE((*f)->commit());
  REQUIRE((*f)->close());
}

}  // namespace

TEST_CASE_FIXTURE(FileWithSyncsSeen, "a file created, written and closed without a commit: three flushes, no journal") {
  const std::vector<std::byte> content = hdf5_like_file();
  {
    auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(f);
    REQUIRE((*f)->write(0, content, 0));
    // Until the close, the file on disk starts with no signature.
    CHECK(test::read_file(path).at(0) == std::byte{0});
    REQUIRE((*f)->close());
  }
  // The image with its signature held back, the journal's removal and the
  // file's name, the signature (close_uncommitted.cc).
  CHECK(syncs.calls == std::vector<std::string>{"fdatasync file", "fsync directory", "fsync file"});
  CHECK(syncs.bytes_written["journal"] < (64u << 10));  // no MiB of zeros ahead for commits that never come
  CHECK(test::read_file(path) == content);
  CHECK(!fs.exists(opts.journal_path));
}

TEST_CASE_FIXTURE(FileWithSyncsSeen, "a file committed once and closed: no checkpoint before the close") {
  const std::vector<std::byte> content = hdf5_like_file();
  create_and_close(path, opts, content, /*commit=*/true);
  // The commit: the journal's name, the binding with the file's bytes, the
  // COMMIT.  The close: its image, then the binding's removal, which also
  // flushes the retired journal's header (commit.cc, end_close): its
  // removal needs no directory sync.  A checkpoint before the close would
  // add two flushes and rebind.
  CHECK(syncs.calls == std::vector<std::string>{"fsync directory", "fsync file", "fdatasync journal",
                                                "fdatasync file", "write back journal", "fsync file"});
  CHECK(test::read_file(path) == content);
  CHECK(!fs.exists(opts.journal_path));
}

namespace {

struct FileOnTwoDevices : FileWithSyncsSeen {
  FileOnTwoDevices() : FileWithSyncsSeen(/*shares=*/false) {}
};

}  // namespace

// The file's flush cannot make the journal's header durable: its removal is.
// A block rewritten at every commit, a few bytes changed each time, as
// HDF5 rewrites a chunk index node at each step: the journal holds its
// first version whole and then only each step's changes (last_writes.h),
// so its image at the close is hundreds of runs spread over the journal.
// The close writes it from the copy the writer keeps, reading back only
// the records of blocks written once.
TEST_CASE_FIXTURE(FileWithSyncsSeen, "a close writes a block rewritten at every commit from memory, not the journal") {
  opts.ring.durable = false;
  opts.fs = &fs;
  constexpr size_t kNode = 4096, kSteps = 300;
  std::vector<std::byte> content = hdf5_like_file();
  std::vector<std::byte> node(kNode, std::byte{7});
  const uint64_t node_at = content.size();
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  REQUIRE((*f)->write(0, content, 0));
  REQUIRE((*f)->write(node_at, node, 0));
  REQUIRE((*f)->commit());
  for (size_t step = 0; step < kSteps; ++step) {
    node[(step * 8) % kNode] = std::byte(step);  // one entry a step, as an index node gains
    node[16] = std::byte(step);                  // and its count
    REQUIRE((*f)->write(node_at, node, 0));
    REQUIRE((*f)->commit());
  }
  const uint64_t journal_bytes = fs.exists(opts.journal_path) ? test::read_file(opts.journal_path).size() : 0;
  REQUIRE(journal_bytes > 20 * kNode);  // the steps' records, more than the node
  syncs.bytes_read.clear();
  REQUIRE((*f)->close());
  CHECK(syncs.bytes_read["journal"] < 2 * kNode);
  std::vector<std::byte> expected = content;
  expected.insert(expected.end(), node.begin(), node.end());
  CHECK(test::read_file(path) == expected);
}

TEST_CASE_FIXTURE(FileOnTwoDevices, "on two devices a close syncs the journal's removal") {
  const std::vector<std::byte> content = hdf5_like_file();
  create_and_close(path, opts, content, /*commit=*/true);
  CHECK(syncs.calls == std::vector<std::string>{"fsync directory", "fsync file", "fdatasync journal",
                                                "fdatasync file", "fsync file", "fsync directory"});
  CHECK(test::read_file(path) == content);
}

namespace {

// The real file system, where a power loss took back the journal's
// removal: the close's unlink of it is never done.
struct JournalRemovalLost : OneDevice {
  JournalRemovalLost() : OneDevice(real_syscalls(), /*shares=*/true) {}
  Status remove(const std::string& path) override {
    return path.ends_with(".jnl") ? Status::ok() : OneDevice::remove(path);
  }
};

// A file of 64 KiB committed and closed, then opened again, its superblock
// sample rewritten, committed and closed with the journal's removal lost.
struct ClosedWithJournalLeft : FileInDir {
  JournalRemovalLost fs;
  std::vector<std::byte> content = hdf5_like_file();
  ClosedWithJournalLeft() {
    opts.engine = IoEngine::kSync;
    create_and_close(path, opts, content, /*commit=*/false);
    opts.fs = &fs;
    auto f = JournaledFile::open(path, Access::kReadWrite, opts);
    REQUIRE(f);
    std::vector<std::byte> rewrite(32, std::byte{0x5a});
    std::copy(rewrite.begin(), rewrite.end(), content.begin() + 16);
    REQUIRE((*f)->write(16, rewrite, 0));
    REQUIRE((*f)->commit());
    REQUIRE((*f)->close());
    REQUIRE(fs.exists(opts.journal_path));
    opts.fs = &posix_filesystem();
  }
};

}  // namespace

// The close retired the journal before removing it: whatever a crash keeps
// of the removal, the journal holds no transaction to replay.
TEST_CASE_FIXTURE(ClosedWithJournalLeft, "a journal a close retired replays nothing") {
  auto f = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(f);
  CHECK((*f)->report().journal_found);
  CHECK((*f)->report().replayed_txns == 0);
  CHECK(read_all(**f) == content);
  REQUIRE((*f)->close());
  CHECK(test::read_file(path) == content);
  CHECK(!std::filesystem::exists(opts.journal_path));
}

// Another program wrote the closed file; then the power loss brought the
// journal back.  Replaying the generation the close applied would lay its
// bytes over the program's.
TEST_CASE_FIXTURE(ClosedWithJournalLeft, "a journal a close retired never replays over a later writer's bytes") {
  std::vector<std::byte> later = content;
  std::fill(later.begin() + 16, later.begin() + 48, std::byte{0x77});
  test::write_file(path, later);
  auto f = JournaledFile::open(path, Access::kReadWrite, opts);
  if (f) CHECK((*f)->report().replayed_txns == 0);
  else CHECK(f.status().code() == Code::kBaseMismatch);
  CHECK(test::read_file(path) == later);
}

namespace {

// The real file system, counting the directory listings asked of it.
struct ListingsCounted : PosixFileSystem {
  int listings = 0;
  Result<std::vector<std::string>> paths_with_prefix(const std::string& prefix) override {
    ++listings;
    return PosixFileSystem::paths_with_prefix(prefix);
  }
};

}  // namespace

// A directory of many files, one per time step, must not make each close
// cost in proportion to them.
TEST_CASE_FIXTURE(FileInDir, "a close removes its data logs by name, listing no directory") {
  ListingsCounted fs;
  opts.fs = &fs;
  opts.raw_mode = RawMode::kLog;
  opts.ranks = 3;  // as rank 0 of three: logs 0, 1 and 2 may exist
  const std::string log0 = data_log_path_for(opts.journal_path), log2 = data_log_path_for(opts.journal_path, 2);
  test::write_file(log2, std::vector<std::byte>(100, std::byte(1)));  // a rank's, left by a crash
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  REQUIRE((*f)->write_raw(0, std::vector<std::byte>(5000, std::byte(7)), 3));
  REQUIRE((*f)->commit());
  REQUIRE(fs.exists(log0));
  REQUIRE((*f)->close());
  CHECK(!fs.exists(log0));
  CHECK(!fs.exists(log2));
  CHECK(fs.listings == 0);
  CHECK(test::read_file(path) == std::vector<std::byte>(5000, std::byte(7)));
}

namespace {

// The real file system, noting for each journal and data log the thread
// that closed it and whether its name was still there then.
struct ClosesSeen : PosixFileSystem {
  struct Close {
    std::string path;
    std::thread::id by;
    bool name_there;
  };
  std::mutex mu;
  std::vector<Close> closes;
  class SeenFile : public ForwardingFile {
   public:
    SeenFile(std::unique_ptr<File> inner, ClosesSeen& fs) : ForwardingFile(std::move(inner)), fs_(fs) {}
    ~SeenFile() override {
      bool there = std::filesystem::exists(path());
      std::lock_guard lock(fs_.mu);
      fs_.closes.push_back({path(), std::this_thread::get_id(), there});
    }

   private:
    ClosesSeen& fs_;
  };
  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode, IoEngine engine) override {
    auto f = PosixFileSystem::open(path, mode, engine);
    if (!f || path.find(".jnl") == std::string::npos) return f;
    return std::unique_ptr<File>(std::make_unique<SeenFile>(std::move(*f), *this));
  }
};

// Writes 5000 bytes of 7 (as raw data, into the data log, when `raw`),
// commits and closes with a closing thread, checks that the close removed
// the names while the thread still runs, and returns once the thread has
// closed what waited.
void write_and_close_on_a_thread(const std::string& path, JournalOptions opts, bool raw) {
  ClosingThread thread;
  opts.closing_thread = &thread;
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  const std::vector<std::byte> data(5000, std::byte(7));
  REQUIRE((raw ? (*f)->write_raw(0, data, 3) : (*f)->write(0, data, 3)));
  REQUIRE((*f)->commit());
  REQUIRE((*f)->close());
  CHECK(!opts.fs->exists(opts.journal_path));
  if (raw) CHECK(!opts.fs->exists(data_log_path_for(opts.journal_path)));
}

}  // namespace

// The last close of a removed file frees its blocks, which costs a close
// 12 ms for a journal of 16 MiB on a file system mounted with `discard`:
// with a closing thread, the names go first and the thread closes.
TEST_CASE_FIXTURE(FileInDir, "with a closing thread a close removes the journal's and data log's names, then the thread closes them") {
  ClosesSeen fs;
  opts.fs = &fs;
  opts.raw_mode = RawMode::kLog;
  write_and_close_on_a_thread(path, opts, /*raw=*/true);
  std::vector<std::string> seen;
  for (const auto& c : fs.closes) {
    if (c.path != opts.journal_path && c.path != data_log_path_for(opts.journal_path)) continue;
    seen.push_back(c.path);
    CHECK(c.by != std::this_thread::get_id());
    CHECK(!c.name_there);
  }
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<std::string>{opts.journal_path, data_log_path_for(opts.journal_path)});
  CHECK(test::read_file(path) == std::vector<std::byte>(5000, std::byte(7)));
}

// Under durable=100ms the background sync holds a handle of its own on the
// journal, which its destructor would close after the writer's: that close
// would be the journal's last, and the caller's.
TEST_CASE_FIXTURE(FileInDir, "with a closing thread the background sync's journal handle closes on the thread too") {
  ClosesSeen fs;
  opts.fs = &fs;
  opts.durable_within = std::chrono::milliseconds(100);
  write_and_close_on_a_thread(path, opts, /*raw=*/false);
  size_t journal_closes = 0;
  for (const auto& c : fs.closes) {
    if (c.path != opts.journal_path) continue;
    ++journal_closes;
    CHECK(c.by != std::this_thread::get_id());
    CHECK(!c.name_there);
  }
  CHECK(journal_closes == 2);  // the writer's, and the background sync's
  CHECK(test::read_file(path) == std::vector<std::byte>(5000, std::byte(7)));
}

// A journal found at the open may have been left by a job of more ranks
// than this session's: its close finds their logs by listing.
TEST_CASE_FIXTURE(FileInDir, "a close after a recovery removes the data logs of a larger job") {
  ListingsCounted fs;
  opts.fs = &fs;
  crash_after_two_commits(path, opts, 4);
  const std::string log5 = data_log_path_for(opts.journal_path, 5);
  test::write_file(log5, std::vector<std::byte>(100, std::byte(1)));
  auto f = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(f);
  CHECK((*f)->report().replayed_txns == 2);
  REQUIRE((*f)->close());
  CHECK(!fs.exists(log5));
  CHECK(!fs.exists(opts.journal_path));
}

// HDF5's vds test creates a file by a relative name, changes its working
// directory, and closes it: the names no longer lead to the file and its
// journal, so the close commits through the journal as any other, and the
// file opens again through the driver.
TEST_CASE("a close after the working directory changed leaves no journal that would refuse the file") {
  TempDir dir, elsewhere;
  const std::vector<std::byte> content = hdf5_like_file();
  struct BackHome {
    std::filesystem::path home = std::filesystem::current_path();
    ~BackHome() { std::filesystem::current_path(home); }
  } back_home;
  std::filesystem::current_path(dir.path(""));
  JournalOptions opts = options("t.h5.jnl", IoEngine::kSync, 64 << 20);
  {
    auto f = JournaledFile::open("t.h5", Access::kCreateTruncate, opts);
    REQUIRE(f);
    REQUIRE((*f)->write(0, content, 0));
    std::filesystem::current_path(elsewhere.path(""));
    CHECK((*f)->close());
  }
  std::filesystem::current_path(dir.path(""));
  auto again = JournaledFile::open("t.h5", Access::kReadWrite, opts);
  REQUIRE(again);
  CHECK(read_all(**again) == content);
}

// A job's directory moved aside while the job runs (mv run/ run.old/), and
// the job started again in a new run/: the names the first job opened now
// lead to the second's journal and readers file, which its close must
// leave alone.  Its own are removed where they went, beside its file,
// which is whole.
TEST_CASE("a close leaves alone the journal that took its journal's name since the open") {
  TempDir top;
  const std::string run = top.path("run"), old = top.path("run.old");
  std::filesystem::create_directory(run);
  JournalOptions opts = options(run + "/t.h5.jnl", IoEngine::kSync, 64 << 20);
  const std::vector<std::byte> content = hdf5_like_file();
  auto f = JournaledFile::open(run + "/t.h5", Access::kCreateTruncate, opts);
  REQUIRE(f);
  REQUIRE((*f)->write(0, content, 0));
  REQUIRE((*f)->commit());
  std::filesystem::rename(run, old);
  std::filesystem::create_directory(run);
  const std::vector<std::byte> theirs(5000, std::byte{0x42});
  test::write_file(run + "/t.h5.jnl", theirs);
  test::write_file(run + "/t.h5.jnl.readers", theirs);
  REQUIRE((*f)->close());
  CHECK(test::read_file(run + "/t.h5.jnl") == theirs);
  CHECK(test::read_file(run + "/t.h5.jnl.readers") == theirs);
  CHECK(test::read_file(old + "/t.h5") == content);
  CHECK_FALSE(std::filesystem::exists(old + "/t.h5.jnl"));
  CHECK_FALSE(std::filesystem::exists(old + "/t.h5.jnl.readers"));
}

// The same, with nothing made in its place: the names the writer opened
// lead nowhere.  It goes on as sec2's writer would, committing and
// checkpointing (whose readers file it can no longer reach by name), and
// its close removes its journal and readers file where they went: one
// left there would make h5recover --check call the whole file unrecovered.
TEST_CASE("a writer whose directory moved goes on, and its close removes its journal where it went") {
  TempDir top;
  const std::string run = top.path("run"), old = top.path("run.old");
  std::filesystem::create_directory(run);
  JournalOptions opts = options(run + "/t.h5.jnl", IoEngine::kSync, 64 << 10);
  std::vector<std::byte> content = hdf5_like_file();
  auto f = JournaledFile::open(run + "/t.h5", Access::kCreateTruncate, opts);
  REQUIRE(f);
  REQUIRE((*f)->write(0, content, 0));
  REQUIRE((*f)->commit());
  std::filesystem::rename(run, old);
  for (int step = 0; step < 8; ++step) {  // 8 commits of 16 KiB, below the committed end: journaled
    std::fill(content.begin() + 1024, content.begin() + 1024 + (16 << 10), std::byte(step));
    REQUIRE((*f)->write(1024, std::span(content).subspan(1024, 16 << 10), 0));
    REQUIRE((*f)->commit());
  }
  CHECK((*f)->stats().checkpoints > 0);
  REQUIRE((*f)->close());
  CHECK(test::read_file(old + "/t.h5") == content);
  CHECK_FALSE(std::filesystem::exists(old + "/t.h5.jnl"));
  CHECK_FALSE(std::filesystem::exists(old + "/t.h5.jnl.readers"));
}

// The files of a process apply through one pool of buffers
// (apply_buffers_pool.h), not each through its own: the set the close
// applied through goes back to the pool given, with its write buffer.
TEST_CASE_FIXTURE(FileInDir, "a file given a pool of apply buffers applies through it and gives the set back") {
  ApplyBuffersPool pool;
  opts.apply_buffers = &pool;
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  for (int commit = 0; commit < 2; ++commit) {  // the first goes into the new file; the second, the journal
    REQUIRE((*f)->write(0, std::vector<std::byte>(5000, std::byte(7 + commit)), 3));
    REQUIRE((*f)->commit());
  }
  REQUIRE((*f)->close());
  auto used = pool.take();
  CHECK(used->run.valid());  // the close's apply wrote through it
  auto another = pool.take();
  CHECK_FALSE(another->run.valid());  // one set served the file: a second is new
  CHECK(test::read_file(path) == std::vector<std::byte>(5000, std::byte(8)));
}

// The files of a process write their journals through rings kept from one
// session for the next (buffer_pool.h): a clean close gives its ring back,
// and the next file's first record takes it rather than allocating its own.
TEST_CASE_FIXTURE(FileInDir, "a close gives its journal's ring back to the pool, and the next file writes through it") {
  BufferPool pool;
  opts.ring.pool = &pool;
  const std::string second = dir.path("second.h5");
  for (const std::string& name : {path, second}) {
    JournalOptions o = opts;
    o.journal_path = name + ".jnl";
    auto f = JournaledFile::open(name, Access::kCreateTruncate, o);
    REQUIRE(f);
    for (int commit = 0; commit < 2; ++commit) {  // the second's records go through the ring
      REQUIRE((*f)->write(0, std::vector<std::byte>(5000, std::byte(7 + commit)), 3));
      REQUIRE((*f)->commit());
    }
    REQUIRE((*f)->close());
    CHECK(pool.idle() == 1);  // the second file's close gave back the ring the first's did
    CHECK(test::read_file(name) == std::vector<std::byte>(5000, std::byte(8)));
  }
}
