// The crash-state explorer.  Runs real HDF5 workloads above the journal
// driver over a recording in-memory file system, then materialises crash
// states from the recording (every prefix cut at a sync, and seeded random
// subsets, reorderings and tears of the unsynced writes) and checks each:
//
//  1. recovery (recover_file: the code open-time recovery and h5recover use)
//     gives a file whose contents equal the snapshot of some commit k, with
//     k no lower than the last commit acknowledged at the cut and no higher
//     than the last one started; every object in it is readable; no journal
//     is left;
//  2. recovering the same state twice gives byte-identical files;
//  3. for a sample of states, recovery itself is recorded and cut (prefixes
//     and random crash states of the recovery), and recovering again gives
//     the same file; and a recovery run on everything the writer issued (its
//     process died, the page cache lived) is cut by a power loss, which may
//     keep any of the writer's unsynced operations and recovery's, and
//     recovering again gives a commit within the same bounds.
// And live readers (design.md §11): a reader opened after the writer's
// first N operations (every one of them in the page cache) reads some
// commit k, as recovery bounds it; after the writer's next operations, up to
// M, it reads exactly those bytes again or learns its snapshot is gone.
// The readers read a recording of each workload made with a checkpoint at
// every commit, so that as many reads as can fall on a rewrite do.
// The recorded writer never saw the reader, so it never waited for one:
// every rewrite falls on an open snapshot.  A reader of the closed file
// (no journal) is read once: the driver gives it HDF5's lock on the file,
// which a writer's open would have been refused.
// Any failure prints a command that replays exactly that state.
#include <hdf5.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <random>
#include <unordered_map>

#include "config.h"
#include "crash_states.h"
#include "driver.h"
#include "mem_fs.h"
#include "recovery.h"
#include "hdf5_walk.h"
#include "hdf5_workloads.h"

using namespace h5j;
using namespace h5j::explorer;

namespace {

const std::string kFile = "w.h5";

struct Options {
  std::string workload = "all";
  uint64_t states = 10000;
  uint64_t seed = 1;
  int recovery_every = 25;  // crash recovery itself for every N-th state
  // Replaying one state:
  int64_t cut = -1;
  bool everything = false;
  uint64_t crash_seed = 0;
  uint64_t readers = 0;  // live readers to check, across the workloads
  // Replaying one reader:
  int64_t reader_open = -1, reader_read = -1;
};

// --durable-within: commits made durable in the background, which a
// recording's file system runs inline, every BackgroundSync::kInlineEvery-th
// commit (FileSystem::deterministic).
uint32_t durable_within_ms = 0;

H5FD_journal_fapl_t config_for(const Workload& w) {
  H5FD_journal_fapl_t c;
  H5Pget_fapl_journal_defaults(&c);
  c.ring_buffers = 2;
  c.buffer_size = 64 << 10;
  c.io_engine = H5FD_JOURNAL_IO_SYNC;
  c.checkpoint_bytes = w.checkpoint_bytes;
  c.raw = w.raw;
  c.materialize = w.materialize;
  c.durable_within_ms = durable_within_ms;
  std::snprintf(c.journal_path, sizeof c.journal_path, "%s", w.journal_path);
  return c;
}

struct Recording : CommitLog {
  std::vector<Op>* trace = nullptr;
  // Trace length when each commit started / returned / was known durable
  // (SIZE_MAX: not yet).  With durable=true a commit is durable when it
  // returns; with durable_within, once H5Fget_journal_stats says so.
  std::vector<size_t> started, acked, durable;
  std::vector<uint64_t> engine_commits;  // the engine's commits after each (kAll: unknown)
  std::vector<std::string> snapshots;
  void before_commit(const std::string& s) override {
    started.push_back(trace->size());
    snapshots.push_back(s);
  }
  void after_commit() override {
    acked.push_back(trace->size());
    durable.push_back(SIZE_MAX);
    engine_commits.push_back(kAll);
  }
  void durable_so_far(uint64_t commits, uint64_t durable_commits) override {
    engine_commits.back() = commits;
    for (size_t i = 0; i < durable.size(); ++i)
      if (durable[i] == SIZE_MAX && engine_commits[i] <= durable_commits) durable[i] = trace->size();
  }
  // The last commit acknowledged (or started) within the first `cut` operations; -1: none.
  static int last_within(const std::vector<size_t>& at, size_t cut) {
    int k = -1;
    for (size_t i = 0; i < at.size(); ++i)
      if (at[i] <= cut) k = int(i);
    return k;
  }
};

struct Outcome {
  bool ok = false;
  std::string error;
  std::vector<std::byte> file;  // the recovered HDF5 file
  bool journal_left = false;
  bool binding_left = false;
};

Outcome recover_image(Image image, const H5FD_journal_fapl_t& config, std::vector<Op>* record = nullptr) {
  MemFileSystem fs(std::move(image));
  if (record != nullptr) fs.record_into(record);
  auto r = recover_file(kFile, journal_options_for(kFile, config, fs));
  Outcome out;
  out.ok = r.is_ok();
  if (!r) out.error = r.status().message();
  Image after = fs.release_image();
  if (after.count(kFile)) {
    out.file = std::move(after[kFile].data);
    out.binding_left = after[kFile].xattrs.count(kBindingXattr) > 0;
  }
  out.journal_left = after.count(journal_path_for(kFile, config)) > 0;
  return out;
}

struct Stats {
  uint64_t states = 0, prefix_states = 0, random_states = 0, recovery_states = 0, distinct_images = 0,
           before_first_commit = 0, readers = 0, readers_expired = 0, readers_of_closed = 0,
           past_durable = 0;  // recovered to a commit newer than the last known durable
};

class Explorer {
 public:
  Explorer(const Workload& w, const Options& o) : w_(w), o_(o), config_(config_for(w)) {}

  bool record() {
    trace_.clear();
    MemFileSystem fs;
    fs.record_into(&trace_);
    rec_.trace = &trace_;
    try {
      if (w_.run_engine != nullptr) w_.run_engine(journal_options_for(kFile, config_, fs), kFile, rec_);
      else run_hdf5(fs);
    } catch (const WorkloadError& e) {
      std::fprintf(stderr, "explorer: workload %s failed at %s:\n%s", w_.name.c_str(), e.what.c_str(), e.stack.c_str());
      std::exit(2);
    }
    return true;
  }

  void run_hdf5(MemFileSystem& fs) {
    hid_t driver = register_driver_with(fs);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_driver(fapl, driver, &config_);
    w_.run(fapl, kFile, rec_);
    H5Pclose(fapl);
  }

  // Checks one crash state; prints why and how to replay it on failure.
  bool check(const CrashSpec& spec, bool with_recovery_crashes, bool verbose) {
    verbose_ = verbose;
    ++stats_.states;
    Image image = materialize({}, trace_, spec);
    Outcome first = recover_image(image, config_);
    Outcome second = recover_image(image, config_);
    // A power loss keeps what was durable: the commits acknowledged by then
    // if each was durable when it returned, else those the engine had made
    // durable (durable_within).
    int acked = Recording::last_within(rec_.durable, spec.cut);
    int started = Recording::last_within(rec_.started, spec.cut);
    if (acked < 0) ++stats_.before_first_commit;
    auto fail = [&](const std::string& why) {
      std::printf("FAIL [%s] %s: %s\n  acknowledged commit %d, started %d\n  replay: explorer --workload %s --seed %llu %s\n",
                  w_.name.c_str(), spec.describe().c_str(), why.c_str(), acked, started, w_.name.c_str(),
                  (unsigned long long)o_.seed, spec.describe().c_str());
      return false;
    };
    if (first.ok != second.ok || first.file != second.file || first.journal_left != second.journal_left)
      return fail("recovering the same state twice gave different results");
    // Nothing was promised yet.  Still, a reader without the driver must
    // find no HDF5 file, or one of the commits begun (superblock_guard.h's
    // held signature; a close that committed nothing writes the signature
    // last, close_uncommitted.cc): never a file half written.
    if (acked < 0) {
      if (w_.run_engine != nullptr) return true;  // no HDF5 file to read
      // And a file whole for other readers is whole for the driver too.
      int k = commit_of(first.file);
      if (k == -2 || (k >= 0 && k <= started && first.ok)) return true;
      if (verbose) dump(image, trace_, spec);
      if (k >= 0 && k <= started)
        return fail("before any commit, the file reads as commit " + std::to_string(k) +
                    " without the driver, and recovery refuses it: " + first.error);
      return fail(k == -1 ? "before any commit, the file reads as HDF5 matching no commit"
                          : "before any commit, the file reads as commit " + std::to_string(k));
    }
    if (!first.ok && verbose) dump(image, trace_, spec);
    if (!first.ok) return fail("recovery failed: " + first.error);
    if (first.journal_left) return fail("a journal was left after recovery");
    if (first.binding_left) return fail("the journal binding attribute was left after recovery");
    int k = commit_of(first.file);
    if (verbose) std::printf("recovered to commit %d (acknowledged %d, started %d)\n", k, acked, started);
    if (k == -2)
      return fail(w_.run_engine ? "the recovered file is shorter than it says" : "the recovered file is not readable as HDF5");
    if (k == -1 && verbose && w_.run_engine != nullptr) show_difference(first.file, rec_.snapshots[size_t(acked)]);
    if (k == -1) return fail("the recovered file matches no commit");
    if (k < acked || k > started)
      return fail("the recovered file is commit " + std::to_string(k) + ", outside [" + std::to_string(acked) + ", " +
                  std::to_string(started) + "]");
    if (k > acked && k <= Recording::last_within(rec_.acked, spec.cut)) ++stats_.past_durable;
    if (with_recovery_crashes) return check_recovery_crashes(spec, image, first) && check_power_loss_in_recovery(spec);
    return true;
  }

  // The writer's process dies at the cut, its writes all in the page
  // cache; recovery runs on them; the power fails during recovery.  What
  // the disk holds then mixes the writer's unsynced writes with recovery's
  // own, as their syncs allow: recovery must come back, again, to a commit
  // the bounds allow (replay_into_base makes what it stands on durable
  // before it cuts or rewrites anything).
  bool check_power_loss_in_recovery(const CrashSpec& spec) {
    std::vector<Op> rtrace;
    recover_image(materialize({}, trace_, {spec.cut, true, 0}), config_, &rtrace);
    std::vector<Op> both(trace_.begin(), trace_.begin() + long(std::min(spec.cut, trace_.size())));
    both.insert(both.end(), rtrace.begin(), rtrace.end());
    std::mt19937_64 rng(spec.seed ^ 0x5851f42d4c957f2dull);
    int acked = Recording::last_within(rec_.durable, spec.cut);
    int started = Recording::last_within(rec_.started, spec.cut);
    for (int i = 0; i < 4; ++i) {
      CrashSpec c{both.size() - rtrace.size() + size_t(rng() % (rtrace.size() + 1)), false, rng()};
      ++stats_.recovery_states;
      Outcome again = recover_image(materialize({}, both, c), config_);
      int k = again.ok ? commit_of(again.file) : -3;
      if (again.ok && k >= acked && k <= started && !again.journal_left) continue;
      if (verbose_) dump(materialize({}, both, c), both, c);
      std::printf("FAIL [%s] %s: the process died, then the power failed during its recovery (%s of the writer's and "
                  "recovery's operations): %s\n  replay: explorer --workload %s --seed %llu %s\n",
                  w_.name.c_str(), spec.describe().c_str(), c.describe().c_str(),
                  again.ok ? ("recovered commit " + std::to_string(k) + ", outside [" + std::to_string(acked) + ", " +
                              std::to_string(started) + "]").c_str()
                           : ("recovery failed: " + again.error).c_str(),
                  w_.name.c_str(), (unsigned long long)o_.seed, spec.describe().c_str());
      return false;
    }
    return true;
  }

  // Crashes recovery itself, then recovers again.
  bool check_recovery_crashes(const CrashSpec& spec, const Image& image, const Outcome& clean) {
    std::vector<Op> rtrace;
    recover_image(image, config_, &rtrace);
    std::vector<CrashSpec> cuts;
    for (size_t c : sync_points(rtrace)) cuts.push_back({c, true, 0});
    std::mt19937_64 rng(spec.seed ^ 0x9e3779b97f4a7c15ull);
    for (int i = 0; i < 4; ++i) cuts.push_back({size_t(rng() % (rtrace.size() + 1)), false, rng()});
    for (const CrashSpec& c : cuts) {
      ++stats_.recovery_states;
      Outcome again = recover_image(materialize(image, rtrace, c), config_);
      if (!again.ok || again.file != clean.file || again.journal_left || again.binding_left) {
        if (verbose_) dump(image, rtrace, c);
        std::printf("FAIL [%s] %s: a crash during recovery (%s) then recovery %s\n  replay: explorer --workload %s --seed %llu %s\n",
                    w_.name.c_str(), spec.describe().c_str(), c.describe().c_str(),
                    again.ok ? "gave a different file" : ("failed: " + again.error).c_str(), w_.name.c_str(),
                    (unsigned long long)o_.seed, spec.describe().c_str());
        return false;
      }
    }
    return true;
  }

  // A live reader opened after `open_at` operations, read again after `read_at`.
  bool check_reader(size_t open_at, size_t read_at, bool verbose = false) {
    verbose_ = verbose;
    ++stats_.readers;
    int acked = Recording::last_within(rec_.acked, open_at);
    int started = Recording::last_within(rec_.started, open_at);
    auto fail = [&](const std::string& why) {
      std::printf("FAIL [%s] a reader opened at %zu, read at %zu: %s\n  acknowledged commit %d, started %d\n"
                  "  replay: explorer --workload %s --reader-open %zu --reader-read %zu\n",
                  w_.name.c_str(), open_at, read_at, why.c_str(), acked, started, w_.name.c_str(), open_at, read_at);
      return false;
    };
    MemFileSystem fs(materialize({}, trace_, {open_at, true, 0}));
    JournalOptions o = journal_options_for(kFile, config_, fs);
    o.reader_wait = std::chrono::milliseconds(0);  // a held-off or half-rewritten state is read at once
    auto reader = JournaledFile::open(kFile, Access::kReadOnly, o);
    if (acked < 0) return true;  // nothing was promised yet
    if (!reader) return fail("the open failed: " + reader.status().message());
    std::vector<std::byte> seen((*reader)->size());
    if (Status s = (*reader)->read(0, seen); !s) return fail("the first read failed: " + s.message());
    int k = commit_of(seen);
    if (k < acked || k > started)
      return fail(k < 0 ? "it reads no commit" : "it reads commit " + std::to_string(k));
    // A closed file's reader holds HDF5's lock on it (the driver takes it),
    // which refuses the writer the recording went on with.
    if (!(*reader)->report().live_snapshot) return ++stats_.readers_of_closed, true;
    for (size_t i = open_at; i < read_at; ++i) fs.apply(trace_[i]);
    std::vector<std::byte> again(seen.size());
    Status s = (*reader)->read(0, again);
    if (s.code() == Code::kExpired) return ++stats_.readers_expired, true;
    if (!s) return fail("the second read failed: " + s.message());
    if (again != seen) {
      if (verbose_) {
        show_difference(again, std::string(reinterpret_cast<const char*>(seen.data()), seen.size()));
        dump(fs.image(), trace_, {read_at, true, 0});
      }
      return fail("its snapshot changed under it (commit " + std::to_string(k) + ")");
    }
    return true;
  }

  int check_readers(uint64_t quota, uint64_t seed) {
    int failures = 0;
    std::mt19937_64 rng(seed);
    for (uint64_t i = 0; i < quota && failures < 5; ++i) {
      size_t open_at = rng() % (trace_.size() + 1);
      size_t read_at = open_at + rng() % (trace_.size() - open_at + 1);
      failures += !check_reader(open_at, read_at);
    }
    return failures;
  }

  static void dump(const Image& image, const std::vector<Op>& trace, const CrashSpec& c) {
    static const char* kinds[] = {"write", "truncate", "sync_data", "sync_all", "create", "remove", "sync_dir", "set_xattr", "remove_xattr", "write_back"};
    for (const auto& [path, node] : image) {
      std::printf("  image %s: %zu bytes, xattrs %zu", path.c_str(), node.data.size(), node.xattrs.size());
      if (path.ends_with(".jnl") && node.data.size() >= 4096) {
        for (uint64_t slot : {0, 2048}) {
          std::printf(" [slot %llu gen %u uuid %02x%02x]", (unsigned long long)slot, unsigned(node.data[slot + 16]),
                      unsigned(node.data[slot + 32]), unsigned(node.data[slot + 33]));
        }
      }
      for (const auto& [k, v] : node.xattrs) std::printf(" xattr uuid %02x%02x gen %u", (unsigned char)v[0], (unsigned char)v[1], unsigned((unsigned char)v[16]));
      if (path.ends_with(".h5")) {
        std::printf(", head");
        for (size_t i = 0; i < 9 && i < node.data.size(); ++i) std::printf(" %02x", unsigned(node.data[i]));
      }
      std::printf("\n");
    }
    for (size_t i = 0; i < trace.size() && i < c.cut + 3; ++i)
      std::printf("  %s%zu %s %s off %llu len %zu\n", i < c.cut ? " " : "*", i, kinds[trace[i].kind], trace[i].path.c_str(),
                  (unsigned long long)trace[i].offset, trace[i].bytes.size());
  }

  // For an engine workload, whose snapshots are bytes: where the recovered
  // file first differs from the acknowledged commit.
  static void show_difference(const std::vector<std::byte>& file, const std::string& snapshot) {
    size_t at = 0;
    while (at < file.size() && at < snapshot.size() && char(file[at]) == snapshot[at]) ++at;
    size_t differ = 0;
    for (size_t i = at; i < file.size() && i < snapshot.size(); ++i) differ += char(file[i]) != snapshot[i];
    std::printf("recovered %zu bytes, the acknowledged commit %zu: %zu bytes differ, the first at %zu\n", file.size(),
                snapshot.size(), differ, at);
  }

  // Which commit's snapshot the image matches: -1 none, -2 unreadable.
  int commit_of(const std::vector<std::byte>& file) {
    std::string key(reinterpret_cast<const char*>(file.data()), file.size());
    auto it = verdicts_.find(key);
    if (it != verdicts_.end()) return it->second;
    ++stats_.distinct_images;
    auto desc = describe_contents(w_, file);
    int k = desc ? -1 : -2;
    // The newest matching commit: equal snapshots (nothing changed) are interchangeable.
    if (desc)
      for (size_t i = 0; i < rec_.snapshots.size(); ++i)
        if (rec_.snapshots[i] == *desc) k = int(i);
    verdicts_.emplace(std::move(key), k);
    return k;
  }

  int explore(uint64_t quota, uint64_t seed) {
    // A workload that never says which commits are durable would leave every
    // state unchecked ("nothing was promised yet").
    if (!rec_.acked.empty() && std::count(rec_.durable.begin(), rec_.durable.end(), SIZE_MAX) == long(rec_.durable.size())) {
      std::printf("FAIL [%s] the workload reported no commit durable (CommitLog::durable_so_far)\n", w_.name.c_str());
      return 1;
    }
    int failures = 0;
    std::vector<CrashSpec> specs;
    for (size_t c : sync_points(trace_)) specs.push_back({c, true, 0});
    specs.push_back({trace_.size(), true, 0});
    stats_.prefix_states = specs.size();
    std::mt19937_64 rng(seed);
    while (specs.size() < quota) specs.push_back({size_t(rng() % (trace_.size() + 1)), false, rng()});
    stats_.random_states = specs.size() - stats_.prefix_states;
    for (size_t i = 0; i < specs.size(); ++i)
      if (!check(specs[i], o_.recovery_every > 0 && i % size_t(o_.recovery_every) == 0, false) && ++failures >= 5)
        break;
    return failures;
  }

  const Stats& stats() const { return stats_; }
  size_t trace_size() const { return trace_.size(); }
  size_t commits() const { return rec_.acked.size(); }
  // Commits of one flush: each writes the journal back (Op::kWriteBack).
  size_t one_flush_commits() const {
    return size_t(std::count_if(trace_.begin(), trace_.end(), [](const Op& op) { return op.kind == Op::kWriteBack; }));
  }
  // Commits not yet durable when they returned (durable_within).
  size_t commits_left_to_background() const {
    size_t n = 0;
    for (size_t i = 0; i < rec_.acked.size(); ++i) n += rec_.durable[i] > rec_.acked[i];
    return n;
  }

 private:
  const Workload& w_;
  Options o_;
  H5FD_journal_fapl_t config_;
  std::vector<Op> trace_;
  Recording rec_;
  Stats stats_;
  std::unordered_map<std::string, int> verdicts_;
  bool verbose_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Crash-state explorer for the h5journal driver"};
  app.add_option("--workload", o.workload, "a workload name, all (the HDF5 ones) or mpi");
  app.add_option("--states", o.states, "crash states to check, across the workloads");
  auto* seed = app.add_option("--seed", o.seed, "seed of the random crash states (default 1)");
  bool random_seed = false;
  app.add_flag("--random-seed", random_seed, "a seed of its own each run, printed for replay (CI's budget)")
      ->excludes(seed);
  app.add_option("--recovery-every", o.recovery_every, "also crash recovery itself for every N-th state (0: never)");
  app.add_option("--cut", o.cut, "replay one state: operations issued before the crash");
  app.add_flag("--everything", o.everything, "replay one state: every issued operation reached the disk");
  app.add_option("--crash-seed", o.crash_seed, "replay one state: which unsynced operations survived");
  app.add_option("--readers", o.readers, "live readers to check, across the workloads");
  bool background = false;
  app.add_flag("--durable-within", background,
               "durable=100ms: commits made durable in the background, every third one (a power loss may keep "
               "any commit since the last made durable)");
  app.add_option("--reader-open", o.reader_open, "replay one reader: operations issued before its open");
  app.add_option("--reader-read", o.reader_read, "replay one reader: operations issued before its second read");
  CLI11_PARSE(app, argc, argv);
  // A smaller budget covers more over many runs when each run draws other
  // states; the summary line and every failure name the seed to replay.
  if (random_seed) o.seed = std::random_device{}();
  if (background) durable_within_ms = 100;

  std::vector<const Workload*> chosen;
  for (const auto& w : workloads())
    if (selected(w, o.workload)) chosen.push_back(&w);
  if (chosen.empty()) {
    std::fprintf(stderr, "explorer: no workload named %s\n", o.workload.c_str());
    return 2;
  }
  auto t0 = std::chrono::steady_clock::now();
  int failures = 0;
  Stats total;
  for (const Workload* w : chosen) {
    Explorer ex(*w, o);
    ex.record();
    Workload checkpointing = *w;
    checkpointing.checkpoint_bytes = 1;  // a checkpoint at every commit
    Explorer rx(checkpointing, o);
    rx.record();
    if (o.reader_open >= 0) {
      bool ok = rx.check_reader(size_t(o.reader_open), size_t(std::max(o.reader_open, o.reader_read)), true);
      std::printf("%s\n", ok ? "reader OK" : "reader FAILED");
      return ok ? 0 : 1;
    }
    if (o.cut >= 0) {
      bool ok = ex.check({size_t(o.cut), o.everything, o.crash_seed}, true, true);
      std::printf("%s\n", ok ? "state OK" : "state FAILED");
      return ok ? 0 : 1;
    }
    uint64_t seed = o.seed + std::hash<std::string>{}(w->name);
    failures += ex.explore(o.states / chosen.size(), seed);
    failures += rx.check_readers(o.readers / chosen.size(), seed);
    Stats s = ex.stats();
    s.readers = rx.stats().readers;
    s.readers_expired = rx.stats().readers_expired;
    s.readers_of_closed = rx.stats().readers_of_closed;
    std::printf("%-12s %5zu operations, %2zu commits (%zu of one flush, %zu left to the background): %llu states (%llu prefix, %llu random), %llu recovery-crash states, "
                "%llu distinct recovered files, %llu before the first commit, %llu past the last durable commit; %llu readers of a checkpoint at every commit "
                "(%llu expired, %llu of the closed file)\n",
                w->name.c_str(), ex.trace_size(), ex.commits(), ex.one_flush_commits(), ex.commits_left_to_background(),
                (unsigned long long)s.states,
                (unsigned long long)s.prefix_states, (unsigned long long)s.random_states,
                (unsigned long long)s.recovery_states, (unsigned long long)s.distinct_images,
                (unsigned long long)s.before_first_commit, (unsigned long long)s.past_durable, (unsigned long long)s.readers,
                (unsigned long long)s.readers_expired, (unsigned long long)s.readers_of_closed);
    total.states += s.states;
    total.recovery_states += s.recovery_states;
    total.readers += s.readers;
    total.readers_expired += s.readers_expired;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("explorer: %llu crash states, %llu recovery-crash states and %llu live readers (%llu expired) in %.1f s, "
              "seed %llu: %d lost or damaged\n",
              (unsigned long long)total.states, (unsigned long long)total.recovery_states,
              (unsigned long long)total.readers, (unsigned long long)total.readers_expired, secs,
              (unsigned long long)o.seed, failures);
  return failures == 0 ? 0 : 1;
}
