#include "workloads.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>

namespace bench {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void die(const std::string& what) {
  std::fprintf(stderr, "h5journal bench: %s\n", what.c_str());
  std::exit(1);
}

void check(herr_t status, const char* what) {
  if (status < 0) die(std::string(what) + " failed");
}

hid_t check_id(hid_t id, const char* what) {
  if (id < 0) die(std::string(what) + " failed");
  return id;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

void fsync_path(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) die("fsync " + path + ": " + std::strerror(errno));
  ::close(fd);
}

uint64_t bytes_sent_to_disk() {
  FILE* f = std::fopen("/proc/self/io", "r");
  if (f == nullptr) die("/proc/self/io: " + std::string(std::strerror(errno)));
  char line[128];
  unsigned long long n = 0;
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::sscanf(line, "write_bytes: %llu", &n) == 1) break;
  std::fclose(f);
  return n;
}

namespace {

// The stat file of the whole disk holding `path`'s directory, or "".
std::string disk_stat_path(const std::string& path) {
  std::string dir = path.substr(0, path.find_last_of('/') + 1);
  struct stat st {};
  if (::stat(dir.empty() ? "." : dir.c_str(), &st) != 0 || major(st.st_dev) == 0) return "";
  std::string dev = "/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  if (::access((dev + "/partition").c_str(), F_OK) == 0) dev += "/..";  // a partition counts no flushes of its own
  return ::access((dev + "/stat").c_str(), R_OK) == 0 ? dev + "/stat" : "";
}

}  // namespace

DiskCounters disk_counters(const std::string& path) {
  DiskCounters c{-1, -1, bytes_sent_to_disk()};
  std::string stat_path = disk_stat_path(path);
  if (stat_path.empty()) return c;
  std::ifstream in(stat_path);
  uint64_t field = 0;
  for (int i = 1; i <= 16 && in >> field; ++i) {
    if (i == 7) c.device_bytes = int64_t(field * 512);  // sectors written
    if (i == 16) c.flushes = int64_t(field);
  }
  return c;
}

void add_disk_counts(json& r, const DiskCounters& before, const std::string& path) {
  DiskCounters now = disk_counters(path);
  r["disk_bytes"] = now.bytes - before.bytes;
  r["flushes"] = before.flushes < 0 || now.flushes < 0 ? json(nullptr) : json(now.flushes - before.flushes);
  r["device_bytes"] =
      before.device_bytes < 0 || now.device_bytes < 0 ? json(nullptr) : json(now.device_bytes - before.device_bytes);
}

json result(const char* workload, const std::string& driver, const std::string& config, double secs) {
  return json{{"workload", workload}, {"driver", driver}, {"config", config}, {"seconds", secs}};
}

hid_t create_dataset(hid_t loc, const char* name, const std::vector<hsize_t>& dims,
                     const std::vector<hsize_t>& maxdims, hid_t dcpl) {
  hid_t space = check_id(H5Screate_simple(int(dims.size()), dims.data(), maxdims.empty() ? nullptr : maxdims.data()),
                         "H5Screate_simple");
  hid_t ds = check_id(H5Dcreate2(loc, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), "H5Dcreate2");
  H5Sclose(space);
  return ds;
}

void write_box(hid_t ds, const std::vector<hsize_t>& start, const std::vector<hsize_t>& count, const double* buf,
               hid_t dxpl) {
  hid_t fs = check_id(H5Dget_space(ds), "H5Dget_space");
  hid_t ms = check_id(H5Screate_simple(int(count.size()), count.data(), nullptr), "H5Screate_simple");
  if (std::find(count.begin(), count.end(), 0) != count.end()) {
    check(H5Sselect_none(fs), "H5Sselect_none");
    check(H5Sselect_none(ms), "H5Sselect_none");
  } else {
    check(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
          "H5Sselect_hyperslab");
  }
  check(H5Dwrite(ds, H5T_NATIVE_DOUBLE, ms, fs, dxpl, buf), "H5Dwrite");
  H5Sclose(ms);
  H5Sclose(fs);
}

hsize_t Share::begin(hsize_t n) const {
  hsize_t r = hsize_t(rank), p = hsize_t(ranks);
  return r * (n / p) + std::min(r, n % p);
}

TimeSeries::TimeSeries(hid_t file, uint64_t step_kib, Share share, hid_t dxpl)
    : share_(share), dxpl_(dxpl), width_(step_kib * 1024 / sizeof(double)), row_(width_, 3.5) {
  hid_t dcpl = check_id(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate");
  hsize_t chunk[2] = {1, width_};
  check(H5Pset_chunk(dcpl, 2, chunk), "H5Pset_chunk");
  ds_ = create_dataset(file, "series", {0, width_}, {H5S_UNLIMITED, width_}, dcpl);
  H5Pclose(dcpl);
}

TimeSeries::~TimeSeries() { H5Dclose(ds_); }

void TimeSeries::append() {
  const hsize_t ranks = hsize_t(share_.ranks);
  hsize_t extent[2] = {(steps_ + 1) * ranks, width_};
  check(H5Dset_extent(ds_, extent), "H5Dset_extent");
  write_box(ds_, {steps_ * ranks + hsize_t(share_.rank), 0}, {1, width_}, row_.data(), dxpl_);
  ++steps_;
}

uint64_t write_checkpoint(hid_t file, uint64_t mib, int datasets, Share share, hid_t dxpl) {
  const hsize_t per_ds = (mib << 20) / sizeof(double) / hsize_t(datasets);
  const hsize_t piece = std::min<hsize_t>(share.most(per_ds), (16 << 20) / sizeof(double));
  const hsize_t begin = share.begin(per_ds), end = share.end(per_ds);
  std::vector<double> buf(piece, 1.5);
  for (int i = 0; i < datasets; ++i) {
    hid_t ds = create_dataset(file, ("checkpoint" + std::to_string(i)).c_str(), {per_ds});
    for (hsize_t done = 0; done < share.most(per_ds); done += piece) {
      hsize_t at = std::min(begin + done, end);
      write_box(ds, {at}, {std::min(piece, end - at)}, buf.data(), dxpl);
    }
    H5Dclose(ds);
  }
  return per_ds * sizeof(double) * hsize_t(datasets);
}

uint64_t write_strided(hid_t file, hsize_t n, Share share, hid_t dxpl) {
  const hsize_t b = 32, m = n / b, blocks = m * m * m;
  if (n % b != 0) die("W2 needs an edge that is a multiple of 32");
  std::vector<double> block(b * b * b);
  std::iota(block.begin(), block.end(), 0.0);
  hid_t ds = create_dataset(file, "array", {n, n, n});
  const hsize_t first = share.begin(blocks), end = share.end(blocks);
  for (hsize_t x = first; x < first + share.most(blocks); ++x) {
    hsize_t edge = x < end ? b : 0;
    write_box(ds, {x / (m * m) * b, x / m % m * b, x % m * b}, {edge, edge, edge}, block.data(), dxpl);
  }
  H5Dclose(ds);
  return n * n * n * sizeof(double);
}

namespace {

// Writes `buf` at the elements of `ds` that start + stride * k, k < count,
// select in each dimension (an empty selection when a count is zero).
void write_strided_selection(hid_t ds, const std::vector<hsize_t>& start, const std::vector<hsize_t>& stride,
                             const std::vector<hsize_t>& count, const double* buf, hid_t dxpl) {
  hid_t fs = check_id(H5Dget_space(ds), "H5Dget_space");
  hsize_t total = 1;
  for (hsize_t c : count) total *= c;
  hid_t ms = check_id(H5Screate_simple(1, &total, nullptr), "H5Screate_simple");
  if (total == 0) {
    check(H5Sselect_none(fs), "H5Sselect_none");
    check(H5Sselect_none(ms), "H5Sselect_none");
  } else {
    check(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start.data(), stride.data(), count.data(), nullptr),
          "H5Sselect_hyperslab");
  }
  check(H5Dwrite(ds, H5T_NATIVE_DOUBLE, ms, fs, dxpl, buf), "H5Dwrite");
  H5Sclose(ms);
  H5Sclose(fs);
}

}  // namespace

void StridedShape::add_options(CLI::App& sub) {
  sub.add_option("--elements", elements, "doubles in the dataset");
  sub.add_option("--stride", stride, "elements between two written in one pass");
  sub.add_option("--layout", layout, "contiguous | chunked | columns");
}

uint64_t write_strided_elements(hid_t file, const StridedShape& shape, Share share, hid_t dxpl) {
  const hsize_t n = shape.elements, stride = shape.stride;
  const std::string& layout = shape.layout;
  hid_t dcpl = check_id(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate");
  if (layout == "columns") {
    const hsize_t cols = 1024, rows = n / cols;
    if (rows == 0) die("the columns layout needs at least 1024 elements");
    hid_t ds = create_dataset(file, "columns", {rows, cols});
    const hsize_t first = share.begin(rows), mine = share.end(rows) - first;
    std::vector<double> column(mine);
    for (hsize_t c = 0; c < cols; ++c) {
      std::fill(column.begin(), column.end(), double(c));
      write_strided_selection(ds, {first, c}, {1, cols}, {mine, 1}, column.data(), dxpl);
    }
    H5Dclose(ds);
    H5Pclose(dcpl);
    return rows * cols * sizeof(double);
  }
  if (layout == "chunked") {
    hsize_t chunk = std::min<hsize_t>(n, 64 << 10);
    check(H5Pset_chunk(dcpl, 1, &chunk), "H5Pset_chunk");
  } else if (layout != "contiguous") {
    die("unknown layout " + layout + " (contiguous, chunked or columns)");
  }
  if (n % stride != 0) die("the element count must be a multiple of the stride");
  hid_t ds = create_dataset(file, "elements", {n}, {}, dcpl);
  // This process's share of the groups of `stride` elements.
  const hsize_t groups = n / stride, first = share.begin(groups), mine = share.end(groups) - first;
  std::vector<double> values(mine);
  for (hsize_t p = 0; p < stride; ++p) {
    std::iota(values.begin(), values.end(), double(p * groups));
    write_strided_selection(ds, {first * stride + p}, {stride}, {mine}, values.data(), dxpl);
  }
  H5Dclose(ds);
  H5Pclose(dcpl);
  return n * sizeof(double);
}

// --- the busy writer ------------------------------------------------------------

std::string busy_step_name(uint64_t s) {
  char name[32];
  std::snprintf(name, sizeof name, "/step_%06llu", (unsigned long long)s);
  return name;
}

double busy_value(uint64_t step, int version, size_t k) { return double(step) * 1e4 + double(k) + version * 0.5; }

static bool write_int_attribute(hid_t obj, const char* name, int64_t v) {
  if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0) return false;
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, H5T_NATIVE_INT64, space, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = a >= 0 && H5Awrite(a, H5T_NATIVE_INT64, &v) >= 0;
  if (a >= 0) H5Aclose(a);
  H5Sclose(space);
  return ok;
}

static bool write_data(hid_t group, uint64_t step, int version) {
  hsize_t n = version == 0 ? 512 : 1024;
  std::vector<double> v(n);
  for (size_t k = 0; k < n; ++k) v[k] = busy_value(step, version, k);
  hid_t space = H5Screate_simple(1, &n, nullptr);
  hid_t d = H5Dcreate2(group, "data", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = d >= 0 && H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0 &&
            write_int_attribute(d, "version", version);
  if (d >= 0) H5Dclose(d);
  H5Sclose(space);
  return ok;
}

static bool append(hid_t series, uint64_t step) {
  hsize_t size = step + 1, start = step, one = 1;
  if (H5Dset_extent(series, &size) < 0) return false;
  hid_t fs = H5Dget_space(series), ms = H5Screate_simple(1, &one, nullptr);
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, nullptr, &one, nullptr);
  int64_t v = int64_t(step);
  bool ok = H5Dwrite(series, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, &v) >= 0;
  H5Sclose(ms);
  H5Sclose(fs);
  return ok;
}

bool busy_step(hid_t f, hid_t series, uint64_t s) {
  hid_t g = H5Gcreate2(f, busy_step_name(s).c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = g >= 0 && write_data(g, s, 0);
  if (g >= 0) H5Gclose(g);
  if (ok && s >= kBusyKept) ok = H5Ldelete(f, busy_step_name(s - kBusyKept).c_str(), H5P_DEFAULT) >= 0;
  if (ok && s >= kBusyReuseAge) {
    hid_t old = H5Gopen2(f, busy_step_name(s - kBusyReuseAge).c_str(), H5P_DEFAULT);
    ok = old >= 0 && H5Ldelete(old, "data", H5P_DEFAULT) >= 0 && write_data(old, s - kBusyReuseAge, 1);
    if (old >= 0) H5Gclose(old);
  }
  return ok && append(series, s) && write_int_attribute(f, "steps", int64_t(s + 1));
}


hid_t create_busy_series(hid_t file) {
  hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk = 64;
  hid_t space = H5Screate_simple(1, &zero, &unlimited), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &chunk);
  hid_t series = H5Dcreate2(file, "series", H5T_NATIVE_INT64, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Sclose(space);
  return series;
}

}  // namespace bench
