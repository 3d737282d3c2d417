// JournaledFile against a model.  Random writes (below and above the
// protected end), metadata blocks rewritten in part, shrinks and regrowths, commits, checkpoints, and crashes
// (the object dropped without close, which is what a killed process leaves,
// since the page cache keeps every write).  After every crash the file,
// reopened read-only and read-write, must equal the model's last commit.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <vector>

#include "engine_test_util.h"
#include "journaled_file.h"
#include "test_util.h"

using namespace h5j;
using namespace h5j::test;

namespace {

struct Model {
  std::vector<std::byte> current, committed;
  std::map<uint64_t, std::vector<std::byte>> blocks;  // rewrite_block's last write at each address
};

void model_write(Model& m, uint64_t addr, const std::vector<std::byte>& data) {
  if (m.current.size() < addr + data.size()) m.current.resize(addr + data.size(), std::byte(0));
  std::copy(data.begin(), data.end(), m.current.begin() + ptrdiff_t(addr));
}

std::vector<std::byte> random_bytes(size_t n, std::mt19937& rng) {
  std::vector<std::byte> data(n);
  for (auto& b : data) b = std::byte(rng());
  return data;
}

// The pieces of a vector write: a strided block (count2 groups of count1
// runs), or a few pieces anywhere, in any order, overlapping or not.
std::vector<std::pair<uint64_t, std::vector<std::byte>>> random_vector(uint64_t size, std::mt19937& rng) {
  std::vector<std::pair<uint64_t, std::vector<std::byte>>> pieces;
  uint64_t start = size == 0 ? 0 : rng() % (size + 2000);
  if (rng() % 3 == 0) {
    for (unsigned i = rng() % 4 + 1; i > 0; --i) pieces.emplace_back(rng() % (size + 2000), random_bytes(rng() % 500 + 1, rng));
    return pieces;
  }
  uint64_t run = rng() % 64 + 1, stride1 = run + rng() % 100, count1 = rng() % 8 + 1, count2 = rng() % 4 + 1;
  uint64_t stride2 = (count1 - 1) * stride1 + run + rng() % 200;
  for (uint64_t g = 0; g < count2; ++g)
    for (uint64_t r = 0; r < count1; ++r) pieces.emplace_back(start + g * stride2 + r * stride1, random_bytes(run, rng));
  return pieces;
}

// HDF5's way with metadata: a block rewritten whole with a few bytes
// changed, at one of a few addresses, so that the rewrite journals only
// those (last_writes.h) among raw writes and cuts over the same bytes.
// Half the time it starts from the block's last write rather than from
// what the file holds: HDF5 writing a block back as it was over bytes
// a raw write or a cut changed since.
void rewrite_block(JournaledFile& f, Model& m, std::mt19937& rng) {
  static constexpr uint64_t kBlocks[][2] = {{0, 512}, {1000, 2048}, {4096, 96}};
  const auto [addr, len] = kBlocks[rng() % 3];
  std::vector<std::byte>& last = m.blocks[addr];
  std::vector<std::byte> data(len);
  if (!last.empty() && rng() % 2) data = last;
  else
    for (uint64_t i = 0; i < len; ++i) data[i] = addr + i < m.current.size() ? m.current[addr + i] : std::byte(0);
  for (unsigned k = rng() % 4; k > 0; --k) data[rng() % len] = std::byte(rng());
  REQUIRE(f.write(addr, data, 0));
  model_write(m, addr, data);
  last = data;
}

// A third of the writes rewrite a metadata block.  Half the others are raw
// data (write_raw): in the data log with RawMode::kLog, and half of those
// are vector writes.
void random_write(JournaledFile& f, Model& m, std::mt19937& rng) {
  uint64_t size = m.current.size();
  if (rng() % 3 == 0) return rewrite_block(f, m, rng);
  if (rng() % 4 == 0) {
    auto pieces = random_vector(size, rng);
    std::vector<RawPiece> raw;
    for (const auto& [addr, data] : pieces) raw.push_back({addr, data});
    REQUIRE(f.write_raw(raw, 3));
    for (const auto& [addr, data] : pieces) model_write(m, addr, data);
    return;
  }
  uint64_t addr = size == 0 ? 0 : rng() % (size + 2000);
  auto data = random_bytes(rng() % 3000 + 1, rng);
  REQUIRE((rng() % 3 ? f.write_raw(addr, data, 3) : f.write(addr, data, 0)));
  model_write(m, addr, data);
}

void random_resize(JournaledFile& f, Model& m, std::mt19937& rng) {
  uint64_t size = rng() % (m.current.size() + 4000);
  REQUIRE(f.set_size(size));
  m.current.resize(size, std::byte(0));
  if (size < m.current.size()) m.current.resize(size);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("journaled file equals its last commit after every crash", T, store_test) {
  IoEngine engine = T::value;
  for (uint64_t checkpoint : {uint64_t(16) << 10, uint64_t(64) << 20}) {
    for (uint32_t seed = 1; seed <= 6; ++seed) {
      // Writes are 1 to 3000 bytes: with a threshold of 1500 some above the
      // protected end go in place and some are journaled.  Seeds 5 and 6
      // keep raw data in the data log, seeds 3 and 4 choose (kAuto).
      uint64_t inplace_min = seed % 2 ? 0 : 1500;
      RawMode raw = seed >= 5 ? RawMode::kLog : seed >= 3 ? RawMode::kAuto : RawMode::kInPlace;
      CAPTURE(seed);
      CAPTURE(checkpoint);
      CAPTURE(inplace_min);
      TempDir dir;
      std::string path = dir.path("f.h5"), jpath = path + ".jnl";
      std::mt19937 rng(seed);
      Model m;
      auto opts = options(jpath, engine, checkpoint);
      opts.inplace_min_bytes = inplace_min;
      opts.raw_mode = raw;
      auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
      REQUIRE(f);
      bool ever_committed = false;
      for (int round = 0; round < 8; ++round) {
        int ops = int(rng() % 40) + 1;
        for (int i = 0; i < ops; ++i) {
          unsigned what = rng() % 20;
          if (what < 14) random_write(**f, m, rng);
          else if (what < 16) random_resize(**f, m, rng);
          else if (what < 19) {
            REQUIRE((*f)->commit());
            m.committed = m.current;
            ever_committed = true;
          } else {
            CHECK(read_all(**f) == m.current);
          }
        }
        CHECK(read_all(**f) == m.current);
        // Crash: drop the handle without closing.
        f = Status(Code::kIoError, "crashed");
        auto file_before = test::read_file(path);
        auto journal_before = test::read_file(jpath);
        if (!ever_committed) {
          // Created and never committed: refused as such, and left alone.
          for (Access a : {Access::kReadOnly, Access::kReadWrite})
            CHECK(JournaledFile::open(path, a, opts).status().code() == Code::kNeverCommitted);
          CHECK(test::read_file(path) == file_before);
          CHECK(test::read_file(jpath) == journal_before);
          f = JournaledFile::open(path, Access::kCreateTruncate, opts);
          REQUIRE(f);
          m.current = m.committed;
          continue;
        }
        auto ro = JournaledFile::open(path, Access::kReadOnly, opts);
        REQUIRE(ro);
        CHECK(read_all(**ro) == m.committed);
        REQUIRE((*ro)->close());
        ro = Status(Code::kIoError, "closed");
        // A read-only recovery replays in memory and modifies no file.
        CHECK(test::read_file(path) == file_before);
        CHECK(test::read_file(jpath) == journal_before);
        f = JournaledFile::open(path, Access::kReadWrite, opts);
        REQUIRE(f);
        CHECK((*f)->report().journal_found);
        CHECK(read_all(**f) == m.committed);
        m.current = m.committed;
      }
      REQUIRE((*f)->close());
      CHECK(!posix_filesystem().exists(jpath));
      CHECK(!posix_filesystem().exists(data_log_path_for(jpath)));
      CHECK(test::read_file(path) == m.committed);
    }
  }
}

TEST_CASE_TEMPLATE_INVOKE(store_test, test::UringEngine, test::SyncEngine);

TEST_CASE_FIXTURE(FileInDir, "an uncommitted tail is discarded and the file is restored to its committed size") {
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  std::vector<std::byte> a(10000, std::byte(1)), b(10000, std::byte(2));
  REQUIRE((*f)->write(0, a, 0));
  REQUIRE((*f)->commit());
  REQUIRE((*f)->write(0, b, 0));       // below the committed size: journaled
  REQUIRE((*f)->write(10000, b, 0));   // above: in place
  CHECK(test::file_size(path) == 20000);
  f = Status(Code::kIoError, "crashed");
  // The committed bytes were never touched in place.
  CHECK(test::read_file(path)[0] == std::byte(1));
  auto r = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(r);
  CHECK((*r)->size() == 10000);
  CHECK(test::file_size(path) == 10000);
  REQUIRE((*r)->close());
  CHECK(test::read_file(path) == a);
}

TEST_CASE_FIXTURE(FileInDir, "recovery=refuse names h5recover and changes nothing") {
  crash_after_two_commits(path, opts, 3);
  auto before = test::read_file(path);
  auto jbefore = test::read_file(path + ".jnl");
  opts.recover_on_open = false;
  auto f = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(!f);
  CHECK(f.status().code() == Code::kNeedsRecovery);
  CHECK(f.status().message().find("h5recover") != std::string::npos);
  CHECK(test::read_file(path) == before);
  CHECK(test::read_file(path + ".jnl") == jbefore);
}

// A file created empty whose writer died before its first commit: every
// kind of open refuses it with kNeverCommitted and changes nothing; a
// truncating create starts over.
TEST_CASE_FIXTURE(FileInDir, "a file that never committed is left as it is, and named so") {
  crash_after_two_commits(path, opts, 3);  // a bound file, as before a second run
  {
    auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(f);
    REQUIRE((*f)->write(0, std::vector<std::byte>(3000, std::byte(9)), 0));
    REQUIRE((*f)->write(3000, std::vector<std::byte>(200000, std::byte(8)), 0));  // new space: in place
  }  // killed before any commit
  auto before = test::read_file(path);
  auto jbefore = test::read_file(path + ".jnl");
  CHECK(before.size() >= 203000);
  for (Access a : {Access::kReadOnly, Access::kReadWrite}) {
    auto f = JournaledFile::open(path, a, opts);
    REQUIRE(!f);
    CHECK(f.status().code() == Code::kNeverCommitted);
    CHECK(f.status().message().find(a == Access::kReadOnly ? "has no commit yet" : "never committed") !=
          std::string::npos);
    CHECK(test::read_file(path) == before);
    CHECK(test::read_file(path + ".jnl") == jbefore);
  }
  auto again = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(again);
  CHECK((*again)->size() == 0);
  REQUIRE((*again)->write(0, std::vector<std::byte>(100, std::byte(7)), 0));
  REQUIRE((*again)->commit());
  again = Status(Code::kIoError, "crashed");
  auto reopened = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(reopened);  // its one commit recovers: the old binding is gone
  CHECK((*reopened)->size() == 100);
}

// The same file, written whole since by a program without the driver (sec2
// as root passes over the write protection): the journal holds nothing of
// it, and the error says so, and how to remove the journal, not the file.
TEST_CASE_FIXTURE(FileInDir, "a never-committed journal beside a file written whole since names h5recover") {
  {
    auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(f);
    REQUIRE((*f)->write(0, hdf5_like_file(), 0));
  }  // killed before any commit: the signature was held back
  CHECK(test::read_file(path)[0] == std::byte(0));
  test::write_file(path, hdf5_like_file());  // HDF5 without the driver
  auto jbefore = test::read_file(path + ".jnl");
  for (Access a : {Access::kReadOnly, Access::kReadWrite}) {
    auto f = JournaledFile::open(path, a, opts);
    REQUIRE(!f);
    CHECK(f.status().code() == Code::kNeverCommitted);
    CHECK(f.status().message().find("written without h5journal since") != std::string::npos);
    CHECK(f.status().message().find("h5recover --discard-journal " + path) != std::string::npos);
    CHECK(f.status().message().find("remove them") == std::string::npos);
    CHECK(test::read_file(path) == hdf5_like_file());
    CHECK(test::read_file(path + ".jnl") == jbefore);
  }
}

// An existing file opened for writing and killed before its first commit is
// simply its last commit: not "never committed".
TEST_CASE_FIXTURE(FileInDir, "an existing file killed before its session's first commit recovers to itself") {
  {
    auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
    REQUIRE(f);
    REQUIRE((*f)->write(0, std::vector<std::byte>(5000, std::byte(4)), 0));
    REQUIRE((*f)->close());
  }
  {
    auto f = JournaledFile::open(path, Access::kReadWrite, opts);
    REQUIRE(f);
    REQUIRE((*f)->write(0, std::vector<std::byte>(10, std::byte(5)), 0));
  }
  auto r = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(r);
  CHECK(read_all(**r) == std::vector<std::byte>(5000, std::byte(4)));
}

TEST_CASE("a journal of another file, an older journal, and a missing journal are reported") {
  TempDir dir;
  std::string a = dir.path("a.h5"), b = dir.path("b.h5");
  auto oa = options(a + ".jnl", IoEngine::kAuto, 64 << 20);
  auto ob = options(b + ".jnl", IoEngine::kAuto, 64 << 20);
  crash_after_two_commits(a, oa, 7);
  crash_after_two_commits(b, ob, 7);
  bool xattrs = [&] {
    auto f = posix_filesystem().open(a, OpenMode::kReadOnly, IoEngine::kSync);
    auto v = (*f)->get_xattr(kBindingXattr);
    return v && v->has_value();
  }();

  SUBCASE("foreign") {
    // b's journal beside a.
    test::write_file(a + ".jnl", test::read_file(b + ".jnl"));
    auto before = test::read_file(a);
    auto f = JournaledFile::open(a, Access::kReadWrite, oa);
    REQUIRE(!f);
    CHECK(f.status().code() == Code::kForeign);
    CHECK(f.status().message().find("another file") != std::string::npos);
    CHECK(test::read_file(a) == before);
  }
  SUBCASE("missing") {
    if (!xattrs) return;  // without xattrs the driver's superblock check covers this (see vfd tests)
    (void)posix_filesystem().remove(a + ".jnl");
    auto f = JournaledFile::open(a, Access::kReadWrite, oa);
    REQUIRE(!f);
    CHECK(f.status().code() == Code::kMissing);
    CHECK(f.status().message().find("missing") != std::string::npos);
    auto r = JournaledFile::open(a, Access::kReadOnly, oa);
    CHECK(r.status().code() == Code::kMissing);
  }
  SUBCASE("older generation") {
    if (!xattrs) return;
    auto old_journal = test::read_file(a + ".jnl");
    {
      // Recover (generation 2 starts), commit and crash again.
      auto f = JournaledFile::open(a, Access::kReadWrite, oa);
      REQUIRE(f);
      REQUIRE((*f)->write(0, std::vector<std::byte>(10, std::byte(9)), 0));
      REQUIRE((*f)->commit());
    }
    test::write_file(a + ".jnl", old_journal);
    auto f = JournaledFile::open(a, Access::kReadWrite, oa);
    REQUIRE(!f);
    CHECK(f.status().code() == Code::kForeign);
    CHECK(f.status().message().find("older") != std::string::npos);
  }
}

TEST_CASE_FIXTURE(FileInDir, "shrinking then growing reads zeros, live and after recovery") {
  auto f = JournaledFile::open(path, Access::kCreateTruncate, opts);
  REQUIRE(f);
  REQUIRE((*f)->write(0, std::vector<std::byte>(8000, std::byte(5)), 0));
  REQUIRE((*f)->commit());
  REQUIRE((*f)->set_size(1000));
  REQUIRE((*f)->write(7000, std::vector<std::byte>(10, std::byte(6)), 0));
  std::vector<std::byte> mid(100);
  REQUIRE((*f)->read(3000, mid));
  CHECK(mid == std::vector<std::byte>(100, std::byte(0)));
  REQUIRE((*f)->commit());
  f = Status(Code::kIoError, "crashed");
  auto r = JournaledFile::open(path, Access::kReadWrite, opts);
  REQUIRE(r);
  REQUIRE((*r)->read(3000, mid));
  CHECK(mid == std::vector<std::byte>(100, std::byte(0)));
  REQUIRE((*r)->close());
  auto bytes = test::read_file(path);
  REQUIRE(bytes.size() == 7010);
  CHECK(bytes[999] == std::byte(5));
  CHECK(bytes[1000] == std::byte(0));
  CHECK(bytes[7005] == std::byte(6));
}
