// RawPattern, PatternBuilder and RawLayer against brute force: the runs a
// pattern yields in any range, the patterns a builder makes of any runs,
// and the bytes a layer lays onto any range, newest extent winning.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "allocations_file.h"
#include "apply_image.h"
#include "forwarding_file.h"
#include "gathered_reads.h"
#include "raw_layer.h"
#include "replay.h"
#include "test_util.h"

using namespace h5j;
using h5j::test::TempDir;

namespace {

struct Run {
  uint64_t addr, len, packed;
  bool operator==(const Run&) const = default;
};

std::vector<Run> runs_by_brute_force(const RawPattern& p, uint64_t lo, uint64_t hi) {
  std::vector<Run> out;
  for (uint64_t g = 0; g < p.count2; ++g)
    for (uint64_t r = 0; r < p.count1; ++r) {
      uint64_t a = p.addr + g * p.stride2 + r * p.stride1;
      uint64_t from = std::max(a, lo), to = std::min(a + p.run_len, hi);
      if (from < to) out.push_back({from, to - from, (g * p.count1 + r) * p.run_len + (from - a)});
    }
  return out;
}

RawPattern random_pattern(std::mt19937& rng) {
  RawPattern p;
  p.addr = rng() % 5000;
  p.run_len = rng() % 50 + 1;
  p.count1 = rng() % 6 + 1;
  p.stride1 = p.count1 > 1 ? p.run_len + rng() % 40 : 0;
  p.count2 = rng() % 5 + 1;
  p.stride2 = p.count2 > 1 ? p.group_span() + rng() % 300 : 0;
  return p;
}

}  // namespace

TEST_CASE("a pattern yields exactly its runs inside any range, in order, with their packed offsets") {
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {
    RawPattern p = random_pattern(rng);
    REQUIRE(p.valid());
    uint64_t lo = rng() % (p.end() + 100), hi = lo + rng() % 2000;
    std::vector<Run> got;
    p.for_each_run_in(lo, hi, [&](uint64_t a, uint64_t n, uint64_t packed) { got.push_back({a, n, packed}); });
    CHECK(got == runs_by_brute_force(p, lo, hi));
  }
}

TEST_CASE("a pattern from disk is trusted only if its runs are disjoint, increasing and in range") {
  CHECK(RawPattern::contiguous(10, 5).valid());
  CHECK_FALSE(RawPattern::contiguous(10, 0).valid());
  CHECK_FALSE((RawPattern{0, 8, 2, 4, 1, 0}.valid()));           // runs overlap
  CHECK_FALSE((RawPattern{0, 8, 2, 8, 2, 10}.valid()));          // groups overlap
  CHECK_FALSE((RawPattern{0, 8, 0, 8, 1, 0}.valid()));           // no runs
  CHECK_FALSE((RawPattern{UINT64_MAX - 4, 8, 1, 0, 1, 0}.valid()));  // past the end of the address space
  CHECK_FALSE((RawPattern{0, 8, UINT32_MAX, UINT64_MAX / 4, 1, 0}.valid()));
  CHECK((RawPattern{0, 8, 3, 8, 2, 24}.valid()));                // adjacent runs and groups are allowed
}

TEST_CASE("the builder turns a strided box into one pattern, and any runs into patterns that replay them") {
  SUBCASE("a 32^3 box of an n^3 array of doubles is one pattern") {
    const uint64_t n = 256, b = 32, e = 8;
    PatternBuilder builder;
    for (uint64_t i = 0; i < b; ++i)
      for (uint64_t j = 0; j < b; ++j) REQUIRE(builder.add(((i * n + j) * n + 64) * e, b * e));
    auto patterns = builder.take();
    REQUIRE(patterns.size() == 1);
    CHECK(patterns[0].count1 == b);
    CHECK(patterns[0].count2 == b);
    CHECK(patterns[0].stride1 == n * e);
    CHECK(patterns[0].stride2 == n * n * e);
    CHECK(builder.empty());
  }
  SUBCASE("random runs: the patterns taken cover exactly the runs added, in order") {
    std::mt19937 rng(3);
    for (int i = 0; i < 2000; ++i) {
      std::vector<Run> added, replayed;
      std::vector<RawPattern> patterns;
      PatternBuilder builder;
      uint64_t at = rng() % 100;
      for (int k = int(rng() % 30); k >= 0; --k) {
        // Mostly regular, sometimes not.
        uint64_t len = rng() % 4 ? 16 : rng() % 20 + 1;
        at += rng() % 4 ? 0 : rng() % 50;
        if (!builder.add(at, len)) {
          for (auto& p : builder.take()) patterns.push_back(p);
          REQUIRE(builder.add(at, len));
        }
        added.push_back({at, len, 0});
        at += len + (rng() % 3 ? 24 : rng() % 100);
      }
      for (auto& p : builder.take()) patterns.push_back(p);
      for (const RawPattern& p : patterns) {
        REQUIRE(p.valid());
        p.for_each_run([&](uint64_t a, uint64_t n, uint64_t) { replayed.push_back({a, n, 0}); });
      }
      // Adjacent added runs may have become one run: compare bytes covered, in order.
      auto bytes = [](const std::vector<Run>& runs) {
        std::vector<uint64_t> v;
        for (const Run& r : runs)
          for (uint64_t b = 0; b < r.len; ++b) v.push_back(r.addr + b);
        return v;
      };
      CHECK(bytes(replayed) == bytes(added));
    }
  }
}

TEST_CASE("a raw layer lays the newest extent's bytes onto any range, and leaves uncovered bytes alone") {
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    RawLayer layer;
    std::vector<std::byte> logs[2];               // two data logs (two MPI ranks')
    std::map<uint64_t, std::byte> model;          // file byte -> newest value
    bool in_memory = round % 2 == 0;              // one log, seen in place (like staged bytes)
    for (int i = int(rng() % 12) + 1; i > 0; --i) {
      RawPattern p = random_pattern(rng);
      if (rng() % 4 == 0) p.addr += uint64_t(rng() % 4) << 20;  // several buckets
      uint32_t n_log = in_memory ? 0 : rng() % 2;
      auto& log = logs[n_log];
      uint64_t src = log.size();
      for (uint64_t b = 0; b < p.bytes(); ++b) log.push_back(std::byte(rng()));
      p.for_each_run([&](uint64_t a, uint64_t n, uint64_t packed) {
        for (uint64_t b = 0; b < n; ++b) model[a + b] = log[src + packed + b];
      });
      layer.insert(p, n_log, src);
    }
    auto read = [&](uint32_t n_log, uint64_t off, std::span<std::byte> out) {
      REQUIRE(n_log < 2);
      REQUIRE(off + out.size() <= logs[n_log].size());
      std::memcpy(out.data(), logs[n_log].data() + off, out.size());
      return Status::ok();
    };
    DataLogSource source = in_memory ? DataLogSource(std::span<const std::byte>(logs[0])) : DataLogSource(read);
    for (int q = 0; q < 20; ++q) {
      uint64_t addr = rng() % (5 << 20), len = rng() % 20000 + 1;
      if (q % 2) addr = rng() % 8000;
      std::vector<std::byte> out(len, std::byte(0xEE));
      std::vector<RawLayer::Range> covered;
      REQUIRE(layer.lay_onto(addr, out, source, &covered));
      uint64_t covered_bytes = 0;
      for (size_t i = 0; i < covered.size(); ++i) {
        covered_bytes += covered[i].len;
        if (i > 0) CHECK(covered[i - 1].addr + covered[i - 1].len < covered[i].addr);  // sorted, merged
      }
      uint64_t expected_covered = 0;
      std::vector<std::byte> expected(len, std::byte(0xEE));
      for (auto it = model.lower_bound(addr); it != model.end() && it->first < addr + len; ++it, ++expected_covered)
        expected[it->first - addr] = it->second;
      CHECK(out == expected);
      CHECK(covered_bytes == expected_covered);
    }
  }
}

// A real file that must hold `model`, and the check that it does.
struct ModelFile {
  explicit ModelFile(size_t size) : model(size, std::byte(0xAA)) {
    auto opened = posix_filesystem().open(dir.path("base"), OpenMode::kCreate, IoEngine::kSync);
    REQUIRE(opened);
    file = std::move(*opened);
    REQUIRE(file->write_at(0, model));
  }
  void check() {
    std::vector<std::byte> got(model.size());
    auto n = file->read_at(0, got);
    REQUIRE(n);
    REQUIRE(*n == got.size());
    CHECK(got == model);
  }
  TempDir dir;
  std::vector<std::byte> model;
  std::unique_ptr<File> file;
};

// What placing staged bytes relies on (JournaledFile::place_staged_below): a
// bucket's gaps may hold committed bytes or another rank's, so applying a
// layer changes exactly the bytes its extents cover below the limit (with
// GapFill::kFromFile it writes nearby gaps too, with the bytes they held),
// and a write buffer kept by the caller serves one placing after another.
TEST_CASE("applying a raw layer writes only the bytes it covers, below the limit, through a kept buffer") {
  ModelFile f(64 << 10);
  std::vector<std::byte>& model = f.model;
  std::mt19937 rng(5);
  ApplyBuffers kept;  // kept across the placings, as the writer keeps its own
  for (int placing = 0; placing < 60; ++placing) {
    GapFill gaps = placing % 2 ? GapFill::kFromFile : GapFill::kLeave;
    RawLayer layer(12);  // 4 KiB buckets: many per placing
    std::vector<std::byte> log;
    std::vector<std::pair<RawPattern, uint64_t>> extents;
    for (int i = int(rng() % 8) + 1; i > 0; --i) {
      RawPattern p = random_pattern(rng);
      p.addr += rng() % (48 << 10);
      extents.emplace_back(p, log.size());
      layer.insert(p, 0, log.size());
      for (uint64_t b = 0; b < p.bytes(); ++b) log.push_back(std::byte(rng()));
    }
    uint64_t limit = placing % 3 == 0 ? rng() % model.size() : UINT64_MAX;
    for (const auto& extent : extents)  // oldest first: the newest wins
      extent.first.for_each_run([&](uint64_t a, uint64_t n, uint64_t packed) {
        for (uint64_t b = a; b < a + n && b < limit; ++b) model[b] = log[extent.second + packed + (b - a)];
      });
    REQUIRE(apply_raw_layer(layer, limit, DataLogSource(std::span<const std::byte>(log)), *f.file, gaps, nullptr, &kept));
    f.check();
  }
  CHECK(kept.run.valid());  // allocated by the first placing that wrote, and kept
}

// What materialization and replay rely on: the overlay's bytes land over
// the raw layer's, wherever either starts, and holes in both keep what the
// file held.
TEST_CASE("an image lands its overlay over its raw layer, and leaves the holes in both alone") {
  ModelFile f(96 << 10);
  std::vector<std::byte>& model = f.model;
  std::mt19937 rng(11);
  for (int image = 0; image < 20; ++image) {
    RawLayer raw(12);
    ExtentMap overlay;
    std::vector<std::byte> log, journal;
    for (int i = int(rng() % 4) + 1; i > 0; --i) {
      RawPattern p = RawPattern::contiguous(rng() % (80 << 10), 1 + rng() % 12000);
      raw.insert(p, 0, log.size());
      for (uint64_t b = 0; b < p.bytes(); ++b) log.push_back(std::byte(rng()));
      for (uint64_t b = 0; b < p.bytes(); ++b) model[p.addr + b] = log[log.size() - p.bytes() + b];
    }
    for (int i = int(rng() % 4) + 1; i > 0; --i) {
      uint64_t addr = rng() % (80 << 10), len = 1 + rng() % 12000;
      overlay.insert(addr, len, journal.size());
      for (uint64_t b = 0; b < len; ++b) journal.push_back(std::byte(rng()));
      for (uint64_t b = 0; b < len; ++b) model[addr + b] = journal[journal.size() - len + b];
    }
    auto from_journal = [&](uint64_t off, std::span<std::byte> out) {
      std::memcpy(out.data(), journal.data() + off, out.size());
      return Status::ok();
    };
    REQUIRE(
        apply_image(raw, overlay, model.size(), from_journal, DataLogSource(std::span<const std::byte>(log)), *f.file));
    f.check();
  }
}

namespace {

// The lengths of the writes write_overlay makes of `overlay` into f's
// file, its sources `journal`'s bytes, through the buffers `kept`.
std::vector<size_t> overlay_writes(ModelFile& f, const ExtentMap& overlay, const std::vector<std::byte>& journal,
                                   ApplyBuffers& kept) {
  struct WritesCounted : ForwardingFile {
    using ForwardingFile::ForwardingFile;
    Status write_at(uint64_t o, std::span<const std::byte> d) override {
      lengths.push_back(d.size());
      return ForwardingFile::write_at(o, d);
    }
    std::vector<size_t> lengths;
  };
  auto from_journal = [&](uint64_t off, std::span<std::byte> out) {
    std::memcpy(out.data(), journal.data() + off, out.size());
    return Status::ok();
  };
  auto second = posix_filesystem().open(f.dir.path("base"), OpenMode::kReadWrite, IoEngine::kSync);
  REQUIRE(second);
  WritesCounted counted(std::move(*second));
  REQUIRE(write_overlay(overlay, 0, f.model.size(), from_journal, counted, &kept));
  return counted.lengths;
}

}  // namespace

// The write buffer starts small and grows once, to one huge page
// (RunWriter): a run longer than its first size still goes out whole, in
// one write, with the bytes gathered before the growth kept.
TEST_CASE("a run longer than the write buffer's first size is written whole, in one write") {
  ModelFile f(1 << 20);
  std::mt19937 rng(3);
  ExtentMap overlay;
  std::vector<std::byte> journal;
  uint64_t addr = 4096;
  for (uint64_t len : {40 << 10, 100 << 10, 300 << 10}) {  // adjacent: one run of 440 KiB
    journal.resize(journal.size() + 512);  // apart in the journal: three extents, not one
    overlay.insert(addr, len, journal.size());
    for (uint64_t b = 0; b < len; ++b) journal.push_back(std::byte(rng()));
    std::memcpy(f.model.data() + addr, journal.data() + journal.size() - len, len);
    addr += len;
  }
  ApplyBuffers kept;
  CHECK(overlay_writes(f, overlay, journal, kept).size() == 1);
  CHECK(kept.run.size() == kLongestApplyWrite);  // one huge page, where doubling took 4 allocations
  CHECK(reinterpret_cast<uintptr_t>(kept.run.data()) % kHugePage == 0);  // so the advice covers it all
  f.check();
}

// A replay of large journaled extents copies them through the write
// buffer: it stops growing at kLongestApplyWrite, whose pages are each a
// fault to touch first, and the run goes out in writes of that size.
TEST_CASE("a run longer than the longest write goes out in writes of that size, through a buffer no larger") {
  const uint64_t len = kLongestApplyWrite * 5 / 2;
  ModelFile f(len + 8192);
  std::mt19937 rng(4);
  std::vector<std::byte> journal(512);
  for (uint64_t b = 0; b < len; ++b) journal.push_back(std::byte(rng()));
  ExtentMap overlay;
  overlay.insert(4096, len, 512);
  std::memcpy(f.model.data() + 4096, journal.data() + 512, len);
  ApplyBuffers kept;
  CHECK(overlay_writes(f, overlay, journal, kept) ==
        std::vector<size_t>{kLongestApplyWrite, kLongestApplyWrite, kLongestApplyWrite / 2});
  CHECK(kept.run.size() == kLongestApplyWrite);
  f.check();
}

// What a writer's applies rely on (ApplyBuffers): buffers kept by the
// caller serve one apply after another from the same memory, so their
// pages are faulted in once a session, and a slice of many small extents
// is gathered in huge pages.  The memory is looked at through the bytes a
// slice's first range is read into, which start the gathered buffer.
TEST_CASE("kept apply buffers serve apply after apply from the same memory, the large ones in huge pages") {
  ModelFile f(2 << 20);
  std::mt19937 rng(6);
  ApplyBuffers kept;
  const std::byte* first_range = nullptr;
  auto from_journal_seen = [&](const std::vector<std::byte>& journal) {
    return [&, first = true](uint64_t off, std::span<std::byte> out) mutable {
      if (first) first_range = out.data();  // the lowest source, read first, lands at the buffer's start
      first = false;
      std::memcpy(out.data(), journal.data() + off, out.size());
      return Status::ok();
    };
  };
  std::vector<const std::byte*> runs, gathered;
  for (int apply = 0; apply < 3; ++apply) {
    ExtentMap overlay;
    std::vector<std::byte> journal;
    for (uint64_t addr = 0; addr < (1536u << 10); addr += 16 << 10) {  // 96 small extents, 12 KiB apart
      journal.resize(journal.size() + GatheredReads::kJoinGap + 1);  // each read alone, into its place
      overlay.insert(addr, 4 << 10, journal.size());
      for (int b = 0; b < (4 << 10); ++b) journal.push_back(std::byte(rng()));
      std::memcpy(f.model.data() + addr, journal.data() + journal.size() - (4 << 10), 4 << 10);
    }
    REQUIRE(write_overlay(overlay, 0, f.model.size(), from_journal_seen(journal), *f.file, &kept));
    f.check();
    runs.push_back(kept.run.data());
    gathered.push_back(first_range);
  }
  CHECK(runs[1] == runs[0]);
  CHECK(runs[2] == runs[0]);
  CHECK(gathered[1] == gathered[0]);
  CHECK(gathered[2] == gathered[0]);
  CHECK(reinterpret_cast<uintptr_t>(gathered[0]) % kHugePage == 0);  // 384 KiB gathered: past the heap's buffer
}

// The gathered buffer, like the write buffer, comes from the file the
// apply writes (File::allocate_buffer): the engine's seam, where the fault
// sweep refuses allocations.  Refused, the apply fails with the seam's
// error, and writes nothing.
TEST_CASE("an apply takes its gathered buffer from the file it writes, and fails cleanly when refused") {
  ModelFile f(1 << 20);
  std::mt19937 rng(8);
  ExtentMap overlay;
  std::vector<std::byte> journal;
  for (uint64_t addr = 0; addr < (512u << 10); addr += 16 << 10) {  // 32 small extents: 128 KiB gathered
    journal.resize(journal.size() + GatheredReads::kJoinGap + 1);
    overlay.insert(addr, 4 << 10, journal.size());
    for (int b = 0; b < (4 << 10); ++b) journal.push_back(std::byte(rng()));
  }
  auto from_journal = [&](uint64_t off, std::span<std::byte> out) {
    std::memcpy(out.data(), journal.data() + off, out.size());
    return Status::ok();
  };
  test::AllocationsFile seam(f.dir.path("base"), UniqueFd(::open(f.dir.path("base").c_str(), O_RDWR | O_CLOEXEC)));
  seam.refuse = true;
  ApplyBuffers kept;
  Status refused = write_overlay(overlay, 0, f.model.size(), from_journal, seam, &kept);
  CHECK(refused.code() == Code::kNoSpace);
  CHECK(refused.message().find("buffer allocation refused") != std::string::npos);
  CHECK(seam.pages_asked == std::vector<Pages>{Pages::kHuge});  // 128 KiB: past the heap's 64 KiB
  f.check();  // nothing written
  seam.refuse = false;
  REQUIRE(write_overlay(overlay, 0, f.model.size(), from_journal, seam, &kept));
  for (uint64_t addr = 0, at = 0; addr < (512u << 10); addr += 16 << 10) {
    at += GatheredReads::kJoinGap + 1;
    std::memcpy(f.model.data() + addr, journal.data() + at, 4 << 10);
    at += 4 << 10;
  }
  f.check();
}

// A metadata block rewritten in part at every commit is many small
// extents whose sources run backwards through the journal as its addresses
// run forwards (gathered_reads.h).  Applied, the file gets every byte by
// address, and the journal is read in journal order, one pass per slice:
// the small extents' sources sorted, those close together read in one
// call, the large ones read where they land.
TEST_CASE("an overlay's small extents are read from the journal in journal order, and land by address") {
  constexpr uint64_t kSmall = 70'000;  // more than one slice's ranges
  static_assert(kSmall > GatheredReads::kMaxRanges);
  ModelFile f(kSmall * 16 + (256 << 10));
  std::mt19937 rng(5);
  ExtentMap overlay;
  std::vector<std::byte> journal;
  auto journal_bytes = [&](uint64_t addr, uint64_t len) {
    overlay.insert(addr, len, journal.size());
    for (uint64_t b = 0; b < len; ++b) journal.push_back(std::byte(rng()));
    std::memcpy(f.model.data() + addr, journal.data() + journal.size() - len, len);
  };
  for (uint64_t i = kSmall; i-- > 0;) {  // the last address journaled first
    if (i % 1000 == 0) journal.resize(journal.size() + GatheredReads::kJoinGap + 1);  // too far to join
    journal_bytes(i * 16, 8);
  }
  journal_bytes(kSmall * 16 + (64 << 10), 100 << 10);  // a large extent, in the last slice
  journal_bytes(kSmall * 8 + 4, 4);                    // splits a small one, in the first
  struct Read {
    uint64_t offset, len;
  };
  std::vector<Read> reads;
  auto from_journal = [&](uint64_t off, std::span<std::byte> out) {
    reads.push_back({off, out.size()});
    std::memcpy(out.data(), journal.data() + off, out.size());
    return Status::ok();
  };
  RawLayer raw(12);
  std::vector<std::byte> log;
  REQUIRE(apply_image(raw, overlay, f.model.size(), from_journal, DataLogSource(std::span<const std::byte>(log)),
                      *f.file));
  f.check();
  size_t backwards = 0;
  for (size_t i = 1; i < reads.size(); ++i) backwards += reads[i].offset < reads[i - 1].offset;
  CHECK(backwards <= 2);  // into the second slice, and to the large extent
  // 71 runs of sources close together (999, then 69 of 1,000, then 1),
  // one of them cut where the slices part; the large extent; the lone 4
  // bytes journaled last.
  CHECK(reads.size() == 74);
  // Joined reads stay within the buffer that is kept; only the large
  // extent, read where it lands, is longer.
  size_t longer = 0;
  for (const Read& r : reads) longer += r.len > GatheredReads::kMaxJoined;
  CHECK(longer == 1);
}

// A ZERO record of space never written may reach far past the file's end
// (unwritten_space.h): what lies past it is not written, and still reads
// as zeros, under raw bytes the zeros cover and before later journal bytes.
TEST_CASE("zeros past the file's end read as zeros without being written") {
  ModelFile f(40 << 10);  // 0xAA bytes
  std::vector<std::byte>& model = f.model;
  model.resize(256 << 10, std::byte(0));
  RawLayer raw(12);
  std::vector<std::byte> log(10 << 10, std::byte(0x11));
  raw.insert(RawPattern::contiguous(100 << 10, log.size()), 0, 0);  // under the zeros: they win
  ExtentMap overlay;
  overlay.insert(30 << 10, (200 - 30) << 10, ExtentMap::kZeroSource);  // straddles the file's end
  std::vector<std::byte> journal(10 << 10, std::byte(0x22));
  overlay.insert(220 << 10, journal.size(), 0);
  std::fill(model.begin() + (30 << 10), model.begin() + (40 << 10), std::byte(0));
  std::fill(model.begin() + (220 << 10), model.begin() + (230 << 10), std::byte(0x22));
  auto from_journal = [&](uint64_t off, std::span<std::byte> out) {
    std::memcpy(out.data(), journal.data() + off, out.size());
    return Status::ok();
  };
  REQUIRE(apply_image(raw, overlay, model.size(), from_journal, DataLogSource(std::span<const std::byte>(log)), *f.file));
  f.check();
}

// A ZERO record of a contiguous dataset's unwritten space spans all HDF5
// allocated, gigabytes perhaps, where an uncommitted write may have left a
// few MiB: zeros go over those, and over raw bytes laid before them, while
// the file's holes stay holes (apply_image.cc, write_zeros).
TEST_CASE("zeros over a sparse file go where it holds data, and its holes stay holes") {
  TempDir dir;
  auto opened = posix_filesystem().open(dir.path("base"), OpenMode::kCreate, IoEngine::kSync);
  REQUIRE(opened);
  File& file = **opened;
  constexpr uint64_t kMiB = 1 << 20, kSpan = 256 * kMiB;
  std::vector<std::byte> head(4096, std::byte(0xAA)), left(kMiB, std::byte(0xBB));
  REQUIRE(file.write_at(0, head));                 // below the zeros: kept
  REQUIRE(file.write_at(100 * kMiB + 123, left));  // an uncommitted write, not block-aligned
  REQUIRE(file.write_at(kSpan - kMiB, left));      // the file's last MiB
  RawLayer raw(12);
  std::vector<std::byte> log(64 << 10, std::byte(0x11));
  raw.insert(RawPattern::contiguous(50 * kMiB, log.size()), 0, 0);  // in a hole, under the zeros, first
  ExtentMap overlay;
  overlay.insert(4096, kSpan - 4096, ExtentMap::kZeroSource);
  auto no_journal = [](uint64_t, std::span<std::byte>) { return Status(Code::kInvalid, "no journal bytes here"); };
  REQUIRE(apply_image(raw, overlay, kSpan, no_journal, DataLogSource(std::span<const std::byte>(log)), file));

  auto holds_only = [&](uint64_t addr, uint64_t len, std::byte value) {
    std::vector<std::byte> got(len);
    auto n = file.read_at(addr, got);
    REQUIRE(n);
    REQUIRE(*n == len);
    return std::all_of(got.begin(), got.end(), [&](std::byte b) { return b == value; });
  };
  CHECK(holds_only(0, 4096, std::byte(0xAA)));
  CHECK(holds_only(4096, 4096, std::byte(0)));
  CHECK(holds_only(100 * kMiB, kMiB + 4096, std::byte(0)));
  CHECK(holds_only(50 * kMiB, log.size(), std::byte(0)));
  CHECK(holds_only(kSpan - kMiB, kMiB, std::byte(0)));
  auto size = file.size();
  REQUIRE(size);
  CHECK(*size == kSpan);
  struct stat st {};
  REQUIRE(::stat(dir.path("base").c_str(), &st) == 0);
  CHECK(uint64_t(st.st_blocks) * 512 < 8 * kMiB);  // about 2 MiB of it written, not 256
}
