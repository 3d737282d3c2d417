// The ring of journal buffers on both engines: bytes land in order at the
// right offsets, reads see unwritten buffers, and memory is bounded.
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "allocations_file.h"
#include "forwarding_file.h"
#include "journal_reader.h"
#include "journal_writer.h"
#include "posix_file.h"
#include <fcntl.h>
#include "test_util.h"

using namespace h5j;
using h5j::test::TempDir;

namespace {

// Counts writes in flight to prove backpressure: never more than the ring.
class CountingFile : public test::AllocationsFile {
 public:
  using AllocationsFile::AllocationsFile;
  Result<uint64_t> submit_write(uint64_t offset, std::span<const std::byte> data) override {
    auto t = PosixFile::submit_write(offset, data);
    ++submitted;
    return t;
  }
  Result<size_t> read_at(uint64_t offset, std::span<std::byte> out) override {
    reads.push_back(out.size());
    return PosixFile::read_at(offset, out);
  }
  Status wait_write(uint64_t ticket) override {
    return fail_wait ? Status(Code::kIoError, "wait refused", EIO) : PosixFile::wait_write(ticket);
  }
  int submitted = 0;
  std::vector<size_t> reads;  // each read's length, in order
  bool fail_wait = false;     // wait_write fails
};

std::vector<std::byte> pattern(size_t n, uint32_t seed) {
  std::vector<std::byte> v(n);
  std::mt19937 rng(seed);
  for (auto& b : v) b = std::byte(rng());
  return v;
}

// Each of `count` transactions writes one record: transaction t writes
// pattern(size(t), seed(t)) at address t.  Where each landed, and its bytes.
using Written = std::vector<std::pair<uint64_t, std::vector<std::byte>>>;
template <class Size, class Seed>
Written commit_records(JournalWriter& w, uint32_t count, Size size, Seed seed) {
  Written written;
  for (uint32_t t = 0; t < count; ++t) {
    REQUIRE(w.begin());
    auto data = pattern(size(t), seed(t));
    auto off = w.append_write(t, 0, data);
    REQUIRE(off);
    written.emplace_back(*off, std::move(data));
    REQUIRE(w.commit({1000, 0, 0}));
  }
  return written;
}

// A ring of two 4 KiB buffers, not durable, over a CountingFile, its
// memory from `pool` if given.
struct CountedRing {
  TempDir dir;
  CountingFile file;
  Result<std::unique_ptr<JournalWriter>> w = Status(Code::kInvalid, "not started");
  explicit CountedRing(uint32_t block_size = kBlockSize, BufferPool* pool = nullptr)
      : file(dir.path("c.jnl"), UniqueFd(::open(dir.path("c.jnl").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644))) {
    JournalHeader h;
    h.generation = 1;
    h.block_size = block_size;
    w = JournalWriter::start(file, h, RingOptions{2, 4096, false, pool}, false);
    REQUIRE(w);
  }
};

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("ring writes records in order and reads them back", T, ring_test) {
  IoEngine engine = T::value;
  TempDir dir;
  std::string path = dir.path("r.jnl");
  auto file = posix_filesystem().open(path, OpenMode::kCreateTruncate, engine);
  REQUIRE(file);
  if (engine == IoEngine::kUring) CHECK(std::string((*file)->engine_name()) == "uring");
  JournalHeader h;
  h.generation = 1;
  h.salt = 5;
  h.target_name = "r.h5";
  // Buffers small enough that records span them and the ring wraps often,
  // large enough (over UringFile's inline limit of 64 KiB) that full ones go
  // through the ring.
  auto w = JournalWriter::start(**file, h, RingOptions{3, 96 << 10, true}, true);
  REQUIRE(w);
  struct Written {
    uint64_t addr, data_off;
    std::vector<std::byte> data;
  };
  std::vector<Written> all;
  std::mt19937 rng(11);
  for (int t = 0; t < 30; ++t) {
    REQUIRE((*w)->begin());
    int n = int(rng() % 12) + 1;
    for (int i = 0; i < n; ++i) {
      auto data = pattern(rng() % 60000 + 1, uint32_t(rng()));
      uint64_t addr = rng() % 1000000;
      auto off = (*w)->append_write(addr, 0, data);
      REQUIRE(off);
      // Readable at once, from a buffer or the file.
      std::vector<std::byte> back(data.size());
      REQUIRE((*w)->read(*off, back));
      CHECK(back == data);
      all.push_back({addr, *off, std::move(data)});
    }
    REQUIRE((*w)->commit({1234, 0, 0}));
  }
  // Everything is on disk where the reader expects it.
  auto rfile = posix_filesystem().open(path, OpenMode::kReadOnly, IoEngine::kSync);
  REQUIRE(rfile);
  auto reader = JournalReader::open(**rfile);
  REQUIRE(reader);
  size_t i = 0;
  auto s = scan_committed(**reader, [&](const CommittedTxn& t) {
    for (const Record& r : t.writes) {
      REQUIRE(i < all.size());
      CHECK(r.write.address == all[i].addr);
      CHECK(r.data_offset == all[i].data_off);
      std::vector<std::byte> back(r.write.length);
      REQUIRE(read_exact(**rfile, r.data_offset, back));
      CHECK(back == all[i].data);
      ++i;
    }
    return Status::ok();
  });
  REQUIRE(s);
  CHECK(s->committed_txns == 30);
  CHECK(i == all.size());
}

TEST_CASE_TEMPLATE_INVOKE(ring_test, test::UringEngine, test::SyncEngine);

// Generation 1 of a journal in a fresh directory, through a ring of two
// 4 KiB buffers, without durability.
struct SmallRing {
  TempDir dir;
  JournalHeader h;
  Result<std::unique_ptr<File>> file;
  Result<std::unique_ptr<JournalWriter>> w = Status(Code::kInvalid, "not started");
  explicit SmallRing(IoEngine engine)
      : file(posix_filesystem().open(dir.path("small.jnl"), OpenMode::kCreateTruncate, engine)) {
    REQUIRE(file);
    h.generation = 1;
    w = JournalWriter::start(**file, h, RingOptions{2, 4096, false}, false);
    REQUIRE(w);
  }
};

TEST_CASE("a record larger than the whole ring streams through it") {
  SmallRing ring(IoEngine::kAuto);
  auto& w = ring.w;
  REQUIRE((*w)->begin());
  auto data = pattern(100000, 3);
  auto off = (*w)->append_write(0, 0, data);
  REQUIRE(off);
  REQUIRE((*w)->commit({100000, 0, 0}));
  std::vector<std::byte> back(data.size());
  REQUIRE((*w)->read(*off, back));
  CHECK(back == data);
}

// Small records read back one by one, as a checkpoint reads a block
// journaled in part commit after commit (last_writes.h): from the file,
// through the read-ahead window, never stale after a new generation
// writes the same offsets.
TEST_CASE("records past the ring read back through the window, and a new generation's replace them") {
  SmallRing ring(IoEngine::kSync);
  auto& w = ring.w;
  for (uint32_t generation = 1; generation <= 2; ++generation) {
    // 200 records of 40 to 239 bytes: most of them past the ring
    Written written = commit_records(
        **w, 200, [](uint32_t t) { return 40 + (t * 37) % 200; }, [&](uint32_t t) { return t * 7 + generation; });
    // The first generation's backwards, the last read leaving the window at
    // its first records; the second's forwards, from the same offsets.
    for (size_t k = 0; k < written.size(); ++k) {
      const auto& [off, data] = written[generation == 1 ? written.size() - 1 - k : k];
      std::vector<std::byte> back(data.size());
      REQUIRE((*w)->read(off, back));
      CHECK(back == data);
    }
    JournalHeader next = ring.h;
    next.generation = generation + 1;
    next.first_txn = (*w)->next_txn();
    REQUIRE((*w)->reset(next));
  }
}

// A checkpoint's joined reads (gathered_reads.h) are each one read of
// their own, of only their bytes, beside the small reads the window
// serves: the window is new pages to the process, and a joined read
// through it would be copied twice.
TEST_CASE("small reads past the ring share the window's read; a read of kReadAlone bytes takes its own") {
  CountedRing ring(kUnalignedCommits);  // commits packed, as with durable=false
  CountingFile& file = ring.file;
  auto& w = ring.w;
  // About 90 KiB of records, past the ring's 8 KiB.
  Written written = commit_records(**w, 300, [](uint32_t) { return 200; }, [](uint32_t t) { return t; });
  file.reads.clear();
  for (size_t k = 0; k < 20; ++k) {
    std::vector<std::byte> back(written[k].second.size());
    REQUIRE((*w)->read(written[k].first, back));
    CHECK(back == written[k].second);
  }
  CHECK(file.reads.size() == 1);  // one read of the window served all twenty
  file.reads.clear();
  std::vector<std::byte> joined(JournalWriter::kReadAlone);
  REQUIRE((*w)->read(written[100].first, joined));
  CHECK(std::equal(written[100].second.begin(), written[100].second.end(), joined.begin()));
  REQUIRE(file.reads.size() == 1);
  CHECK(file.reads[0] == JournalWriter::kReadAlone);  // its own bytes, nothing ahead
  file.reads.clear();
  std::vector<std::byte> back(written[20].second.size());
  REQUIRE((*w)->read(written[20].first, back));  // the window is still there
  CHECK(back == written[20].second);
  CHECK(file.reads.empty());
}

TEST_CASE("backpressure: every buffer is written once, in ring order") {
  CountedRing ring;
  CountingFile& file = ring.file;
  auto& w = ring.w;
  REQUIRE((*w)->begin());
  auto data = pattern(4096 * 10, 9);
  REQUIRE((*w)->append_write(0, 0, data));
  // 40 KiB of payload through 4 KiB buffers: at least ten full-buffer writes,
  // each issued once.
  CHECK(file.submitted >= 10);
  CHECK(file.submitted <= 12);
}

TEST_CASE("the ring is allocated at the first record, once, in small pages, and a session with none allocates nothing") {
  CountedRing ring;
  CountingFile& file = ring.file;
  JournalWriter& w = **ring.w;
  CHECK(file.asked.empty());  // the header went out without the ring
  REQUIRE(w.begin());
  CHECK(file.asked.empty());  // BEGIN waits for the first record
  auto data = pattern(100, 3);
  REQUIRE(w.append_write(0, 0, data));
  CHECK(file.asked == std::vector<size_t>{2 * 4096});
  CHECK(file.pages_asked == std::vector<Pages>{Pages::kSmall});  // a commit writes a buffer's start alone
  REQUIRE(w.commit({1000, 0, 0}));
  commit_records(w, 20, [](uint32_t) { return 3000; }, [](uint32_t t) { return t; });
  CHECK(file.asked.size() == 1);
}

// A session's ring goes back to the process's pool at its end
// (buffer_pool.h); the next session's first record takes it, allocates
// nothing, and its records, spanning and wrapping the reused ring, land as
// they would in a new one.
TEST_CASE("a session's ring goes back to its pool at the end, and the next session writes through it") {
  BufferPool pool;
  auto first = std::make_unique<CountedRing>(kBlockSize, &pool);
  commit_records(**first->w, 5, [](uint32_t) { return 3000; }, [](uint32_t t) { return t; });
  CHECK(first->file.asked.size() == 1);
  (*first->w)->give_back_ring();
  CHECK(pool.idle() == 1);
  first.reset();
  CountedRing second(kBlockSize, &pool);
  Written written =
      commit_records(**second.w, 20, [](uint32_t t) { return 1000 + 300 * t; }, [](uint32_t t) { return t + 50; });
  CHECK(second.file.asked.empty());
  CHECK(pool.idle() == 0);
  for (const auto& [offset, data] : written) {
    std::vector<std::byte> back(data.size());
    REQUIRE(read_exact(second.file, offset, back));
    CHECK(back == data);
  }
}

// A ring the kernel may still be writing from is no other writer's: if the
// wait for its writes fails, it stays with its writer and is freed with it.
TEST_CASE("a ring whose writes could not be waited for is not given back") {
  BufferPool pool;
  CountedRing ring(kBlockSize, &pool);
  commit_records(**ring.w, 2, [](uint32_t) { return 3000; }, [](uint32_t t) { return t; });
  ring.file.fail_wait = true;
  (*ring.w)->give_back_ring();
  CHECK(pool.idle() == 0);
}

TEST_CASE("a ring refused its memory at the first record fails that record, and the next one tries again") {
  CountedRing ring;
  CountingFile& file = ring.file;
  JournalWriter& w = **ring.w;
  file.refuse = true;
  REQUIRE(w.begin());
  auto data = pattern(100, 4);
  auto refused = w.append_write(0, 0, data);
  REQUIRE_FALSE(refused);
  CHECK(refused.status().code() == Code::kNoSpace);
  CHECK(file.submitted == 0);
  file.refuse = false;
  CHECK(w.append_write(0, 0, data));
  CHECK(file.asked.size() == 2);
}

TEST_CASE("the io_uring engine can be asked for and reports itself") {
  TempDir dir;
  auto f = posix_filesystem().open(dir.path("u"), OpenMode::kCreateTruncate, IoEngine::kUring);
  REQUIRE(f);
  CHECK(std::string((*f)->engine_name()) == "uring");
  auto s = posix_filesystem().open(dir.path("s"), OpenMode::kCreateTruncate, IoEngine::kSync);
  REQUIRE(s);
  CHECK(std::string((*s)->engine_name()) == "sync");
}

namespace {

// io_uring refused, as Docker's seccomp profile refuses it; setups counted.
struct UringRefused : Syscalls {
  int setups = 0;
  bool refuse = false;
  int uring_setup(unsigned entries, io_uring* ring) override {
    ++setups;
    return refuse ? -EPERM : Syscalls::uring_setup(entries, ring);
  }
};

}  // namespace

// A session that never fills a ring buffer pays for no ring: its setup and
// its teardown cost 60 us of a small file's create, write and close.
TEST_CASE("io_engine=auto sets its ring up at the first write that needs one, and writes at once without one") {
  TempDir dir;
  for (bool refuse : {false, true}) {
    CAPTURE(refuse);
    UringRefused sys;
    sys.refuse = refuse;
    PosixFileSystem fs(sys);
    auto f = fs.open(dir.path("a"), OpenMode::kCreateTruncate, IoEngine::kAuto);
    REQUIRE(f);
    std::vector<std::byte> small(4096, std::byte(1)), large(1 << 20, std::byte(2));
    auto t = (*f)->submit_write(0, small);  // nothing in flight, small: made at once
    REQUIRE(t);
    REQUIRE((*f)->wait_write(*t));
    CHECK(sys.setups == 0);
    CHECK(std::string((*f)->engine_name()) == "auto");
    t = (*f)->submit_write(4096, large);
    REQUIRE(t);
    REQUIRE((*f)->sync_after_writes());
    CHECK(sys.setups == 1);
    CHECK(std::string((*f)->engine_name()) == (refuse ? "sync" : "uring"));
    std::vector<std::byte> got(large.size());
    REQUIRE((*f)->read_at(4096, got));
    CHECK(got == large);
  }
  UringRefused sys;
  sys.refuse = true;
  PosixFileSystem fs(sys);
  auto forced = fs.open(dir.path("b"), OpenMode::kCreateTruncate, IoEngine::kUring);  // asked for: fails at once
  REQUIRE(!forced);
  CHECK(forced.status().message().find("io_uring setup") != std::string::npos);
}

// The zeros a durable journal writes ahead of its records reach 256 KiB past
// them at the first commit, and twice as far at each later growth, up to
// 2 MiB: a session of a few commits syncs 256 KiB of zeros, not 2 MiB, and
// a long one still grows its journal once every 2 MiB of records.
// Generation 1 of a durable journal (zeros written ahead of its records),
// through a ring of two 256 KiB buffers.
struct DurableJournal {
  TempDir dir;
  std::string path = dir.path("d.jnl");
  Result<std::unique_ptr<File>> file = posix_filesystem().open(path, OpenMode::kCreateTruncate, IoEngine::kSync);
  Result<std::unique_ptr<JournalWriter>> w = Status(Code::kInvalid, "not started");
  DurableJournal() {
    REQUIRE(file);
    JournalHeader h;
    h.generation = 1;
    w = JournalWriter::start(**file, h, RingOptions{2, 256 << 10, true}, true);
    REQUIRE(w);
  }
};

TEST_CASE("a durable journal's zeros ahead start at 256 KiB and double up to 2 MiB") {
  DurableJournal j;
  const std::string& path = j.path;
  auto& w = j.w;
  auto data = pattern(60 << 10, 4);
  std::vector<uint64_t> aheads;  // zeros past the records, at each growth
  uint64_t size = test::file_size(path);
  for (int c = 0; c < 200; ++c) {
    REQUIRE((*w)->begin());
    REQUIRE((*w)->append_write(uint64_t(c) << 16, 0, data));
    REQUIRE((*w)->commit({uint64_t(c + 1) << 16, 0, 0}));
    uint64_t now = test::file_size(path);
    if (now != size) aheads.push_back(now - kFirstRecordOffset - (*w)->generation_bytes());
    size = now;
  }
  REQUIRE(aheads.size() >= 6);
  const uint64_t KiB = 1024;
  // Each growth reaches its step past the records' end rounded up to 64 KiB,
  // and the COMMIT's block took a little of it.
  uint64_t steps[] = {256 * KiB, 512 * KiB, 1024 * KiB, 2048 * KiB, 2048 * KiB, 2048 * KiB};
  for (size_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    CHECK(aheads[i] > steps[i] - 64 * KiB);
    CHECK(aheads[i] < steps[i] + 64 * KiB);
  }
}

// The reader reads ahead (journal_reader.h): a scan of many small commits
// takes a read per piece, not two per record.  And a tail that read zeros
// ahead of the records sees the commits written there since, once it
// refreshes: the piece it holds is dropped.
TEST_CASE("the reader reads ahead in pieces, and a refresh shows a tail the commits written since") {
  struct ReadsCounted : ForwardingFile {
    using ForwardingFile::ForwardingFile;
    Result<size_t> read_at(uint64_t o, std::span<std::byte> out) override {
      ++reads;
      sizes.push_back(out.size());
      return ForwardingFile::read_at(o, out);
    }
    int reads = 0;
    std::vector<size_t> sizes;
  };
  DurableJournal j;  // zeros ahead of the records
  const std::string& path = j.path;
  auto& w = j.w;
  auto commit_some = [&](int from, int to) {
    for (int c = from; c < to; ++c) {
      REQUIRE((*w)->begin());
      REQUIRE((*w)->append_write(uint64_t(c) * 64, 0, pattern(40, uint32_t(c))));
      REQUIRE((*w)->commit({uint64_t(c + 1) * 64, 0, 0}));
    }
  };
  commit_some(0, 1000);
  auto rfile = posix_filesystem().open(path, OpenMode::kReadOnly, IoEngine::kSync);
  REQUIRE(rfile);
  ReadsCounted counted(std::move(*rfile));
  auto reader = JournalReader::open(counted);
  REQUIRE(reader);
  int opened_with = counted.reads;
  auto s = scan_committed(**reader, [](const CommittedTxn&) { return Status::ok(); });
  REQUIRE(s);
  CHECK(s->committed_txns == 1000);
  CHECK(s->end == StreamEnd::kZeroes);  // stopped at the zeros ahead
  // 3,000 records, each commit in a 4 KiB block of its own: 4 MiB, read in
  // pieces of 16 KiB, then twice as large at each read up to 1 MiB (two
  // reads a record before).
  CHECK(counted.reads - opened_with <= 10);
  CHECK((*reader)->end_offset() == s->committed_end);  // a refresh reads on from there
  commit_some(1000, 1100);  // into the zeros the reader has read
  REQUIRE((*reader)->refresh());
  int refreshed_at = counted.reads;
  uint64_t more = 0;
  auto tail = scan_committed(**reader, [&](const CommittedTxn&) { ++more; return Status::ok(); }, {1001});
  REQUIRE(tail);
  CHECK(more == 100);
  // 400 KiB of new records, from 16 KiB up again: a tail's first read is
  // small, where a durable journal's zeros lie ahead of its records.
  CHECK(counted.reads - refreshed_at <= 6);
  CHECK(counted.sizes.at(size_t(refreshed_at)) == (16u << 10));
}

// A large WRITE is read once by a scan: the window holds a piece of its
// payload and the next record's header (journal_reader.h, kWindow).  With a
// window of one piece, each 1 MiB record was read twice, from its header and
// again from its payload.
TEST_CASE("a scan reads each byte of 1 MiB records once") {
  struct BytesCounted : ForwardingFile {
    using ForwardingFile::ForwardingFile;
    Result<size_t> read_at(uint64_t o, std::span<std::byte> out) override {
      auto n = ForwardingFile::read_at(o, out);
      if (n) bytes += *n;
      return n;
    }
    uint64_t bytes = 0;
  };
  DurableJournal j;
  auto& w = j.w;
  const auto data = pattern(1 << 20, 9);
  for (int c = 0; c < 12; ++c) {
    REQUIRE((*w)->begin());
    REQUIRE((*w)->append_write(uint64_t(c) << 20, 0, data));
    REQUIRE((*w)->commit({uint64_t(c + 1) << 20, 0, 0}));
  }
  auto rfile = posix_filesystem().open(j.path, OpenMode::kReadOnly, IoEngine::kSync);
  REQUIRE(rfile);
  BytesCounted counted(std::move(*rfile));
  auto reader = JournalReader::open(counted);
  REQUIRE(reader);
  const uint64_t opened_with = counted.bytes;
  auto s = scan_committed(**reader, [](const CommittedTxn&) { return Status::ok(); });
  REQUIRE(s);
  CHECK(s->committed_txns == 12);
  // The records once, plus what the window re-reads while it grows from
  // 16 KiB (less than its size), plus one window of the zeros past them.
  CHECK(counted.bytes - opened_with <= s->committed_end + 2 * ((1u << 20) + 4096));
  CHECK(counted.bytes - opened_with >= s->committed_end - kFirstRecordOffset);
}
