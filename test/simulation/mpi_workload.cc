#include "mpi_workload.h"

#include <cstring>

#include "coding.h"
#include "ranks_in_one_process.h"

namespace h5j::explorer {
namespace {

void must(const Status& s, const std::string& what) {
  if (!s) throw WorkloadError{what, s.message()};
}

// Bytes no other write repeats, never zero (a zero-filled tear shows).
std::vector<std::byte> fill(uint64_t len, uint32_t seed) {
  std::vector<std::byte> v(len);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x = x * 1103515245u + 12345u;
    b = std::byte((x >> 16) | 1);
  }
  return v;
}

struct Range {
  uint64_t addr, len;
};

// The file's expected contents: every rank's writes, in the order issued.
struct Model {
  std::vector<std::byte> bytes;
  // New space at the end, as HDF5 allocates it (every rank agrees on it).
  uint64_t alloc(uint64_t len) {
    bytes.resize(bytes.size() + len);
    return bytes.size() - len;
  }
  void put(uint64_t addr, std::span<const std::byte> data) { std::memcpy(bytes.data() + addr, data.data(), data.size()); }
  std::string snapshot() const { return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()); }
};

// One open of the file by every rank: [0] is rank 0, the owner; [r] follower r.
class Session {
 public:
  Session(Model& model, CommitLog& log) : model_(model), log_(log) {}

  // open_journaled: rank 0 opens (and recovers) first, then the followers.
  void open(JournalOptions o, const std::string& file, Access access, int followers) {
    for (int rank = 0; rank <= followers; ++rank) {
      o.role = rank == 0 ? Role::kMpiOwner : Role::kMpiFollower;
      o.data_log = uint32_t(rank);
      o.ranks = uint32_t(followers + 1);
      auto f = JournaledFile::open(file, rank == 0 ? access : Access::kReadWrite, o);
      must(f.status(), "open on rank " + std::to_string(rank));
      ranks_.push_back(std::move(*f));
    }
  }
  int followers() const { return int(ranks_.size()) - 1; }

  // H5Fwait_journal_durable on every rank: every commit so far durable.
  void wait_durable() {
    must(test::wait_durable_in_one_process(handles()), "wait for durability");
    log_.durable_so_far(ranks_[0]->stats().commits, ranks_[0]->stats().durable_commits);
  }

  // Metadata: rank 0's alone (PROCESS_0_ONLY).
  void meta(Range r, uint32_t seed) {
    auto data = fill(r.len, seed);
    must(ranks_[0]->write(r.addr, data, 1), "metadata write on rank 0");
    model_.put(r.addr, data);
  }

  // One vector write of raw data by `rank`.
  void raw(int rank, const std::vector<Range>& ranges, uint32_t seed) {
    std::vector<std::vector<std::byte>> data;
    std::vector<RawPiece> pieces;
    for (const Range& r : ranges) data.push_back(fill(r.len, seed++));
    for (size_t i = 0; i < ranges.size(); ++i) {
      pieces.push_back({ranges[i].addr, data[i]});
      model_.put(ranges[i].addr, data[i]);
    }
    must(ranks_[size_t(rank)]->write_raw(pieces, 2), "raw write on rank " + std::to_string(rank));
  }

  // A block of new space in two vector writes of small pieces, the second
  // filling the first's gaps: staged in the data log, written in place by
  // `rank` at the commit, coalesced.
  void interleaved(int rank, Range block, uint32_t seed) {
    for (uint64_t half = 0; half < 2; ++half) {
      std::vector<Range> pieces;
      for (uint64_t at = half * 256; at < block.len; at += 512) pieces.push_back({block.addr + at, 256});
      raw(rank, pieces, seed + uint32_t(half) * 64);
    }
  }

  // The end of a collective write: every rank's staged bytes in place.
  void place_staged() {
    for (size_t rank = 0; rank < ranks_.size(); ++rank)
      must(ranks_[rank]->place_staged(), "staged bytes in place on rank " + std::to_string(rank));
  }

  // HDF5's truncate on every rank, then its flush (or close): the commit,
  // with the file's end in its first bytes (describe_mpi_file).
  void commit(bool closing) {
    std::byte end[8];
    put_u64(end, model_.bytes.size());
    must(ranks_[0]->write(0, end, 1), "metadata write on rank 0");
    model_.put(0, end);
    for (auto& f : ranks_) must(f->set_size(model_.bytes.size()), "truncate");
    log_.before_commit(model_.snapshot());
    Status s = commit_all(closing);
    if (!s && !closing) stays_failed();
    must(s, closing ? "close" : "commit");
    log_.after_commit();
    // Rank 0's count is the job's (followers_durable.h).
    if (closing) log_.durable_so_far(CommitLog::kAll, CommitLog::kAll);
    else log_.durable_so_far(ranks_[0]->stats().commits, ranks_[0]->stats().durable_commits);
    if (!closing) check_reads();
  }

 private:
  std::vector<JournaledFile*> handles() {
    std::vector<JournaledFile*> ranks;
    for (auto& f : ranks_) ranks.push_back(f.get());
    return ranks;
  }
  Status commit_all(bool closing) { return test::commit_in_one_process(handles(), closing); }

  // Every rank was told the commit failed: no later commit may succeed
  // either, or a commit could build on a state that never was.
  void stays_failed() {
    uint64_t at = model_.bytes.size() / 2;
    for (int rank = 1; rank <= followers(); ++rank) (void)ranks_[size_t(rank)]->write_raw(at, fill(64, 7), 2);
    if (commit_all(false))
      throw WorkloadError{"commit after a failed commit", "a commit succeeded after every rank was told one failed"};
  }

  // Every follower reads what was committed: the owner's journal, every
  // data log and the file, as it sees them.  (Rank 0 reads every rank's
  // data log at each checkpoint, which recovery then checks; skipping its
  // reads here keeps the fault sweep's read positions fewer.)
  void check_reads() {
    std::vector<std::byte> seen(model_.bytes.size());
    for (size_t rank = 1; rank < ranks_.size(); ++rank) {
      must(ranks_[rank]->read(0, seen), "read on rank " + std::to_string(rank));
      if (seen != model_.bytes)
        throw WorkloadError{"read after commit", "rank " + std::to_string(rank) + " reads bytes that differ from the commit"};
    }
  }

  Model& model_;
  CommitLog& log_;
  std::vector<std::unique_ptr<JournaledFile>> ranks_;
};

// What a step wrote where, for later steps to overwrite.
struct Step {
  Range owner_block{};
  std::vector<Range> follower_blocks;
  std::optional<Range> owner_overwrite;
};

// One step: metadata and a new block by rank 0 (half in place, half staged;
// in odd steps all staged), then an overwrite of a follower's block of the
// step before (journaled, or in rank 0's data log); each follower a new
// block (in place; in odd steps staged) and a staged one, and overwrites,
// into its data log, of rank 0's block of the step before and, strided, of
// the range rank 0 overwrote one step earlier.  In steps 1 and 5 the staged
// bytes go in place midway, as at the end of a collective write, after
// rank 0 stages a chunk's fill that follower 1 then overwrites; step 3's
// reach the file only at the commit.  Otherwise ranks never write the same
// bytes in one step.
Step step(Session& s, Model& m, const std::vector<Step>& done, int k) {
  uint32_t seed = uint32_t(k) * 1000;
  Step now;
  s.meta({uint64_t(k % 8) * 512 + 8, 504}, seed++);
  now.owner_block = {m.alloc(8192), 8192};
  if (k % 2 == 0) s.raw(0, {{now.owner_block.addr, 4096}}, seed++);
  else s.interleaved(0, {now.owner_block.addr, 4096}, seed += 128);
  s.interleaved(0, {now.owner_block.addr + 4096, 4096}, seed += 128);
  if (!done.empty()) {
    uint64_t t = done.back().follower_blocks[size_t(k) % done.back().follower_blocks.size()].addr;
    now.owner_overwrite = {t + 512, 512};
    s.raw(0, {{t + 512, 512}, {t + 2048, 512}}, seed += 2);
  }
  for (int r = 1; r <= s.followers(); ++r) {
    now.follower_blocks.push_back({m.alloc(6144), 6144});
    if (k % 2 == 0) s.raw(r, {now.follower_blocks.back()}, seed++);
    else s.interleaved(r, now.follower_blocks.back(), seed += 128);
    s.interleaved(r, {m.alloc(3072), 3072}, seed += 128);
  }
  if (k % 4 == 1) {
    // HDF5's chunk fill: rank 0 fills new space in a collective-mode write,
    // whose end places it; then follower 1 writes the data over it.
    Range chunk{m.alloc(2048), 2048};
    s.interleaved(0, chunk, seed += 128);
    s.place_staged();
    s.interleaved(1, chunk, seed += 128);
  }
  for (int r = 1; r <= s.followers(); ++r) {
    if (done.empty()) break;
    const Range& ob = done.back().owner_block;
    s.raw(r, {{ob.addr + uint64_t(r - 1) * 1024, 1024}}, seed++);
    if (!done.back().owner_overwrite) continue;
    uint64_t t = done.back().owner_overwrite->addr - 512;
    std::vector<Range> strided;
    for (uint64_t i = 0; i < 4; ++i) strided.push_back({t + i * 1024 + uint64_t(r - 1) * 300, 256});
    s.raw(r, strided, seed += 4);
  }
  return now;
}

// A step of a time series: every rank appends a block in place, so that
// under durable_within its commit can be left to the background on every
// rank (followers_durable.h).  In odd steps rank 0 fills a chunk in place
// that follower 1 then writes, as HDF5 does: in steps 4j+1 follower 1 also
// overwrites committed bytes (into its data log), so that it syncs its
// writes while rank 0 would name its fill in INPLACE; in steps 4j+3 both
// would name theirs.  `last` is rank 0's block of the step before.
void append_step(Session& s, Model& m, int k, Range& last) {
  uint32_t seed = uint32_t(k) * 1000 + 500;
  s.meta({uint64_t(k % 8) * 512 + 8, 504}, seed++);
  Range block{m.alloc(4096), 4096};
  s.raw(0, {block}, seed++);
  for (int r = 1; r <= s.followers(); ++r) s.raw(r, {{m.alloc(5120), 5120}}, seed++);
  if (k % 2 == 1) {
    Range chunk{m.alloc(4096), 4096};
    s.raw(0, {chunk}, seed++);
    s.raw(1, {chunk}, seed++);
    if (k % 4 == 1 && last.len > 0) s.raw(1, {{last.addr, 256}}, seed++);
  }
  last = block;
}

}  // namespace

void run_mpi_workload(const JournalOptions& options, const std::string& file, CommitLog& log, int followers) {
  JournalOptions o = options;
  // Sizes are scaled down 16-fold from the driver's 64 KiB, so that small
  // writes by rank 0 take both paths: in place, and the journal.
  o.inplace_min_bytes = 4096;
  // 1 KiB buckets, so that a checkpoint or close splits them between ranks:
  // blocks are multiples of 1 KiB, and a follower's overwrite of rank 0's
  // block is a bucket of its own (step4_write_raw_share).
  o.raw_bucket_shift = 10;
  Model m;
  std::vector<Step> done;
  int k = 0;
  for (int session = 0; session < 2; ++session) {
    Session s(m, log);
    s.open(o, file, session == 0 ? Access::kCreateTruncate : Access::kReadWrite, followers);
    if (session == 0) m.alloc(4096);
    s.meta({8, 4088}, 99 + uint32_t(session));  // the superblock and root group, as HDF5 writes them
    for (int steps = session == 0 ? 4 : 2; steps > 0; --steps, ++k) {
      done.push_back(step(s, m, done, k));
      // Once, the end of the file is freed and cut at the commit (HDF5's
      // truncate shrinks it); the next step's new space grows over it.
      if (k == 2) m.bytes.resize(m.bytes.size() - 2048);
      s.commit(false);
    }
    // The time series matters where commits are left to the background;
    // elsewhere its states would only lengthen the runs.
    Range last{};
    for (int steps = o.durable_within.count() > 0 ? 3 : 0; steps > 0; --steps, ++k) {
      append_step(s, m, k, last);
      s.commit(false);
      if (session == 0 && steps == 2) s.wait_durable();
    }
    // HDF5 rewrites the superblock at close.  (It also keeps the close's
    // snapshot distinct from the last flush's, as the explorer wants.)
    s.meta({8, 64}, 199 + uint32_t(session));
    s.commit(true);
  }
}

std::optional<std::string> describe_mpi_file(const std::vector<std::byte>& file) {
  if (file.size() < 8 || get_u64(file.data()) > file.size()) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(file.data()), get_u64(file.data()));
}

}  // namespace h5j::explorer
