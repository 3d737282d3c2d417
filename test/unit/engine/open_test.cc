// Opening (open.cc): a second writer, readers and locks, a truncating
// create, the file's write permission, descriptors.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sys/xattr.h>

#include <vector>

#include "engine_test_util.h"
#include "fault_file.h"
#include "journaled_file.h"
#include "posix_file.h"
#include "test_util.h"

using namespace h5j;
using namespace h5j::test;

TEST_CASE_FIXTURE(FileInDir, "a second writer on a journal in use is passive; a reader reads the last commit") {
  auto writer = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(writer);
  REQUIRE((*writer)->write(0, std::vector<std::byte>(5000, std::byte(1)), 0));
  REQUIRE((*writer)->commit());
  REQUIRE((*writer)->write(0, std::vector<std::byte>(10, std::byte(2)), 0));
  auto second = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(second);  // HDF5's tentative open must succeed, to compare files
  CHECK((*second)->report().passive);
  std::vector<std::byte> buf(10);
  Status r = (*second)->read(0, buf);
  CHECK(r.code() == Code::kBusy);
  CHECK(r.message().find("locked") != std::string::npos);
  CHECK((*second)->write(0, buf, 0).code() == Code::kBusy);
  REQUIRE((*second)->close());
  auto reader = JournaledFile::open(path, Access::kReadOnly, opts);
  REQUIRE(reader);
  CHECK((*reader)->report().live_snapshot);
  REQUIRE((*reader)->read(0, buf));
  CHECK(buf[0] == std::byte(1));  // the last commit's, not the write since
  CHECK((*reader)->write(0, buf, 0).code() == Code::kInvalid);
  REQUIRE((*reader)->close());
  // The passive handles changed nothing: the writer goes on and closes cleanly.
  REQUIRE((*writer)->commit());
  REQUIRE((*writer)->close());
  auto bytes = test::read_file(path);
  CHECK(bytes[0] == std::byte(2));
  CHECK(bytes[100] == std::byte(1));
}

// A journal_path naming one file, given to every file a process writes
// (HDF5_DRIVER_CONFIG from the environment): a second file's opens find the
// first's journal locked by this process, as HDF5's tentative second open
// of the first would.  They are refused, naming the file the journal is
// for, and the first writer goes on.
TEST_CASE_FIXTURE(FileInDir, "a second file's open of a journal this process writes for another file is refused") {
  auto writer = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(writer);
  REQUIRE((*writer)->write(0, std::vector<std::byte>(5000, std::byte(1)), 0));
  REQUIRE((*writer)->commit());
  const std::string other = dir.path("other.h5");
  for (Access a : {Access::kCreateTruncate, Access::kCreateExclusive}) {
    auto made = JournaledFile::open(other, a, opts);
    REQUIRE(!made);
    CHECK(made.status().code() == Code::kForeign);
    CHECK(made.status().message().find("is the journal of \"t.h5\"") != std::string::npos);
    CHECK(made.status().sys_errno() == EWOULDBLOCK);
    CHECK(::access(other.c_str(), F_OK) != 0);  // the create left no file, as sec2's failed create leaves none
  }
  test::write_file(other, std::vector<std::byte>(100, std::byte(9)));
  for (Access a : {Access::kReadWrite, Access::kTruncate, Access::kCreateTruncate}) {
    auto opened = JournaledFile::open(other, a, opts);
    REQUIRE(!opened);
    CHECK(opened.status().code() == Code::kForeign);
  }
  CHECK(test::read_file(other).size() == 100);  // no truncating open emptied it
  // h5py's mode "a" creates with H5F_ACC_EXCL when the open fails: "exists",
  // and whose journal it met.
  auto exclusive = JournaledFile::open(other, Access::kCreateExclusive, opts);
  REQUIRE(!exclusive);
  CHECK(exclusive.status().sys_errno() == EEXIST);
  CHECK(exclusive.status().message().find("is the journal of \"t.h5\", which this process") != std::string::npos);
  JournalOptions through_driver = opts;
  through_driver.reader_in_writer_passive = true;
  auto reader = JournaledFile::open(other, Access::kReadOnly, through_driver);
  CHECK((!reader || !(*reader)->report().passive));
  if (reader) REQUIRE((*reader)->close());
  REQUIRE((*writer)->write(0, std::vector<std::byte>(10, std::byte(2)), 0));
  REQUIRE((*writer)->commit());
  REQUIRE((*writer)->close());
  CHECK(test::read_file(path)[0] == std::byte(2));
}

// A journal_path that names a file of the user's, or the HDF5 file itself:
// nothing is written to it, and a refused open leaves nothing behind.
TEST_CASE_FIXTURE(FileInDir, "a journal_path naming a file that is not a journal is refused, the file untouched") {
  const std::string notes = dir.path("notes.txt");
  const std::vector<std::byte> text(5000, std::byte('x'));
  test::write_file(notes, text);
  JournalOptions o = opts;
  o.journal_path = notes;
  for (Access a : {Access::kCreateTruncate, Access::kCreateExclusive, Access::kCreate}) {
    auto made = JournaledFile::open(path, a, o);
    REQUIRE(!made);
    CHECK(made.status().code() == Code::kCorrupt);
    CHECK(made.status().message().find("names a file that is not a journal") != std::string::npos);
    CHECK(::access(path.c_str(), F_OK) != 0);  // the file the create made is gone again
  }
  auto plain = JournaledFile::open(path, Access::kCreateTruncate, opts);  // a file to open, through its own journal
  REQUIRE(plain);
  REQUIRE((*plain)->write(0, std::vector<std::byte>(100, std::byte(3)), 0));
  REQUIRE((*plain)->close());
  for (Access a : {Access::kReadWrite, Access::kTruncate, Access::kReadOnly}) {
    auto opened = JournaledFile::open(path, a, o);
    REQUIRE(!opened);
    CHECK(opened.status().code() == Code::kCorrupt);
  }
  CHECK(test::read_file(notes) == text);
  CHECK(test::read_file(path).size() == 100);
  CHECK(::access((notes + ".readers").c_str(), F_OK) != 0);
  o.journal_path = path;  // the file itself
  for (Access a : {Access::kReadWrite, Access::kCreateTruncate, Access::kReadOnly}) {
    auto self = JournaledFile::open(path, a, o);
    REQUIRE(!self);
    CHECK(self.status().code() == Code::kInvalid);
    CHECK(self.status().message().find("names the file itself") != std::string::npos);
  }
  CHECK(test::read_file(path).size() == 100);
  o.journal_path = o.fs->absolute(dir.path("new.h5"));
  auto made = JournaledFile::open(dir.path("new.h5"), Access::kCreateTruncate, o);
  REQUIRE(!made);
  CHECK(made.status().sys_errno() == EINVAL);
  CHECK(::access(dir.path("new.h5").c_str(), F_OK) != 0);
  // Not a regular file: a FIFO (as /dev/null would be a device, to do
  // without a journal), and a directory not ended by '/'.
  REQUIRE(::mkfifo(dir.path("fifo").c_str(), 0600) == 0);
  REQUIRE(::mkdir(dir.path("journals").c_str(), 0700) == 0);
  for (const char* name : {"fifo", "journals"}) {
    o.journal_path = dir.path(name);
    for (bool durable : {true, false}) {
      o.ring.durable = durable;
      auto refused = JournaledFile::open(dir.path("new.h5"), Access::kCreateTruncate, o);
      REQUIRE(!refused);
      CHECK(refused.status().sys_errno() == EINVAL);
      CHECK(refused.status().message().find(std::string("is a ") + (name[0] == 'f' ? "FIFO" : "directory")) !=
            std::string::npos);
      CHECK(::access(dir.path("new.h5").c_str(), F_OK) != 0);
      CHECK(::access(dir.path(name).c_str(), F_OK) == 0);
    }
  }
}

// HDF5 never commits through its tentative handle; one that did is refused,
// as its reads and writes are.
TEST_CASE_FIXTURE(FileInDir, "a passive handle's commit is refused") {
  auto writer = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(writer);
  REQUIRE((*writer)->commit());
  auto second = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(second);
  REQUIRE((*second)->report().passive);
  CHECK((*second)->commit().code() == Code::kBusy);
  REQUIRE((*second)->close());
  REQUIRE((*writer)->close());
}

TEST_CASE_FIXTURE(FileInDir, "a reader's open takes no lock on the journal, which would refuse a writer starting then") {
  crash_after_two_commits(path, opts, 5);
  auto plan = std::make_shared<test::FaultPlan>();
  test::FaultFileSystem fs(plan);
  JournalOptions through_driver = opts;
  through_driver.fs = &fs;
  through_driver.reader_in_writer_passive = true;
  auto reader = JournaledFile::open(path, Access::kReadOnly, through_driver);
  REQUIRE(reader);
  CHECK((*reader)->report().live_snapshot);
  CHECK(std::count(plan->locked.begin(), plan->locked.end(), opts.journal_path) == 0);
  // A writer in this process makes the same open HDF5's tentative one: passive.
  auto writer = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(writer);
  auto tentative = JournaledFile::open(path, Access::kReadOnly, through_driver);
  REQUIRE(tentative);
  CHECK((*tentative)->report().passive);
  CHECK(std::count(plan->locked.begin(), plan->locked.end(), opts.journal_path) == 0);
  REQUIRE((*tentative)->close());
  REQUIRE((*reader)->close());
  REQUIRE((*writer)->close());
}

TEST_CASE_FIXTURE(FileInDir, "a truncating open empties the file only once it holds the journal's lock") {
  auto writer = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(writer);
  REQUIRE((*writer)->write(0, std::vector<std::byte>(200000, std::byte(7)), 0));  // in place
  REQUIRE((*writer)->commit());
  for (Access a : {Access::kCreateTruncate, Access::kTruncate}) {
    auto second = JournaledFile::open(path, a, opts);
    REQUIRE(second);
    CHECK((*second)->report().passive);
    REQUIRE((*second)->close());
    auto bytes = test::read_file(path);
    REQUIRE(bytes.size() == 200000);
    CHECK(bytes[199999] == std::byte(7));
  }
  REQUIRE((*writer)->close());
  // With no writer, the same open truncates: the file and its journal start empty.
  auto fresh = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(fresh);
  CHECK((*fresh)->size() == 0);
  REQUIRE((*fresh)->close());
  CHECK(test::read_file(path).empty());
}

namespace {
mode_t permission_bits(const std::string& path) {
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

std::string write_bits_record(const std::string& path) {
  char text[16];
  ssize_t n = ::getxattr(path.c_str(), kWriteBitsXattr, text, sizeof text);
  return n < 0 ? std::string() : std::string(text, size_t(n));
}
}  // namespace

// As root (CAP_DAC_OVERRIDE) permission bits stop nobody: test/driver/second_open_test.sh
// shows what they stop for everyone else.
TEST_CASE_FIXTURE(FileInDir, "a writer takes the file's write permission while it writes, and gives back what it took") {
  auto writer = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(writer);
  REQUIRE(::chmod(path.c_str(), 0640) == 0);  // the owner's choice, made while the file is written
  REQUIRE((*writer)->close());
  auto again = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(again);
  CHECK((*again)->report().write_protected);
  CHECK(permission_bits(path) == 0440);
  CHECK(write_bits_record(path) == "200");
  REQUIRE((*again)->write(0, std::vector<std::byte>(5000, std::byte(3)), 0));
  REQUIRE((*again)->commit());  // binds the file: an xattr written while it is protected
  again.value().reset();        // a crash: the file stays protected, its record with it
  CHECK(permission_bits(path) == 0440);
  REQUIRE(::chmod(path.c_str(), 0400) == 0);  // while crashed: the group loses read
  auto recovered = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(recovered);
  CHECK((*recovered)->report().recovered);
  CHECK(permission_bits(path) == 0400);
  REQUIRE((*recovered)->close());
  CHECK(permission_bits(path) == 0600);  // the write bit taken, given back; the owner's change kept
  CHECK(write_bits_record(path).empty());
  CHECK(test::read_file(path)[4999] == std::byte(3));
}

TEST_CASE_FIXTURE(FileInDir, "a file read-only by its owner's choice is left read-only by a writer that may write it") {
  REQUIRE(JournaledFile::open(path, Access::kCreateTruncate, opts).value()->close());
  REQUIRE(::chmod(path.c_str(), 0444) == 0);
  auto f = JournaledFile::open(path, Access::kReadWrite, opts);
  if (::geteuid() != 0) {  // only root may write it
    REQUIRE(!f);
    CHECK(f.status().sys_errno() == EACCES);
    return;
  }
  REQUIRE(f);
  CHECK(!(*f)->report().write_protected);
  REQUIRE((*f)->close());
  CHECK(permission_bits(path) == 0444);
  CHECK(write_bits_record(path).empty());
}

namespace {
// A child process that does `work`, tells the parent whether it succeeded,
// and lives on, holding whatever it holds, until released.
class ChildUntilReleased {
 public:
  template <typename F>
  explicit ChildUntilReleased(F&& work) {
    REQUIRE(::pipe(ready_) == 0);
    REQUIRE(::pipe(done_) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      char c = work() ? 'y' : 'n';
      (void)!::write(ready_[1], &c, 1);
      (void)!::read(done_[0], &c, 1);
      ::_exit(0);
    }
    char c = 0;
    succeeded_ = ::read(ready_[0], &c, 1) == 1 && c == 'y';
  }
  ~ChildUntilReleased() {
    release();
    for (int fd : {ready_[0], ready_[1], done_[0], done_[1]}) ::close(fd);
  }
  bool succeeded() const { return succeeded_; }
  void release() {
    if (pid_ <= 0) return;
    (void)!::write(done_[1], "x", 1);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }

 private:
  int ready_[2] = {-1, -1}, done_[2] = {-1, -1};
  pid_t pid_ = 0;
  bool succeeded_ = false;
};

size_t open_descriptors() {
  return size_t(std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                              std::filesystem::directory_iterator{}));
}
}  // namespace

// The same journal_path given to two processes that write files of two
// names: the second is refused as before, but told whose journal it found.
TEST_CASE_FIXTURE(FileInDir, "a journal another process writes for a file of another name is named so") {
  std::unique_ptr<JournaledFile> held;
  ChildUntilReleased writer([&] {
    auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
    if (f) held = std::move(*f);
    return held && held->commit();
  });
  REQUIRE(writer.succeeded());
  auto other = JournaledFile::open(dir.path("other.h5"), Access::kCreateTruncate, opts);
  REQUIRE(!other);
  CHECK(other.status().code() == Code::kForeign);
  CHECK(other.status().message().find("is the journal of \"t.h5\", which process") != std::string::npos);
  CHECK(::access(dir.path("other.h5").c_str(), F_OK) != 0);
  auto same = JournaledFile::open(path, Access::kReadWrite, opts);  // the same file: busy, naming its writer
  REQUIRE(!same);
  CHECK(same.status().code() == Code::kBusy);
}

TEST_CASE_TEMPLATE("an open file costs one descriptor beyond its journal's, and its lock holds", E, test::UringEngine,
                   test::SyncEngine) {
  // HDF5's family driver keeps thousands of members open: each must cost
  // about what sec2's one descriptor does.
  TempDir dir;
  std::string path = dir.path("d.h5");
  auto opts = options(path + ".jnl", E::value, 64 << 20);
  size_t before = open_descriptors();
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  REQUIRE((*f)->base().try_lock(LockMode::kExclusive));
  // The file, the journal, and under io_uring the ring and the journal's
  // separate lock descriptor.
  bool uring = std::string((*f)->journal_engine()) == "uring";
  CHECK(open_descriptors() - before == (uring ? 4u : 2u));
  auto other = posix_filesystem().open(path, OpenMode::kReadOnly, IoEngine::kSync);
  REQUIRE(other);
  CHECK((*other)->try_lock(LockMode::kShared).code() == Code::kBusy);
  f->reset();  // closing the file drops its lock
  CHECK((*other)->try_lock(LockMode::kShared));
}

// The soft limit on open files set for the test, and set back after it.
class OpenFilesLimit {
 public:
  OpenFilesLimit() { REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved_) == 0); }
  ~OpenFilesLimit() { ::setrlimit(RLIMIT_NOFILE, &saved_); }
  // A soft limit that leaves `spare` descriptors free (and a hard one, if
  // `hard`: for a child process only, since it cannot be raised again).
  static void leave(int spare, bool hard) {
    int lowest_free = ::open("/dev/null", O_RDONLY);
    REQUIRE(lowest_free >= 0);
    ::close(lowest_free);
    struct rlimit r;
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &r) == 0);
    r.rlim_cur = rlim_t(lowest_free + spare);
    if (hard) r.rlim_max = r.rlim_cur;
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &r) == 0);
  }
  static rlim_t soft() {
    struct rlimit r;
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &r) == 0);
    return r.rlim_cur;
  }

 private:
  struct rlimit saved_;
};

// sec2 holds one descriptor for a file, h5journal up to six: a program that
// keeps hundreds of files open under the usual soft limit of 1024 must not
// run out under h5journal where it would not under sec2.
TEST_CASE_FIXTURE(FileInDir, "a writer out of descriptors raises the soft limit, and names the hard one") {
  OpenFilesLimit restore;
  OpenFilesLimit::leave(1, /*hard=*/false);  // room for the file only
  rlim_t before = OpenFilesLimit::soft();
  {
    auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(f);
    REQUIRE((*f)->write(0, std::vector<std::byte>(5000, std::byte(1)), 0));
    REQUIRE((*f)->commit());
    REQUIRE((*f)->close());
  }
  CHECK(OpenFilesLimit::soft() > before);
  // At the hard limit: refused, saying which limit and what to do.
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    OpenFilesLimit::leave(1, /*hard=*/true);
    auto f = JournaledFile::open(path, Access::kReadWrite, opts);
    bool named = !f && f.status().sys_errno() == EMFILE &&
                 f.status().message().find("is its hard limit: a file open through h5journal holds up to six") !=
                     std::string::npos;
    ::_exit(named ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
}

// flock, an open file description lock, or (where the file system has
// neither: no_locks_test.sh runs this under seccomp) this process's own
// table: handles on one file exclude each other the same way.
TEST_CASE_TEMPLATE("handles on one file exclude each other in one process, whatever locks the file system has", E,
                   test::UringEngine, test::SyncEngine) {
  TempDir dir;
  std::string path = dir.path("l.h5");
  auto open = [&](OpenMode m) {
    auto f = posix_filesystem().open(path, m, E::value);
    REQUIRE(f);
    return std::move(*f);
  };
  auto held = [](const Status& s) { return s.is_ok() || s.code() == Code::kUnsupported; };
  auto writer = open(OpenMode::kCreate);
  REQUIRE(held(writer->try_lock(LockMode::kExclusive)));
  auto reader = open(OpenMode::kReadOnly);
  Status refused = reader->try_lock(LockMode::kShared);
  CHECK(refused.code() == Code::kBusy);
  CHECK(refused.sys_errno() == EWOULDBLOCK);
  writer.reset();  // closing drops the lock
  CHECK(held(reader->try_lock(LockMode::kShared)));
  auto second_reader = open(OpenMode::kReadOnly);
  CHECK(held(second_reader->try_lock(LockMode::kShared)));  // readers share
  auto second_writer = open(OpenMode::kReadWrite);
  CHECK(second_writer->try_lock(LockMode::kExclusive).code() == Code::kBusy);
  reader.reset();
  second_reader.reset();
  CHECK(held(second_writer->try_lock(LockMode::kExclusive)));
}

// A worker fork() made while a writer held its locks (Python's
// multiprocessing), which outlives the writer: the locks end with the
// writer, and the worker still reads through the handles it inherited.
TEST_CASE_TEMPLATE("a forked child keeps none of its parent's locks, and still reads", E, test::UringEngine,
                   test::SyncEngine) {
  TempDir dir;
  std::string path = dir.path("k.h5");
  auto writer = posix_filesystem().open(path, OpenMode::kCreate, E::value);
  REQUIRE(writer);
  const std::vector<std::byte> bytes(100, std::byte{7});
  REQUIRE((*writer)->write_at(0, bytes));
  REQUIRE((*writer)->try_lock(LockMode::kExclusive));
  ChildUntilReleased worker([&] {  // reads through the inherited handle
    std::vector<std::byte> read(bytes.size());
    auto got = (*writer)->read_at(0, read);
    return got && *got == bytes.size() && read == bytes;
  });
  CHECK(worker.succeeded());
  writer->reset();  // the writer is gone; the worker is not
  auto next = posix_filesystem().open(path, OpenMode::kReadWrite, IoEngine::kSync);
  REQUIRE(next);
  CHECK((*next)->try_lock(LockMode::kExclusive));
}

namespace {
// Counts ftruncate calls.
struct TruncatesSeen : Syscalls {
  int calls = 0;
  int ftruncate(int fd, off_t size) override {
    ++calls;
    return Syscalls::ftruncate(fd, size);
  }
};
}  // namespace

// ext4 (auto_da_alloc) takes a truncate to 0 for a rewrite and writes back
// every dirty page of the file at its close: a new file is never truncated.
TEST_CASE_FIXTURE(FileInDir, "a create truncates an existing file and its journal, and never a new, empty one") {
  TruncatesSeen seen;
  PosixFileSystem fs(seen);
  opts.fs = &fs;
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  CHECK(seen.calls == 0);
  REQUIRE((*f)->write(0, std::vector<std::byte>(5000, std::byte(1)), 0));
  REQUIRE((*f)->close());
  f = JournaledFile::open(path, Access::kCreateTruncate, opts);  // over the file of 5000 bytes
  REQUIRE(f);
  CHECK(seen.calls == 1);  // the file's; its journal was new
  CHECK(test::file_size(path) == 0);
}

// As root, permission bits stop no one: a program without the driver that
// creates the file with H5F_ACC_TRUNC empties it (open(2)'s O_TRUNC)
// before HDF5's lock refuses it.  The writer must not then write its image
// over what is left, a file that would pass for whole.
TEST_CASE_FIXTURE(FileInDir, "a writer whose file was cut behind its back stops before its checkpoint") {
  opts.checkpoint_bytes = 1;  // a checkpoint at every commit
  const uint8_t head[24] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0, 0, 8, 8, 0,
                            4,    0,   16,  0,   0,    0,    0,    0};
  std::vector<std::byte> superblock(4096, std::byte(7));
  for (size_t i = 0; i < sizeof head; ++i) superblock[i] = std::byte(head[i]);
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  REQUIRE((*f)->write(0, superblock, 0));
  REQUIRE((*f)->write(4096, std::vector<std::byte>(60000, std::byte(1)), 0));
  REQUIRE((*f)->commit());
  CHECK(is_guarded_head(test::read_file(path), /*log_form=*/false));

  SUBCASE("cut by another process: the next checkpoint fails, naming it, and writes nothing") {
    REQUIRE(::chmod(path.c_str(), 0644) == 0);  // what root's open ignores
    REQUIRE(::truncate(path.c_str(), 0) == 0);
    REQUIRE((*f)->write(4096, std::vector<std::byte>(100, std::byte(2)), 0));
    Status s = (*f)->commit();
    CHECK(!s);
    CHECK(s.message().find("lost the superblock this writer guarded") != std::string::npos);
    CHECK(s.message().find("stays at its last commit") == std::string::npos);  // it does not
    CHECK(test::file_size(path) == 0);
    CHECK((*f)->close().code() == Code::kFailStopped);
    f->reset();
    // The journal stays, and recovery refuses the file rather than replay it.
    auto reopened = JournaledFile::open(path, Access::kReadWrite, opts);
    REQUIRE(!reopened);
    CHECK(reopened.status().code() == Code::kBaseMismatch);
  }
  SUBCASE("left alone: every checkpoint and the close go on") {
    REQUIRE((*f)->write(4096, std::vector<std::byte>(100, std::byte(2)), 0));
    REQUIRE((*f)->commit());
    REQUIRE((*f)->close());
    CHECK(test::read_file(path)[4096] == std::byte(2));
  }
}

// sec2's failed open(O_CREAT) leaves no file; a rerun with H5F_ACC_EXCL
// would otherwise hear "File exists" of an empty file the driver made.
TEST_CASE_FIXTURE(FileInDir, "a create that fails removes the file it made, and only that") {
  opts.journal_path = dir.path("missing/t.h5.jnl");
  for (Access access : {Access::kCreate, Access::kCreateTruncate, Access::kCreateExclusive}) {
    auto f = JournaledFile::open(path, access, opts);
    REQUIRE_FALSE(f);
    CHECK(f.status().message().find("does not exist (journal_path)") != std::string::npos);
    CHECK_FALSE(posix_filesystem().exists(path));
  }
  test::write_file(path, std::vector<std::byte>(100, std::byte{1}));  // a file that was there stays, bytes and all
  for (Access access : {Access::kCreate, Access::kCreateTruncate}) {
    REQUIRE_FALSE(JournaledFile::open(path, access, opts));
    CHECK(test::file_size(path) == 100);
  }
}

// Two copies of a job creating one new file at once: the one that made it
// loses the race for the journal.  The file is the winner's now, however
// empty, and stays.
TEST_CASE_FIXTURE(FileInDir, "a create that made its file and finds another writer on the journal leaves it") {
  std::unique_ptr<File> journal;
  ChildUntilReleased winner([&] {  // holds the journal's lock until released
    auto opened = posix_filesystem().open(opts.journal_path, OpenMode::kCreate, IoEngine::kSync);
    if (!opened) return false;
    journal = std::move(*opened);
    return journal->try_lock(LockMode::kExclusive).is_ok();
  });
  REQUIRE(winner.succeeded());
  auto f = JournaledFile::open(path, Access::kCreate, opts);
  winner.release();
  REQUIRE_FALSE(f);
  CHECK(f.status().code() == Code::kBusy);
  CHECK(posix_filesystem().exists(path));
}

// The real file system, where the journal may not be created: a directory
// the user may not write, shared data, a read-only mount.
struct JournalDenied : PosixFileSystem {
  int err = EACCES;
  Result<std::unique_ptr<File>> open(const std::string& p, OpenMode mode, IoEngine engine) override {
    if (p.ends_with(".jnl") && mode != OpenMode::kReadOnly) return Status::from_errno(err, "open " + p);
    return PosixFileSystem::open(p, mode, engine);
  }
};

TEST_CASE_FIXTURE(FileInDir, "a writer that may not create its journal says where it may put one") {
  test::write_file(path, hdf5_like_file());
  for (int err : {EACCES, EROFS}) {
    JournalDenied fs;
    fs.err = err;
    opts.fs = &fs;
    auto refused = JournaledFile::open(path, Access::kReadWrite, opts);
    REQUIRE_FALSE(refused);
    CHECK(refused.status().sys_errno() == err);
    CHECK(refused.status().message().find("beside the file unless journal_path names a directory it can write") !=
          std::string::npos);
    CHECK(test::read_file(path) == hdf5_like_file());
  }
  // A journal that is there, which this user may not write (another user's
  // crashed job): journal_path would not help, and the hint does not say it.
  test::write_file(path + ".jnl", std::vector<std::byte>(4096));
  JournalDenied fs;
  opts.fs = &fs;
  auto refused = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE_FALSE(refused);
  CHECK(refused.status().sys_errno() == EACCES);
  CHECK(refused.status().message().find("journal_path") == std::string::npos);
}

// A name near the file system's limit (255 bytes on ext4, xfs, tmpfs)
// leaves no room for the journal's names: refused with errno's reason and
// the way out, before anything is written, the file as it was.
TEST_CASE("a writer whose journal's name would be too long says how to name it") {
  TempDir dir;
  // 254 bytes: the journal's own name is too long; 250: only its readers file's.
  for (size_t length : {254, 250}) {
    std::string path = dir.path(std::string(length - 3, 'n') + ".h5");
    test::write_file(path, hdf5_like_file());
    JournalOptions opts = options(path + ".jnl", IoEngine::kAuto, 64 << 20);
    auto refused = JournaledFile::open(path, Access::kReadWrite, opts);
    REQUIRE_FALSE(refused);
    CHECK(refused.status().sys_errno() == ENAMETOOLONG);
    CHECK(refused.status().message().find("journal_path can name a shorter one") != std::string::npos);
    CHECK(test::read_file(path) == hdf5_like_file());
    CHECK_FALSE(posix_filesystem().exists(path + ".jnl"));
  }
}

// The real file system, with one directory taken for a tmpfs.
struct TmpfsDirFileSystem : PosixFileSystem {
  std::string tmpfs;
  std::string empties_at_reboot(const std::string& p) override { return p.starts_with(tmpfs) ? "tmpfs" : ""; }
};

TEST_CASE_FIXTURE(FileInDir, "a durable journal is refused on storage a reboot empties, beside a file that survives it") {
  TmpfsDirFileSystem fs;
  fs.tmpfs = dir.path("shm/");
  std::filesystem::create_directory(fs.tmpfs);
  opts.fs = &fs;
  opts.journal_path = fs.tmpfs + "t.h5.jnl";
  auto refused = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE_FALSE(refused);
  CHECK(refused.status().message().find("would be on tmpfs, which a reboot empties, while " + path + " is not") !=
        std::string::npos);
  CHECK(refused.status().sys_errno() == EINVAL);
  CHECK_FALSE(fs.exists(opts.journal_path));
  CHECK_FALSE(fs.exists(path));

  CHECK(posix_filesystem().empties_at_reboot("/dev/shm/t.h5.jnl") == "tmpfs");  // POSIX shared memory's home

  SUBCASE("durable=false promises to survive a process crash only, which tmpfs does") {
    opts.ring.durable = false;
    auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(f);
    REQUIRE((*f)->close());
  }
  SUBCASE("a file on tmpfs too survives no reboot either") {
    opts.journal_path = fs.tmpfs + "u.h5.jnl";
    auto f = JournaledFile::open(fs.tmpfs + "u.h5", Access::kCreateTruncate, opts);
    REQUIRE(f);
    REQUIRE((*f)->close());
  }
  SUBCASE("a journal already there is opened for what it holds") {
    JournalOptions nosync = opts;
    nosync.ring.durable = false;
    crash_after_two_commits(path, nosync, 7);
    auto f = JournaledFile::open(path, Access::kReadWrite, opts);
    REQUIRE(f);
    CHECK((*f)->report().replayed_txns == 2);
    REQUIRE((*f)->close());
  }
}

// A crashed file moved aside (mv run.h5 run_crashed.h5) and the job run
// again: the create finds the crashed journal, whose commits are the moved
// file's.  Truncating, it would destroy them; exclusive (h5py's mode "a"),
// it would replay them into its new file.  It refuses, makes no file, and
// leaves the journal for h5recover of the moved one.
TEST_CASE_FIXTURE(FileInDir, "a create refuses a crashed journal whose file is no longer under its name") {
  crash_after_two_commits(path, opts, 7);
  const auto journal_bytes = test::read_file(opts.journal_path);
  SUBCASE("moved") { std::filesystem::rename(path, dir.path("moved.h5")); }
  SUBCASE("deleted") { std::filesystem::remove(path); }
  for (Access access : {Access::kCreate, Access::kCreateTruncate, Access::kCreateExclusive}) {
    auto f = JournaledFile::open(path, access, opts);
    REQUIRE_FALSE(f);
    CHECK(f.status().code() == Code::kForeign);
    CHECK(f.status().message().find("holds the commits of a crashed session of a file named \"t.h5\" that is no "
                                    "longer here") != std::string::npos);
    CHECK_FALSE(posix_filesystem().exists(path));
    CHECK(test::read_file(opts.journal_path) == journal_bytes);
  }
}

TEST_CASE_FIXTURE(FileInDir, "a create over a crashed journal with no commit since its checkpoint goes ahead") {
  for (Access access : {Access::kCreate, Access::kCreateTruncate, Access::kCreateExclusive}) {
    {
      auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
      REQUIRE(f);
      REQUIRE((*f)->write(0, std::vector<std::byte>(5000, std::byte(1)), 0));
    }  // dropped before its first commit: a crash
    REQUIRE(posix_filesystem().exists(opts.journal_path));
    std::filesystem::remove(path);
    auto f = JournaledFile::open(path, access, opts);
    REQUIRE(f);
    REQUIRE((*f)->close());
    CHECK_FALSE(posix_filesystem().exists(opts.journal_path));
    std::filesystem::remove(path);
  }
}
