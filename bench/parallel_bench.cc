// parallel_bench: one measurement of parallel HDF5 per run, under mpiexec.
// bench/run_bench.py --parallel runs it for each workload, rank count and
// driver in alternation, each sample a fresh mpiexec.
//
// Each subcommand prints one JSON object on rank 0's stdout.  Times are
// wall-clock on rank 0, from a barrier before the file is created to a
// barrier after the last rank's close returned (and, for mpio-durable, its
// fsync): the slowest rank's time.
//
// Drivers (--driver):
//   mpio          HDF5's MPI-IO driver (ROMIO): nothing is durable at close;
//                 its H5Fflush is an MPI_File_sync.
//   mpio-durable  mpio, plus an fsync of the file by every rank after
//                 H5Fclose, as sec2-durable in the serial benchmark.
//   journal       h5journal in MPI mode (the FAPL carries MPI_COMM_WORLD),
//                 configured by --config "key=value;...".  At one rank the
//                 driver opens the file serially (docs/design.md §10).
// --collective makes the dataset writes collective (H5FD_MPIO_COLLECTIVE);
// they are independent by default.
#include <hdf5.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <functional>
#include <string>
#include <vector>

#include "file.h"
#include "format.h"
#include "h5journal.h"
#include "journal_reader.h"
#include "workloads.h"

namespace {

using namespace bench;

int rank = 0, ranks = 1;

struct Driver {
  std::string name;  // mpio | mpio-durable | journal
  std::string config;
  bool collective = false;

  hid_t fapl() const {
    hid_t fapl = check_id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
    if (name == "journal") {
      check_id(H5FD_journal_init(), "registering the journal driver");
      check(H5Pset_driver_by_name(fapl, "journal", config.c_str()), "H5Pset_driver_by_name(journal)");
      check(H5Pset_mpi_params(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), "H5Pset_mpi_params");
    } else {
      check(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), "H5Pset_fapl_mpio");
    }
    return fapl;
  }

  hid_t dxpl() const {
    hid_t dxpl = check_id(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate");
    check(H5Pset_dxpl_mpio(dxpl, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT), "H5Pset_dxpl_mpio");
    return dxpl;
  }

  json result(const char* workload, double secs) const {
    json r = bench::result(workload, name, config, secs);
    r["ranks"] = ranks;
    r["collective"] = collective;
    return r;
  }
};

// A file every rank opens together, and closes durably for mpio-durable.
class ParallelFile {
 public:
  ParallelFile(const Driver& d, std::string path) : driver_(d), path_(std::move(path)), dxpl_(d.dxpl()) {
    hid_t fapl = d.fapl();
    id_ = check_id(H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "H5Fcreate");
    H5Pclose(fapl);
  }
  ParallelFile(const ParallelFile&) = delete;
  ParallelFile& operator=(const ParallelFile&) = delete;
  ~ParallelFile() { H5Pclose(dxpl_); }

  hid_t id() const { return id_; }
  hid_t dxpl() const { return dxpl_; }
  Share share() const { return Share{rank, ranks}; }

  // The I/O HDF5 did for the last write (it may break collective I/O to
  // independent, and says why).
  json io_mode() const {
    H5D_mpio_actual_io_mode_t mode;
    uint32_t local = 0, global = 0;
    check(H5Pget_mpio_actual_io_mode(dxpl_, &mode), "H5Pget_mpio_actual_io_mode");
    check(H5Pget_mpio_no_collective_cause(dxpl_, &local, &global), "H5Pget_mpio_no_collective_cause");
    return {{"actual_io_mode", int(mode)}, {"no_collective_cause", global}};
  }

  // A commit point: a journal transaction, an MPI_File_sync for mpio.
  void commit() { check(H5Fflush(id_, H5F_SCOPE_GLOBAL), "H5Fflush"); }

  // Every rank syncs: on a parallel file system each rank's writes are
  // its own client's (here, one node, the later ones find nothing dirty).
  void close() {
    check(H5Fclose(id_), "H5Fclose");
    if (driver_.name == "mpio-durable") fsync_path(path_);
  }

 private:
  const Driver& driver_;
  std::string path_;
  hid_t dxpl_;
  hid_t id_;
};

// Seconds `work` takes on the slowest rank: between two barriers.
template <typename F>
double timed(F&& work) {
  MPI_Barrier(MPI_COMM_WORLD);
  auto t0 = Clock::now();
  work();
  MPI_Barrier(MPI_COMM_WORLD);
  return seconds_since(t0);
}

// --- workloads -----------------------------------------------------------------

// One timed run of a workload body: open, write this rank's share, close.
json timed_workload(const Driver& d, const std::string& path, const char* name,
                    const std::function<uint64_t(const ParallelFile&)>& write) {
  uint64_t bytes = 0;
  json mode;
  double secs = timed([&] {
    ParallelFile f(d, path);
    bytes = write(f);
    mode = f.io_mode();
    f.close();
  });
  json r = d.result(name, secs);
  r["bytes"] = bytes;
  r.update(mode);
  return r;
}

json w1_checkpoint(const Driver& d, const std::string& path, uint64_t mib) {
  return timed_workload(d, path, "W1",
                        [&](const ParallelFile& f) { return write_checkpoint(f.id(), mib, 8, f.share(), f.dxpl()); });
}

json w2_strided(const Driver& d, const std::string& path, hsize_t edge) {
  return timed_workload(d, path, "W2",
                        [&](const ParallelFile& f) { return write_strided(f.id(), edge, f.share(), f.dxpl()); });
}

json strided_elements(const Driver& d, const std::string& path, const StridedShape& shape) {
  json r = timed_workload(d, path, "strided", [&](const ParallelFile& f) {
    return write_strided_elements(f.id(), shape, f.share(), f.dxpl());
  });
  r.update({{"stride", shape.stride}, {"layout", shape.layout}});
  return r;
}

// W4 time series: every rank appends its step of `kib` KiB (TimeSeries),
// then a commit, `steps` times.  A commit's latency is rank 0's H5Fflush,
// all ranks starting together; mpio's is an MPI_File_sync, which ROMIO's
// file system driver makes an fsync on every rank, so mpio's commits are
// as durable as the journal's.  The disk's counters are the whole device's,
// read on rank 0; steady_* leave out the create, the first commit and the
// close, as in the serial W4.
json w4_time_series(const Driver& d, const std::string& path, int steps, uint64_t kib) {
  std::vector<double> latencies;
  json steady;
  uint64_t bytes = 0;
  DiskCounters disk0 = disk_counters(path);
  double secs = timed([&] {
    ParallelFile f(d, path);
    {
      TimeSeries series(f.id(), kib, f.share(), f.dxpl());
      DiskCounters loop0{};
      for (int s = 0; s < steps; ++s) {
        series.append();
        latencies.push_back(timed([&] { f.commit(); }) * 1e6);
        if (s == 0) loop0 = disk_counters(path);
      }
      add_disk_counts(steady, loop0, path);
      bytes = series.bytes();
    }
    f.close();
  });
  json r = d.result("W4", secs);
  r.update({{"bytes", bytes}, {"commits", steps}, {"step_kib", kib}});
  r["commit_p50_us"] = percentile(latencies, 0.50);
  r["commit_p99_us"] = percentile(latencies, 0.99);
  add_disk_counts(r, disk0, path);
  r["steady_commits"] = steps - 1;
  r["steady_bytes"] = bytes / uint64_t(steps) * uint64_t(steps - 1);
  r["steady_flushes"] = steady["flushes"];
  r["steady_device_bytes"] = steady["device_bytes"];
  return r;
}

// What the journal holds per transaction, read back on rank 0 from the
// journal itself: records by type, their bytes, and the journal space each
// transaction takes (a commit pads to the next 4 KiB block).
json journal_census(const std::string& journal) {
  using namespace h5j;
  auto file = posix_filesystem().open(journal, OpenMode::kReadOnly, IoEngine::kSync);
  if (!file) die("open " + journal + ": " + file.status().message());
  auto reader = JournalReader::open(**file);
  if (!reader) die("read " + journal + ": " + reader.status().message());
  json txns = json::array();
  std::map<std::string, uint64_t> count, bytes;
  uint64_t begin_lsn = 0;
  for (;;) {
    auto rec = (*reader)->next();
    if (!rec) die("read " + journal + ": " + rec.status().message());
    if (!rec->has_value()) break;
    const Record& r = **rec;
    if (r.header.type == RecordType::kBegin) begin_lsn = r.header.lsn;
    std::string type = record_type_name(r.header.type);
    count[type] += 1;
    bytes[type] += record_span(r.header.payload_len);
    if (r.header.type != RecordType::kCommit) continue;
    txns.push_back({{"records", count}, {"record_bytes", bytes}, {"space", r.next_offset - begin_lsn}});
    count.clear();
    bytes.clear();
  }
  return txns;
}

// Commit cost: each rank overwrites its own `kib` KiB of a committed
// dataset, then a commit, `steps` times.  Overwrites of committed data are
// what the protocol carries: a follower's go to its data log, and reach the
// journal as one DATA record each.  A commit's latency is rank 0's
// H5Fflush, started together after a barrier.
json commit_cost(const Driver& d, const std::string& path, int steps, int kib) {
  const hsize_t width = hsize_t(kib) * 1024 / sizeof(double);
  std::vector<double> row(width, 4.5);
  std::vector<double> latencies;
  ParallelFile f(d, path);
  hid_t ds = create_dataset(f.id(), "field", {hsize_t(ranks), width});
  write_box(ds, {hsize_t(rank), 0}, {1, width}, row.data(), f.dxpl());
  f.commit();
  auto t0 = Clock::now();
  for (int s = 0; s < steps; ++s) {
    write_box(ds, {hsize_t(rank), 0}, {1, width}, row.data(), f.dxpl());
    latencies.push_back(timed([&] { f.commit(); }) * 1e6);
  }
  double secs = seconds_since(t0);
  json census = d.name == "journal" && rank == 0 ? journal_census(path + ".jnl") : json();
  H5Dclose(ds);
  f.close();
  json r = d.result("commits", secs);
  r["commits"] = steps;
  r["kib_per_rank"] = kib;
  r["commit_p50_us"] = percentile(latencies, 0.50);
  r["commit_p99_us"] = percentile(latencies, 0.99);
  if (!census.empty()) r["journal"] = census.back();  // the last step's transaction
  return r;
}

// The commit protocol's collectives alone (vfd/mpi/mpi_session.cc), no I/O, for
// a commit without a checkpoint: agree (MPI_Allgather of two ints), the
// lengths and data log sizes (MPI_Gather of two u64), `records` 56-byte
// DATA records from each follower (MPI_Gatherv), agree, agree.
json collectives(int count, int records) {
  const size_t n = size_t(ranks);
  std::vector<int> codes(2 * n), lens(n), offsets(n);
  std::vector<uint64_t> sizes(2 * n);
  std::vector<char> mine(rank == 0 ? 0 : size_t(records) * 56), all(n * size_t(records) * 56);
  int code[2] = {0, 0};
  uint64_t my_sizes[2] = {mine.size(), 0};
  auto agree = [&] { MPI_Allgather(code, 2, MPI_INT, codes.data(), 2, MPI_INT, MPI_COMM_WORLD); };
  std::vector<double> latencies;
  for (int i = 0; i < count; ++i) {
    latencies.push_back(timed([&] {
      agree();
      MPI_Gather(my_sizes, 2, MPI_UINT64_T, sizes.data(), 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
      for (size_t r = 0; r < n; ++r) lens[r] = int(sizes[2 * r]);
      for (int r = 1; r < ranks; ++r) offsets[size_t(r)] = offsets[size_t(r - 1)] + lens[size_t(r - 1)];
      MPI_Gatherv(mine.data(), int(mine.size()), MPI_BYTE, all.data(), lens.data(), offsets.data(), MPI_BYTE, 0, MPI_COMM_WORLD);
      agree();
      agree();
    }) * 1e6);
  }
  json r{{"workload", "collectives"}, {"ranks", ranks}, {"records_per_follower", records}};
  r["p50_us"] = percentile(latencies, 0.50);
  r["p99_us"] = percentile(latencies, 0.99);
  return r;
}

int run(int argc, char** argv) {
  CLI::App app{"One parallel h5journal benchmark measurement, under mpiexec; rank 0 prints it as JSON."};
  app.require_subcommand(1);
  Driver driver;
  std::string path;
  uint64_t mib = 1024;
  hsize_t edge = 256;
  int count = 0, kib = 8, records = 1;
  auto with_driver = [&](CLI::App* sub) {
    sub->add_option("file", path, "the HDF5 file to write")->required();
    sub->add_option("--driver", driver.name, "mpio | mpio-durable | journal")
        ->required()
        ->check(CLI::IsMember({"mpio", "mpio-durable", "journal"}));
    sub->add_option("--config", driver.config, "journal configuration, key=value;...");
    sub->add_flag("--collective", driver.collective, "collective dataset writes (default independent)");
    return sub;
  };
  auto* w1 = with_driver(app.add_subcommand("w1", "checkpoint: each rank writes its share of 8 contiguous datasets"));
  w1->add_option("--mib", mib, "total MiB");
  auto* w2 = with_driver(app.add_subcommand("w2", "strided: each rank writes its slab of a 3-D array in 32^3 blocks"));
  w2->add_option("--edge", edge, "array edge (a multiple of 32)");
  StridedShape shape;
  shape.add_options(
      *with_driver(app.add_subcommand("strided", "strided small elements: each rank its slab, a pass per offset")));
  auto* cc = with_driver(app.add_subcommand("commits", "commit cost: overwrite a few KiB a rank, commit, repeat"));
  cc->add_option("--steps", count, "commits")->required();
  cc->add_option("--kib", kib, "KiB each rank writes per step");
  auto* w4 = with_driver(app.add_subcommand("w4", "time series: each rank appends its step, commit, repeat"));
  w4->add_option("--steps", count, "commits")->required();
  w4->add_option("--step-kib", kib, "KiB each rank appends a step");
  auto* coll = app.add_subcommand("collectives", "the commit protocol's collectives alone, no I/O");
  coll->add_option("--count", count, "repetitions")->required();
  coll->add_option("--records", records, "56-byte DATA records per follower");
  CLI11_PARSE(app, argc, argv);

  json r;
  if (*w1) r = w1_checkpoint(driver, path, mib);
  if (*w2) r = w2_strided(driver, path, edge);
  if (*app.get_subcommand("strided")) r = strided_elements(driver, path, shape);
  if (*cc) r = commit_cost(driver, path, count, kib);
  if (*w4) r = w4_time_series(driver, path, count, uint64_t(kib));
  if (*coll) r = collectives(count, records);
  if (rank == 0) std::printf("%s\n", r.dump().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int status = run(argc, argv);
  MPI_Finalize();
  return status;
}
