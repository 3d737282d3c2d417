// What the serial benchmark (h5journal_bench) and the parallel one
// (parallel_bench) share: error handling, timing, and the bodies of W1 and
// W2, which write one process's share of the work into an open file.  With
// one process the share is everything, and W1 and W2 are the serial
// workloads exactly.
#pragma once

#include <hdf5.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bench {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

double seconds_since(Clock::time_point t0);
[[noreturn]] void die(const std::string& what);
void check(herr_t status, const char* what);
hid_t check_id(hid_t id, const char* what);
double percentile(std::vector<double> v, double p);
// fsync of a closed file: durability for drivers that do not sync at close.
void fsync_path(const std::string& path);

// Bytes this process has sent to the storage layer so far (write_bytes of
// /proc/self/io: page-cache pages dirtied, and direct I/O).
uint64_t bytes_sent_to_disk();

// What the disk was asked to do, so that a figure can be explained by it:
// the cache flushes and the bytes its block device completed (fields 16
// and 7 of /sys/block/DEV/stat, for the whole disk holding `path`'s
// directory; -1 on a file system without a block device), and the bytes
// this process sent to storage (write_bytes, which on some kernels counts
// an overwrite of written, synced space many times over).  The device's
// counts are the whole device's: run on a quiet machine.
struct DiskCounters {
  int64_t flushes;
  int64_t device_bytes;
  uint64_t bytes;
};
DiskCounters disk_counters(const std::string& path);
// Adds "flushes", "device_bytes" and "disk_bytes", what the disk did since
// `before`.
void add_disk_counts(json& r, const DiskCounters& before, const std::string& path);

// One sample's JSON: which workload, which driver, how long.
json result(const char* workload, const std::string& driver, const std::string& config, double secs);

hid_t create_dataset(hid_t loc, const char* name, const std::vector<hsize_t>& dims,
                     const std::vector<hsize_t>& maxdims = {}, hid_t dcpl = H5P_DEFAULT);

// Writes `buf` into the box [start, start + count) of `ds`.  A count with a
// zero selects nothing, so that a process with no work left can still take
// part in a collective write.
void write_box(hid_t ds, const std::vector<hsize_t>& start, const std::vector<hsize_t>& count, const double* buf,
               hid_t dxpl = H5P_DEFAULT);

// One process's part of work split across `ranks` processes: a contiguous
// range of each list of items (elements, blocks).
struct Share {
  int rank = 0;
  int ranks = 1;
  hsize_t begin(hsize_t n) const;  // the first n % ranks ranks take one item more
  hsize_t end(hsize_t n) const { return Share{rank + 1, ranks}.begin(n); }
  // Items the busiest rank takes: every rank makes that many calls, so that
  // collective calls match (a rank with nothing left writes an empty box).
  hsize_t most(hsize_t n) const { return (n + hsize_t(ranks) - 1) / hsize_t(ranks); }
};

// W4's time series: a 2-D chunked dataset "series" whose rows are steps of
// `step_kib` KiB, a chunk a row, so that a commit writes its step and not a
// growing chunk again.  Each append() is a step of every process: the
// dataset grows by one row a process, and this process writes its own (row
// step * ranks + rank).  Under MPI append() is collective (H5Dset_extent).
class TimeSeries {
 public:
  TimeSeries(hid_t file, uint64_t step_kib, Share share = {}, hid_t dxpl = H5P_DEFAULT);
  TimeSeries(const TimeSeries&) = delete;
  TimeSeries& operator=(const TimeSeries&) = delete;
  ~TimeSeries();
  void append();
  // Bytes of the whole dataset so far, every process's rows.
  uint64_t bytes() const { return steps_ * hsize_t(share_.ranks) * width_ * sizeof(double); }

 private:
  Share share_;
  hid_t dxpl_;
  hsize_t width_;
  std::vector<double> row_;
  hid_t ds_;
  hsize_t steps_ = 0;
};

// W1 checkpoint: `datasets` contiguous 1-D datasets of `mib` MiB in total.
// Each process writes its share of every dataset, front to back, in calls
// of up to 16 MiB.  Returns the bytes of the whole file's data.
uint64_t write_checkpoint(hid_t file, uint64_t mib, int datasets, Share share, hid_t dxpl = H5P_DEFAULT);

// W2 strided: an n^3 array of doubles (contiguous layout) written in 32^3
// blocks, each 32^2 runs of 256 bytes, n*8 bytes apart.  The blocks, in
// i, j, k order, are shared out in contiguous ranges: slabs of the array
// when the ranks divide n/32.  Returns the bytes of the whole array.
uint64_t write_strided(hid_t file, hsize_t n, Share share, hid_t dxpl = H5P_DEFAULT);

// Strided small elements: `elements` doubles written in `stride` passes,
// pass p selecting elements p, p + stride, p + 2 stride, ... (block 1), one
// 8-byte run each.  Layouts: "contiguous" and "chunked" (chunks of 64 Ki
// elements), a 1-D dataset; "columns", a 2-D one of elements / 1024 rows by
// 1024 columns written a column at a time (a run a row, 8 KiB apart, and
// stride ignored).  Each process writes the elements of its share of the
// rows (of the dataset, in 1-D), so the ranks' regions are slabs.
struct StridedShape {
  hsize_t elements = hsize_t(1) << 21;
  hsize_t stride = 4;
  std::string layout = "contiguous";
  // --elements, --stride and --layout on `sub`.
  void add_options(CLI::App& sub);
};
// Returns the bytes of the whole dataset.
uint64_t write_strided_elements(hid_t file, const StridedShape& shape, Share share, hid_t dxpl = H5P_DEFAULT);

// The busy writer of the live-reader workload and of test/readers/busy_writer.cc,
// metadata-heavy in HDF5's default (old) format.  Step s makes group
// /step_NNNNNN holding a 512-double dataset "data" with an attribute
// "version" 0; deletes step s-7's dataset and writes it again with 1024
// doubles and version 1, so that HDF5 reuses the space it freed; deletes
// step s-400's group, so that the file (and a reader's walk of it) stays
// bounded; appends s to the chunked /series; sets the root's attribute
// "steps" to s+1.  The caller commits.  busy_value is element k of a
// step's data.
constexpr int kBusyReuseAge = 7;
constexpr int kBusyKept = 400;
std::string busy_step_name(uint64_t step);
double busy_value(uint64_t step, int version, size_t k);
hid_t create_busy_series(hid_t file);
bool busy_step(hid_t file, hid_t series, uint64_t step);

}  // namespace bench
