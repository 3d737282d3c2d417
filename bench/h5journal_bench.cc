// h5journal_bench: one measurement per run.  bench/run_bench.py runs it for
// each workload and driver in alternation, in fresh processes (so peak RSS is
// per run), and turns the samples into medians and ratios.
//
// Each subcommand prints one JSON object on stdout: what was done and how
// long it took.  Times are wall-clock, from before the file is created to
// after the workload's last commit point is durable (for the drivers that
// promise durability) or returned (for those that do not).
//
// Drivers (--driver):
//   sec2          HDF5's default driver: nothing is durable.
//   sec2-durable  sec2, plus H5Fflush and fsync at each point where
//                 h5journal commits (each H5Fflush, and after H5Fclose): the
//                 only way to durability HDF5 offers today.
//   sec2-close-durable  sec2, plus fsync after H5Fclose only: the floor of
//                 durable=100ms, whose commits wait for no disk but whose
//                 close is durable.
//   sec2-interval-durable  sec2, plus an fdatasync of the file every 100 ms
//                 from a thread, paced as durable=100ms's are (PacedSync),
//                 and fsync after H5Fclose: the disk's own cost of keeping a
//                 time series durable within 100 ms and one sync, the floor
//                 of durable=100ms over a run longer than that.
//   core          in memory, no backing store: the upper bound.
//   journal       h5journal, configured by --config "key=value;...".
#include <fcntl.h>
#include <hdf5.h>
#include <liburing.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "background_sync.h"
#include "h5journal.h"
#include "posix_file.h"
#include "unique_fd.h"
#include "particles.h"
#include "workloads.h"

namespace {

using namespace bench;

// --- drivers -------------------------------------------------------------------

struct Driver {
  std::string name;    // sec2 | sec2-durable | sec2-close-durable | sec2-interval-durable | core | journal
  std::string config;  // journal only

  bool durable_sec2() const { return name == "sec2-durable"; }
  bool syncs_at_close() const { return name.starts_with("sec2-"); }
  bool syncs_every_interval() const { return name == "sec2-interval-durable"; }

  hid_t fapl() const {
    hid_t fapl = check_id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
    if (name == "sec2" || name.starts_with("sec2-")) {
      check(H5Pset_fapl_sec2(fapl), "H5Pset_fapl_sec2");
    } else if (name == "core") {
      check(H5Pset_fapl_core(fapl, 64 << 20, false), "H5Pset_fapl_core");
    } else if (name == "journal") {
      check_id(H5FD_journal_init(), "registering the journal driver");
      check(H5Pset_driver_by_name(fapl, "journal", config.c_str()), "H5Pset_driver_by_name(journal)");
    } else {
      die("unknown driver " + name);
    }
    return fapl;
  }
};

// sec2-interval-durable's syncs: the engine's own pacing (background_sync.h)
// over sec2's file, so that the floor keeps durable=100ms's promise and no
// more.  The file is synced an interval after the last sync began, and a
// commit waits while the bytes not yet durable exceed what the disk writes
// in an interval.  Without that wait a writer faster than the disk runs
// ahead of its syncs: W4's 1 MiB steps, synced every 100 ms alone, were
// durable 1.3 to 1.5 s after their commits returned.
//
// Its bytes are those this process dirtied (bytes_sent_to_disk), told
// every kLook by a thread of its own, as the journal tells its in-place
// bytes as they are written.  A commit reads no counter: /proc/self/io
// costs about 9 µs a read, which over W4's 40,000 steps of 8 KiB made the
// floor slower than the journal it stands under.
class PacedSync {
 public:
  PacedSync(const std::string& path, std::chrono::milliseconds interval)
      : sync_(open_for_sync(path), nullptr, interval, /*threaded=*/true), told_(bytes_sent_to_disk()) {
    looker_ = std::thread([this] { look(); });
  }
  ~PacedSync() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    looker_.join();
    if (!sync_.failure()) die("the floor's sync: " + sync_.failure().message());
  }
  PacedSync(const PacedSync&) = delete;
  PacedSync& operator=(const PacedSync&) = delete;

  // A commit returned: it is the floor's next transaction, durable once a
  // sync that began after it ends.  Waits while the disk is behind.
  void committed() {
    ++commits_;
    sync_.written(commits_, commits_, 0);
  }
  std::pair<uint64_t, uint64_t> durable_commits() const { return {commits_, sync_.durable().commits}; }

 private:
  static constexpr std::chrono::milliseconds kLook{10};

  static std::unique_ptr<h5j::File> open_for_sync(const std::string& path) {
    h5j::PosixFileSystem fs;
    auto file = fs.open(path, h5j::OpenMode::kReadOnly, h5j::IoEngine::kSync);
    if (!file) die("open " + path + ": " + file.status().message());
    return std::move(*file);
  }
  void look() {
    std::unique_lock lock(mu_);
    while (!wake_.wait_for(lock, kLook, [this] { return stop_; })) {
      uint64_t now = bytes_sent_to_disk();
      sync_.wrote(now - std::min(now, told_));
      told_ = std::max(told_, now);
    }
  }

  h5j::BackgroundSync sync_;
  uint64_t commits_ = 0;
  std::mutex mu_;  // guards stop_
  uint64_t told_;  // the looker's alone
  bool stop_ = false;
  std::condition_variable wake_;
  std::thread looker_;
};

// An open HDF5 file through one driver, with the driver's commit points.
class BenchFile {
 public:
  static constexpr std::chrono::milliseconds kSyncInterval{100};

  BenchFile(const Driver& d, std::string path) : driver_(d), path_(std::move(path)) {
    hid_t fapl = d.fapl();
    id_ = check_id(H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "H5Fcreate");
    H5Pclose(fapl);
    if (d.syncs_every_interval()) paced_.emplace(path_, kSyncInterval);
  }
  BenchFile(const BenchFile&) = delete;
  BenchFile& operator=(const BenchFile&) = delete;

  hid_t id() const { return id_; }

  // A commit point: H5Fflush (a transaction for the journal), and fsync for
  // durable sec2.
  void commit() {
    check(H5Fflush(id_, H5F_SCOPE_GLOBAL), "H5Fflush");
    if (driver_.durable_sec2()) fsync_vfd();
    if (paced_) paced_->committed();
  }

  // The commits so far, and of them, those durable: the journal's, or
  // the paced floor's.
  std::pair<uint64_t, uint64_t> durable_commits() const {
    if (paced_) return paced_->durable_commits();
    H5FD_journal_stats_t s;
    check(H5Fget_journal_stats(id_, &s), "H5Fget_journal_stats");
    return {s.commits, s.durable_commits};
  }

  // The journal driver's counters before close (the raw index is at its
  // largest then); null for the other drivers.
  json journal_stats() const {
    if (driver_.name != "journal") return nullptr;
    H5FD_journal_stats_t s;
    check(H5Fget_journal_stats(id_, &s), "H5Fget_journal_stats");
    return {{"commits", s.commits},
            {"checkpoints", s.checkpoints},
            {"raw_bytes_logged", s.raw_bytes_logged},
            {"raw_index_peak_bytes", s.raw_index_peak_bytes}};
  }

  void close() {
    paced_.reset();
    check(H5Fclose(id_), "H5Fclose");
    if (driver_.syncs_at_close()) timed_sync([&] { fsync_path(path_); });
  }

  // Seconds in the fsyncs that the sec2 drivers add, at commit() and at
  // close(): for a file written once and synced at its close, the disk's
  // time to write the bytes whose writeback had not begun.
  double sync_seconds() const { return sync_seconds_; }

 private:
  void fsync_vfd() {
    void* handle = nullptr;
    check(H5Fget_vfd_handle(id_, H5P_DEFAULT, &handle), "H5Fget_vfd_handle");
    timed_sync([&] {
      if (::fsync(*static_cast<int*>(handle)) != 0) die(std::string("fsync: ") + std::strerror(errno));
    });
  }
  template <typename Sync>
  void timed_sync(Sync sync) {
    auto t0 = Clock::now();
    sync();
    sync_seconds_ += seconds_since(t0);
  }

  const Driver& driver_;
  std::string path_;
  hid_t id_;
  std::optional<PacedSync> paced_;
  double sync_seconds_ = 0;
};

// --- helpers -------------------------------------------------------------------

json result(const char* workload, const Driver& d, double secs) { return bench::result(workload, d.name, d.config, secs); }

// A result that counts `n` of something (operations, commits), and their rate.
json counted_result(const char* workload, const Driver& d, double secs, const std::string& what, int n) {
  json r = result(workload, d, secs);
  r[what] = n;
  r[what + "_per_second"] = double(n) / secs;
  return r;
}

// --- workloads -----------------------------------------------------------------

// W1 checkpoint (workloads.h), one commit, at close.
json w1_checkpoint(const Driver& d, const std::string& path, uint64_t mib, int datasets) {
  DiskCounters disk0 = disk_counters(path);
  auto t0 = Clock::now();
  BenchFile f(d, path);
  uint64_t bytes = write_checkpoint(f.id(), mib, datasets, Share{});
  f.close();
  json r = result("W1", d, seconds_since(t0));
  r["bytes"] = bytes;
  r["sync_seconds"] = f.sync_seconds();
  add_disk_counts(r, disk0, path);
  return r;
}

// W2 strided (workloads.h), one commit, at close.
json w2_strided(const Driver& d, const std::string& path, hsize_t n) {
  DiskCounters disk0 = disk_counters(path);
  auto t0 = Clock::now();
  BenchFile f(d, path);
  uint64_t bytes = write_strided(f.id(), n, Share{});
  json stats = f.journal_stats();
  f.close();
  json r = result("W2", d, seconds_since(t0));
  r["bytes"] = bytes;
  add_disk_counts(r, disk0, path);
  if (!stats.is_null()) r.update(stats);
  return r;
}

// W3 metadata-heavy: groups, each with small datasets and attributes; a
// commit every 100 operations.
json w3_metadata(const Driver& d, const std::string& path, int ops) {
  std::vector<double> small(16, 2.5);
  hsize_t one = 1, sixteen = 16;
  hid_t scalar = H5Screate_simple(1, &one, nullptr);
  DiskCounters disk0 = disk_counters(path);
  auto t0 = Clock::now();
  BenchFile f(d, path);
  hid_t group = -1;
  for (int op = 0; op < ops; ++op) {
    std::string name = "n" + std::to_string(op);
    if (op % 5 == 0) {
      if (group >= 0) H5Gclose(group);
      group = check_id(H5Gcreate2(f.id(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "H5Gcreate2");
    } else if (op % 5 < 3) {
      hid_t ds = create_dataset(group, name.c_str(), {sixteen});
      check(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, small.data()), "H5Dwrite");
      H5Dclose(ds);
    } else {
      hid_t a = check_id(H5Acreate2(group, name.c_str(), H5T_NATIVE_DOUBLE, scalar, H5P_DEFAULT, H5P_DEFAULT),
                         "H5Acreate2");
      check(H5Awrite(a, H5T_NATIVE_DOUBLE, small.data()), "H5Awrite");
      H5Aclose(a);
    }
    if (op % 100 == 99) f.commit();
  }
  H5Gclose(group);
  f.close();
  H5Sclose(scalar);
  json r = counted_result("W3", d, seconds_since(t0), "operations", ops);
  r["commits"] = ops / 100 + 1;  // and the close's
  add_disk_counts(r, disk0, path);
  return r;
}

// How long each commit took to become durable after its H5Fflush returned
// (durable=100ms: design.md §9a), seen by asking the driver after every
// commit and, at the end, every 100 µs until all are; a sample of its own,
// since the asking costs the steps time.
class DurabilityLag {
 public:
  explicit DurabilityLag(const BenchFile& f) : f_(f) {}
  void committed() {
    auto [commits, durable] = f_.durable_commits();
    if (returned_.size() < commits) returned_.resize(commits, Clock::now());
    see(durable);
  }
  // Waits, up to `limit`, for every commit to be durable.
  void drain(std::chrono::seconds limit) {
    auto deadline = Clock::now() + limit;
    for (;;) {
      auto [commits, durable] = f_.durable_commits();
      see(durable);
      if (durable >= commits || Clock::now() > deadline) return;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  json result() {
    json r;
    r["durability_lag_p50_ms"] = percentile(lags_ms_, 0.50);
    r["durability_lag_p99_ms"] = percentile(lags_ms_, 0.99);
    r["durability_lag_max_ms"] = lags_ms_.empty() ? 0.0 : *std::max_element(lags_ms_.begin(), lags_ms_.end());
    r["durable_commits_seen"] = lags_ms_.size();
    return r;
  }

 private:
  void see(uint64_t durable) {
    auto now = Clock::now();
    for (; seen_ < durable && seen_ < returned_.size(); ++seen_)
      lags_ms_.push_back(std::chrono::duration<double, std::milli>(now - returned_[seen_]).count());
  }
  const BenchFile& f_;
  std::vector<Clock::time_point> returned_;  // by commit, when its H5Fflush returned
  uint64_t seen_ = 0;
  std::vector<double> lags_ms_;
};

// W4 with the durability lag measured (DurabilityLag): the journal's, or
// sec2-interval-durable's.
json w4_durability_lag(const Driver& d, const std::string& path, int steps, uint64_t step_kib) {
  BenchFile f(d, path);
  DurabilityLag lag(f);
  {
    TimeSeries series(f.id(), step_kib);
    for (int s = 0; s < steps; ++s) {
      series.append();
      f.commit();
      lag.committed();
    }
  }
  lag.drain(std::chrono::seconds(30));
  f.close();
  json r = result("W4-lag", d, 0.0);
  r.update(lag.result());
  r["commits"] = steps;
  r["step_kib"] = step_kib;
  return r;
}

// W4 time series: one step of `step_kib` KiB appended (TimeSeries), then
// a commit, `steps` times.  Commit latency is the commit alone.  The disk's
// counters of the steps (steady_*) leave out the create, the first commit
// (counted alone: it makes names and the binding durable too) and the close.
json w4_time_series(const Driver& d, const std::string& path, int steps, uint64_t step_kib) {
  std::vector<double> latencies;
  DiskCounters disk0 = disk_counters(path);
  auto t0 = Clock::now();
  BenchFile f(d, path);
  const double open_seconds = seconds_since(t0);
  json first_commit, steps_only;
  {
    TimeSeries series(f.id(), step_kib);
    DiskCounters first0 = disk_counters(path);
    DiskCounters loop0 = first0;
    for (int s = 0; s < steps; ++s) {
      series.append();
      auto c0 = Clock::now();
      f.commit();
      latencies.push_back(seconds_since(c0) * 1e6);
      if (s == 0) {
        add_disk_counts(first_commit, first0, path);
        loop0 = disk_counters(path);
      }
    }
    add_disk_counts(steps_only, loop0, path);
  }
  auto close0 = Clock::now();
  f.close();
  json r = counted_result("W4", d, seconds_since(t0), "commits", steps);
  r["open_seconds"] = open_seconds;
  r["close_seconds"] = seconds_since(close0);
  r["first_commit_us"] = latencies.empty() ? 0.0 : latencies.front();
  r["commit_p50_us"] = percentile(latencies, 0.50);
  r["commit_p99_us"] = percentile(latencies, 0.99);
  r["commit_max_us"] = latencies.empty() ? 0.0 : *std::max_element(latencies.begin(), latencies.end());
  r["commit_total_us"] = std::accumulate(latencies.begin(), latencies.end(), 0.0);
  r["step_kib"] = step_kib;
  r["bytes"] = uint64_t(steps) * step_kib * 1024;
  add_disk_counts(r, disk0, path);
  r["first_commit_flushes"] = first_commit["flushes"];
  r["steady_commits"] = steps - 1;
  r["steady_bytes"] = uint64_t(steps - 1) * step_kib * 1024;
  r["steady_flushes"] = steps_only["flushes"];
  r["steady_disk_bytes"] = steps_only["disk_bytes"];
  r["steady_device_bytes"] = steps_only["device_bytes"];
  return r;
}

// Strided small elements (workloads.h), one commit, at close.
json strided_elements(const Driver& d, const std::string& path, const StridedShape& shape) {
  DiskCounters disk0 = disk_counters(path);
  auto t0 = Clock::now();
  BenchFile f(d, path);
  uint64_t bytes = write_strided_elements(f.id(), shape, Share{});
  f.close();
  json r = result("strided", d, seconds_since(t0));
  r.update({{"bytes", bytes}, {"stride", shape.stride}, {"layout", shape.layout}});
  add_disk_counts(r, disk0, path);
  return r;
}

// h5bench's particle patterns (particles.h) in `processes` processes at
// once, a file each (FILE.0, FILE.1, ...), each committed once, at its
// close: the time includes the close, as h5bench's observed rate does.
json particles(const Driver& d, const std::string& path, const ParticlePattern& p, int processes) {
  DiskCounters disk0 = disk_counters(path);
  auto t0 = Clock::now();
  std::vector<pid_t> writers;
  for (int i = 0; i < processes; ++i) {
    pid_t pid = fork();
    if (pid < 0) die(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      BenchFile f(d, path + "." + std::to_string(i));
      write_particles(f.id(), p);
      f.close();
      std::_Exit(0);
    }
    writers.push_back(pid);
  }
  for (pid_t pid : writers) {
    int status = 0;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) die("a particle writer failed");
  }
  json r = result("particles", d, seconds_since(t0));
  r.update({{"bytes", uint64_t(processes) * uint64_t(p.timesteps) * p.particles * 32}, {"layout", p.layout},
            {"dims", p.dims}, {"processes", processes}});
  add_disk_counts(r, disk0, path);
  return r;
}

// A checkpoint written in parts: one contiguous dataset of `mib` MiB,
// written front to back in `pieces` pieces, a commit after each.  HDF5
// allocates the whole dataset at the first write.
json checkpoint_in_parts(const Driver& d, const std::string& path, uint64_t mib, int pieces) {
  const hsize_t n = (mib << 20) / sizeof(double), piece = n / hsize_t(pieces);
  std::vector<double> buf(piece, 4.5);
  DiskCounters disk0 = disk_counters(path);
  auto t0 = Clock::now();
  BenchFile f(d, path);
  hid_t ds = create_dataset(f.id(), "checkpoint", {n});
  for (int i = 0; i < pieces; ++i) {
    write_box(ds, {hsize_t(i) * piece}, {piece}, buf.data());
    f.commit();
  }
  H5Dclose(ds);
  f.close();
  json r = result("parts", d, seconds_since(t0));
  r.update({{"bytes", n * sizeof(double)}, {"pieces", pieces}});
  add_disk_counts(r, disk0, path);
  return r;
}

// A file per time step: `files` files beside `path`, each created, given
// one contiguous dataset of `kib` KiB and an attribute, and closed with no
// H5Fflush: one commit, the close's.  Durable sec2 fsyncs each after its
// close.
json file_per_step(const Driver& d, const std::string& path, int files, uint64_t kib) {
  std::vector<double> data(size_t(kib) * 128, 1.5);
  hid_t scalar = H5Screate(H5S_SCALAR);
  DiskCounters disk0 = disk_counters(path);
  auto t0 = Clock::now();
  for (int i = 0; i < files; ++i) {
    BenchFile f(d, path + ".step" + std::to_string(i) + ".h5");
    hid_t ds = create_dataset(f.id(), "field", {hsize_t(data.size())});
    check(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), "H5Dwrite");
    hid_t a = check_id(H5Acreate2(ds, "step", H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT), "H5Acreate2");
    check(H5Awrite(a, H5T_NATIVE_INT, &i), "H5Awrite");
    H5Aclose(a);
    H5Dclose(ds);
    f.close();
  }
  json r = counted_result("files", d, seconds_since(t0), "files", files);
  H5Sclose(scalar);
  r["bytes"] = uint64_t(files) * (kib << 10);
  add_disk_counts(r, disk0, path);
  return r;
}

// W5, first half: a file and a journal of about `mib` MiB of committed
// transactions, left as a crash leaves them.  Each transaction overwrites a
// committed 64 MiB dataset in 1 MiB pieces, so every byte is journaled.
[[noreturn]] void make_crashed_journal(const std::string& path, uint64_t mib) {
  H5FD_journal_fapl_t c;
  H5Pget_fapl_journal_defaults(&c);
  c.checkpoint_bytes = (mib + 64) << 20;  // no checkpoint: everything stays in the journal
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  check(H5Pset_fapl_journal(fapl, &c), "H5Pset_fapl_journal");
  hid_t f = check_id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "H5Fcreate");
  const hsize_t n = 8 << 20, piece = 128 << 10;  // 64 MiB and 1 MiB of doubles
  hid_t ds = create_dataset(f, "data", {n});
  std::vector<double> v(piece, 1.0);
  for (hsize_t at = 0; at < n; at += piece) write_box(ds, {at}, {piece}, v.data());
  check(H5Fflush(f, H5F_SCOPE_GLOBAL), "H5Fflush");
  for (uint64_t i = 0; i < mib; ++i) {
    std::fill(v.begin(), v.end(), double(i));
    write_box(ds, {(i * piece) % n}, {piece}, v.data());
    if (i % 8 == 7) check(H5Fflush(f, H5F_SCOPE_GLOBAL), "H5Fflush");
  }
  check(H5Fflush(f, H5F_SCOPE_GLOBAL), "H5Fflush");
  std::fflush(stdout);
  _exit(0);  // no close: the journal stays, as after a crash
}

// W5, second half: open-time recovery, a read-write open (replay,
// checkpoint) and a close (journal removed).
json open_recover(const std::string& path) {
  struct stat st;
  if (::stat((path + ".jnl").c_str(), &st) != 0) die("no journal beside " + path);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  check(H5Pset_fapl_journal(fapl, nullptr), "H5Pset_fapl_journal");
  auto t0 = Clock::now();
  hid_t f = check_id(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl), "H5Fopen");
  check(H5Fclose(f), "H5Fclose");
  double secs = seconds_since(t0);
  if (::access((path + ".jnl").c_str(), F_OK) == 0) die("open-time recovery left the journal");
  return json{{"workload", "W5"}, {"driver", "journal"}, {"seconds", secs}, {"journal_bytes", uint64_t(st.st_size)}};
}

// --- live readers (design.md §11) -------------------------------------------------

// A reader's open and close of a file left by make-journal (its journal
// holds every commit): what seeing a newer commit costs, since a snapshot
// is fixed at open.  The median of `count` opens.
json reader_open(const std::string& path, int count) {
  struct stat st;
  if (::stat((path + ".jnl").c_str(), &st) != 0) die("no journal beside " + path);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  check(H5Pset_fapl_journal(fapl, nullptr), "H5Pset_fapl_journal");
  std::vector<double> ms;
  for (int i = 0; i < count; ++i) {
    auto t0 = Clock::now();
    hid_t f = check_id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), "H5Fopen");
    check(H5Fclose(f), "H5Fclose");
    ms.push_back(seconds_since(t0) * 1e3);
  }
  H5Pclose(fapl);
  return json{{"workload", "reader-open"}, {"driver", "journal"}, {"journal_bytes", uint64_t(st.st_size)},
              {"open_p50_ms", percentile(ms, 0.50)}, {"open_max_ms", percentile(ms, 1.0)}};
}

// A process running this program's reader-poll on `path`, its JSON on a pipe.
struct PollingReader {
  pid_t pid;
  int out;  // the pipe's read end
};

PollingReader start_reader(const std::string& self, const std::string& path, double seconds) {
  int fds[2];
  if (::pipe(fds) != 0) die("pipe");
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::execl(self.c_str(), self.c_str(), "reader-poll", path.c_str(), "--seconds", std::to_string(seconds).c_str(),
            (char*)nullptr);
    ::_exit(127);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

// The reader's JSON, once it has exited.
json finish_reader(const PollingReader& r) {
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(r.out, buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
  ::close(r.out);
  ::waitpid(r.pid, nullptr, 0);
  return json::parse(text, nullptr, false);
}

// A process that does nothing but spin for `seconds`: what a polling
// reader takes from the writer in CPU alone, where the processes outnumber
// the cores.
pid_t start_spinner(double seconds) {
  pid_t pid = ::fork();
  if (pid < 0) die("fork");
  if (pid == 0) {
    auto t0 = Clock::now();
    while (seconds_since(t0) < seconds) {
    }
    ::_exit(0);
  }
  return pid;
}

// Commits for `seconds` while `readers` processes ("reader-poll") open the
// file, read its last step and close it, in a loop, and `spinners` spin.
// Each commit is W4's step of 8 KiB, or with `busy` bench::busy_step: about
// 32 KiB of metadata, which at 1 MiB checkpoints brings a checkpoint every
// few dozen commits.
json commit_rate(const Driver& d, const std::string& path, double seconds, int readers, int spinners, bool busy,
                 const std::string& self) {
  BenchFile f(d, path);
  std::optional<TimeSeries> series;
  hid_t busy_series = -1;
  if (busy)
    busy_series = create_busy_series(f.id());
  else
    series.emplace(f.id(), 8);
  f.commit();
  std::vector<PollingReader> polling;
  for (int i = 0; i < readers; ++i) polling.push_back(start_reader(self, path, seconds));
  std::vector<pid_t> spinning;
  for (int i = 0; i < spinners; ++i) spinning.push_back(start_spinner(seconds));
  int steps = 0;
  auto t0 = Clock::now();
  for (; seconds_since(t0) < seconds; ++steps) {
    if (busy) {
      if (!busy_step(f.id(), busy_series, uint64_t(steps))) die("busy_step");
    } else {
      series->append();
    }
    f.commit();
  }
  double secs = seconds_since(t0);
  json polled = json::array();
  for (const PollingReader& r : polling) polled.push_back(finish_reader(r));
  for (pid_t pid : spinning) ::waitpid(pid, nullptr, 0);
  if (busy) H5Dclose(busy_series);
  series.reset();
  f.close();
  json r = counted_result(busy ? "commit-rate-busy" : "commit-rate", d, secs, "commits", steps);
  r["readers"] = readers;
  r["spinners"] = spinners;
  r["polled"] = polled;
  return r;
}

// Reads the series' last element (a step of W4, or busy_step's number).
bool read_last(hid_t ds) {
  hid_t space = H5Dget_space(ds);
  int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(size_t(std::max(rank, 0))), ones(dims.size(), 1);
  bool ok = rank > 0 && H5Sget_simple_extent_dims(space, dims.data(), nullptr) == rank;
  if (ok && dims[0] > 0) {
    for (hsize_t& d : dims) d -= 1;
    hid_t mem = H5Screate(H5S_SCALAR);
    double v = 0;
    ok = H5Sselect_hyperslab(space, H5S_SELECT_SET, dims.data(), nullptr, ones.data(), nullptr) >= 0 &&
         H5Dread(ds, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, &v) >= 0;
    H5Sclose(mem);
  }
  H5Sclose(space);
  return ok;
}

// One polling reader of commit_rate: opens, reads the series' last
// element, closes.  An open is cut off when its snapshot expired.
json reader_poll(const std::string& path, double seconds) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  check(H5Pset_fapl_journal(fapl, nullptr), "H5Pset_fapl_journal");
  int opens = 0, failed = 0;
  auto t0 = Clock::now();
  while (seconds_since(t0) < seconds) {
    bool ok = false;
    H5E_BEGIN_TRY {
      hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl);
      hid_t ds = f >= 0 ? H5Dopen2(f, "series", H5P_DEFAULT) : -1;
      ok = ds >= 0 && read_last(ds);
      if (ds >= 0) H5Dclose(ds);
      if (f >= 0) ok = H5Fclose(f) >= 0 && ok;
    }
    H5E_END_TRY
    ++opens;
    failed += !ok;
  }
  H5Pclose(fapl);
  return json{{"workload", "reader-poll"}, {"opens", opens}, {"failed", failed}};
}

// --- the disk, bare --------------------------------------------------------------

// Sequential O_DIRECT writes of 4 MiB, then one fdatasync.
json bare_write(const std::string& path, uint64_t mib) {
  const size_t io = 4 << 20;
  void* buf = nullptr;
  if (posix_memalign(&buf, 4096, io) != 0) die("posix_memalign");
  std::memset(buf, 0x5a, io);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0644);
  if (fd < 0) die("open O_DIRECT " + path + ": " + std::strerror(errno));
  auto t0 = Clock::now();
  for (uint64_t off = 0; off < (mib << 20); off += io)
    if (::pwrite(fd, buf, io, off_t(off)) != ssize_t(io)) die(std::string("pwrite: ") + std::strerror(errno));
  if (::fdatasync(fd) != 0) die("fdatasync");
  double secs = seconds_since(t0);
  ::close(fd);
  ::unlink(path.c_str());
  std::free(buf);
  return json{{"workload", "bare-write"}, {"seconds", secs}, {"bytes", mib << 20}};
}

// A step of `kib` KiB appended with pwrite, then fdatasync, `count` times:
// what W4's step would cost written bare.  Latency of each write + sync,
// and of the sync alone: the floor of a commit, since W4's step reaches
// the page cache in H5Dwrite, before the commit's clock starts.
//
// With `record`, each step is made durable as a commit of one flush with
// its bytes in place is (design.md §9): the step's writeback started, a
// record of 512 bytes written into a second file whose zeros are durable
// already, and written back (sync_file_range, waiting), then the file's
// fdatasync, the one flush.  Against the plain step, this is the disk's
// own price of the record that a crash-safe commit adds to sec2's writes.
json bare_step(const std::string& path, uint64_t kib, int count, bool record) {
  h5j::UniqueFd file(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!file.valid()) die("open " + path);
  const int fd = file.get();
  const std::string records_path = path + ".records";
  constexpr off_t kRecordSpace = 4 << 20, kRecordBlock = 4096;
  h5j::UniqueFd records;
  std::vector<char> rec(512, 'r');
  if (record) {
    records = h5j::UniqueFd(::open(records_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    std::vector<char> zeros(kRecordSpace, 0);
    if (!records.valid() || ::pwrite(records.get(), zeros.data(), zeros.size(), 0) != ssize_t(zeros.size()) ||
        ::fdatasync(records.get()) != 0)
      die("prepare " + records_path);
  }
  const int rfd = records.get();
  std::vector<char> step(kib << 10, 'x');
  std::vector<double> latencies, syncs;
  for (int i = 0; i < count; ++i) {
    auto t0 = Clock::now();
    if (::pwrite(fd, step.data(), step.size(), off_t(i) * off_t(step.size())) != ssize_t(step.size())) die("pwrite");
    auto t1 = Clock::now();
    if (record) {
      constexpr unsigned kWait = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
      off_t at = (off_t(i) * kRecordBlock) % kRecordSpace;
      if (::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) != 0 ||
          ::pwrite(rfd, rec.data(), rec.size(), at) != ssize_t(rec.size()) ||
          ::sync_file_range(rfd, at, kRecordBlock, kWait) != 0)
        die("record");
    }
    if (::fdatasync(fd) != 0) die("fdatasync");
    latencies.push_back(seconds_since(t0) * 1e6);
    syncs.push_back(seconds_since(t1) * 1e6);
  }
  ::unlink(path.c_str());
  if (record) ::unlink(records_path.c_str());
  return json{{"workload", record ? "bare-step-record" : "bare-step"}, {"step_kib", kib}, {"count", count},
              {"seconds", std::accumulate(latencies.begin(), latencies.end(), 0.0) / 1e6},
              {"bytes", uint64_t(count) * (kib << 10)},
              {"p50_us", percentile(latencies, 0.50)}, {"p99_us", percentile(latencies, 0.99)},
              {"sync_p50_us", percentile(syncs, 0.50)}};
}

// A 4 KiB overwrite and an fdatasync, `count` times: the floor under any
// durable commit.
json bare_fdatasync(const std::string& path, int count) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die("open " + path);
  std::vector<char> page(4096, 'x');
  std::vector<double> latencies;
  for (int i = 0; i < count; ++i) {
    if (::pwrite(fd, page.data(), page.size(), off_t(i % 16) * 4096) != ssize_t(page.size())) die("pwrite");
    auto t0 = Clock::now();
    if (::fdatasync(fd) != 0) die("fdatasync");
    latencies.push_back(seconds_since(t0) * 1e6);
  }
  ::close(fd);
  ::unlink(path.c_str());
  return json{{"workload", "bare-fdatasync"},
              {"count", count},
              {"p50_us", percentile(latencies, 0.50)},
              {"p99_us", percentile(latencies, 0.99)}};
}

// `runs` runs of 8 bytes, `gap` bytes apart, into pages already in the page
// cache: how an MPI rank places staged bytes whose gaps another rank may be
// writing, so that no gap may be written with them.  pwritev cannot batch
// such runs (it writes one contiguous range), so the two ways are a pwrite
// a run and io_uring, `batch` writes to a submission.  Both ways in each
// sample, in alternating order; the time of each, per run.
json bare_scatter(const std::string& path, uint64_t runs, uint64_t gap, unsigned batch) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die("open " + path);
  const uint64_t span = runs * (8 + gap);
  std::vector<char> bytes(span, 'x');
  if (::pwrite(fd, bytes.data(), span, 0) != ssize_t(span)) die("pwrite");
  auto addr = [&](uint64_t i) { return off_t(i * (8 + gap)); };
  auto by_pwrite = [&] {
    auto t0 = Clock::now();
    for (uint64_t i = 0; i < runs; ++i)
      if (::pwrite(fd, bytes.data() + addr(i), 8, addr(i)) != 8) die("pwrite");
    return seconds_since(t0);
  };
  io_uring ring;
  if (int rc = io_uring_queue_init(batch, &ring, 0); rc < 0) die(std::string("io_uring: ") + std::strerror(-rc));
  auto by_uring = [&] {
    auto t0 = Clock::now();
    for (uint64_t i = 0; i < runs;) {
      unsigned n = 0;
      for (; n < batch && i < runs; ++n, ++i)
        io_uring_prep_write(io_uring_get_sqe(&ring), fd, bytes.data() + addr(i), 8, uint64_t(addr(i)));
      if (io_uring_submit_and_wait(&ring, n) < 0) die("io_uring_submit_and_wait");
      for (unsigned reaped = 0; reaped < n; ++reaped) {
        io_uring_cqe* cqe = nullptr;
        if (io_uring_wait_cqe(&ring, &cqe) < 0 || cqe->res != 8) die("io_uring write");
        io_uring_cqe_seen(&ring, cqe);
      }
    }
    return seconds_since(t0);
  };
  double pwrite_s = 0, uring_s = 0;
  for (int round = 0; round < 4; ++round) {
    if (round % 2 == 0) pwrite_s += by_pwrite(), uring_s += by_uring();
    else uring_s += by_uring(), pwrite_s += by_pwrite();
  }
  io_uring_queue_exit(&ring);
  ::close(fd);
  ::unlink(path.c_str());
  const double per_run = 1e9 / 4 / double(runs);
  return json{{"workload", "bare-scatter"}, {"runs", runs}, {"gap", gap}, {"batch", batch},
              {"pwrite_ns_per_run", pwrite_s * per_run}, {"uring_ns_per_run", uring_s * per_run}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"One h5journal benchmark measurement; prints it as JSON.  See bench/run_bench.py."};
  app.require_subcommand(1);
  Driver driver;
  std::string path;
  uint64_t mib = 1024;
  int count = 0;
  hsize_t edge = 256;
  auto with_driver = [&](CLI::App* sub) {
    sub->add_option("file", path, "the HDF5 file to write")->required();
    sub->add_option("--driver", driver.name,
                    "sec2 | sec2-durable | sec2-close-durable | sec2-interval-durable | core | journal")
        ->required()
        ->check(CLI::IsMember({"sec2", "sec2-durable", "sec2-close-durable", "sec2-interval-durable", "core", "journal"}));
    sub->add_option("--config", driver.config, "journal configuration, key=value;...");
    return sub;
  };
  auto* w1 = with_driver(app.add_subcommand("w1", "checkpoint: large contiguous datasets written whole"));
  w1->add_option("--mib", mib, "total MiB");
  auto* w2 = with_driver(app.add_subcommand("w2", "strided: a 3-D array written in 32^3 blocks"));
  w2->add_option("--edge", edge, "array edge (a multiple of 32)");
  auto* w3 = with_driver(app.add_subcommand("w3", "metadata-heavy: groups, small datasets, attributes"));
  w3->add_option("--ops", count, "operations")->required();
  auto* w4 = with_driver(app.add_subcommand("w4", "time series: append a step, commit, repeat"));
  w4->add_option("--steps", count, "steps")->required();
  uint64_t kib = 8;
  w4->add_option("--step-kib", kib, "KiB a step (default 8)");
  bool lag = false;
  w4->add_flag("--durability-lag", lag,
               "measure each commit's time to durable instead (the journal's stats, or the paced floor's)");
  StridedShape shape;
  shape.add_options(*with_driver(app.add_subcommand("strided", "strided small elements: 8-byte runs, a pass per offset")));
  ParticlePattern pattern;
  int processes = 1;
  auto* pt = with_driver(app.add_subcommand("particles", "h5bench's particle patterns, a file per process"));
  pattern.add_options(*pt);
  pt->add_option("--processes", processes, "writers at once, a file each");
  int pieces = 16;
  auto* parts = with_driver(app.add_subcommand("parts", "a checkpoint written in parts, a commit after each"));
  parts->add_option("--mib", mib, "MiB in the dataset");
  parts->add_option("--pieces", pieces, "pieces");
  int files = 0;
  auto* fp = with_driver(app.add_subcommand("files", "a file per time step: create, write a dataset, close"));
  fp->add_option("--files", files, "files")->required();
  fp->add_option("--kib", kib, "KiB in each file's dataset");
  auto* bs = app.add_subcommand("bare-step", "a step appended with pwrite, then fdatasync: W4's floor");
  bs->add_option("file", path)->required();
  bs->add_option("--kib", kib, "KiB a step");
  bs->add_option("--count", count, "steps")->required();
  bool record = false;
  bs->add_flag("--record", record,
               "each step made durable as a commit of one flush with it in place: a record written back, then the "
               "fdatasync");
  auto* mk = app.add_subcommand("make-journal", "W5: leave a file and a journal of about --mib MiB, as a crash would");
  mk->add_option("file", path)->required();
  mk->add_option("--mib", mib, "journal MiB");
  auto* orec = app.add_subcommand("open-recover", "W5: time open-time recovery of a file left by make-journal");
  orec->add_option("file", path)->required();
  auto* bw = app.add_subcommand("bare-write", "the disk's sequential O_DIRECT write bandwidth");
  bw->add_option("file", path)->required();
  bw->add_option("--mib", mib, "MiB to write");
  auto* bf = app.add_subcommand("bare-fdatasync", "the disk's fdatasync latency");
  bf->add_option("file", path)->required();
  bf->add_option("--count", count, "fdatasyncs")->required();
  uint64_t runs = 262144, gap = 8;
  unsigned batch = 256;
  auto* bsc = app.add_subcommand("bare-scatter", "8-byte runs placed apart: a pwrite each against io_uring batches");
  bsc->add_option("file", path)->required();
  bsc->add_option("--runs", runs, "runs");
  bsc->add_option("--gap", gap, "bytes between runs");
  bsc->add_option("--batch", batch, "writes to an io_uring submission");
  auto* ro = app.add_subcommand("reader-open", "a reader's open of a file left by make-journal, --count times");
  ro->add_option("file", path)->required();
  ro->add_option("--count", count, "opens")->required();
  double seconds = 5;
  int readers = 0, spinners = 0;
  bool busy = false;
  auto* cr = with_driver(app.add_subcommand("commit-rate", "W4's commits for --seconds beside --readers polling"));
  cr->add_option("--seconds", seconds, "seconds");
  cr->add_option("--readers", readers, "polling reader processes");
  cr->add_option("--spinners", spinners, "processes that only spin on the CPU");
  cr->add_flag("--busy", busy, "commit busy_step (tens of KiB of metadata) instead of W4's step");
  auto* rp = app.add_subcommand("reader-poll", "commit-rate's reader: open, look, close, in a loop");
  rp->add_option("file", path)->required();
  rp->add_option("--seconds", seconds, "seconds");
  CLI11_PARSE(app, argc, argv);

  json r;
  if (*w1) r = w1_checkpoint(driver, path, mib, 8);
  if (*w2) r = w2_strided(driver, path, edge);
  if (*w3) r = w3_metadata(driver, path, count);
  if (*w4) r = lag ? w4_durability_lag(driver, path, count, kib) : w4_time_series(driver, path, count, kib);
  if (*app.get_subcommand("strided")) r = strided_elements(driver, path, shape);
  if (*parts) r = checkpoint_in_parts(driver, path, mib, pieces);
  if (*pt) r = particles(driver, path, pattern, processes);
  if (*fp) r = file_per_step(driver, path, files, kib);
  if (*bs) r = bare_step(path, kib, count, record);
  if (*mk) make_crashed_journal(path, mib);
  if (*orec) r = open_recover(path);
  if (*bw) r = bare_write(path, mib);
  if (*bf) r = bare_fdatasync(path, count);
  if (*bsc) r = bare_scatter(path, runs, gap, batch);
  if (*ro) r = reader_open(path, count);
  if (*cr) r = commit_rate(driver, path, seconds, readers, spinners, busy, "/proc/self/exe");
  if (*rp) r = reader_poll(path, seconds);
  std::printf("%s\n", r.dump().c_str());
  return 0;
}
