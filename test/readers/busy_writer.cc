// A writer that commits many times a second, and readers that verify every
// commit they open (test/readers/busy_writer_test.sh, docs/design.md §11).
//
//   busy_writer write FILE --seconds T
//       Creates FILE with HDF5's defaults (old-format groups, so that each
//       flush rewrites the root's symbol-table heap and B-tree) and, for T
//       seconds, commits steps: bench/workloads.h's busy_step, then
//       H5Fflush.  Prints {"steps": N, "seconds": T} at the end.
//   busy_writer verify FILE --seconds T [--within MS]
//       Opens FILE read-only in a loop for T seconds.  Each open reads
//       "steps" (n) and checks that the file is exactly commit n: /series
//       holds 0..n-1, the last 400 steps' groups are there and the one
//       before them is not, and every step's dataset has the size, version
//       and values that step n-1 left it with.  Prints a JSON tally: opens that
//       verified, that were cut off (their snapshot expired), that failed
//       otherwise, mismatches (not exactly one commit), regressions (a
//       commit older than one seen before), cut-offs whose open-to-close was
//       under MS (the writer's reader_wait, 5000 by default), and the
//       longest open-to-close of a verified open and of a cut-off one.
//   busy_writer hold FILE
//       Opens FILE read-only, says "ready", waits for a line on stdin, and
//       closes: a reader that holds its snapshot while the writer goes on.
// The driver is whatever HDF5_DRIVER says.
#include <hdf5.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "workloads.h"

namespace {

using namespace bench;

bool read_int_attribute(hid_t obj, const char* name, int64_t& v) {
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  bool ok = a >= 0 && H5Aread(a, H5T_NATIVE_INT64, &v) >= 0;
  if (a >= 0) H5Aclose(a);
  return ok;
}

int write(const std::string& file, double seconds) {
  hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) return std::fprintf(stderr, "FAIL: create %s\n", file.c_str()), 1;
  hid_t series = create_busy_series(f);
  auto start = Clock::now();
  auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  uint64_t s = 0;
  for (; Clock::now() < end; ++s)
    if (!busy_step(f, series, s) || H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
      return std::fprintf(stderr, "FAIL: step %llu\n", (unsigned long long)s), 1;
  double took = std::chrono::duration<double>(Clock::now() - start).count();
  H5Dclose(series);
  if (H5Fclose(f) < 0) return std::fprintf(stderr, "FAIL: close\n"), 1;
  std::printf("{\"steps\": %llu, \"seconds\": %.2f, \"steps_per_second\": %.1f}\n", (unsigned long long)s, took,
              double(s) / took);
  return 0;
}

// --- a reader -----------------------------------------------------------------

enum class Seen { kCommit, kCutOff, kFailed, kMismatch };

herr_t innermost(unsigned n, const H5E_error2_t* e, void* out) {
  if (n == 0) *static_cast<std::string*>(out) = e->desc ? e->desc : "";
  return 0;
}

// One open's verdict.  An HDF5 call that fails is judged at once, before
// the next call clears HDF5's error stack: a cut-off when its innermost
// error is the driver's expiry.  Bytes that read but are not the commit's
// are a mismatch.
struct Verdict {
  Seen seen = Seen::kCommit;
  bool call(bool succeeded) {
    if (succeeded || seen != Seen::kCommit) return succeeded && seen == Seen::kCommit;
    std::string why;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, &why);
    seen = why.find("is gone") != std::string::npos ? Seen::kCutOff : Seen::kFailed;
    if (seen == Seen::kFailed) std::fprintf(stderr, "failed: %s\n", why.c_str());
    return false;
  }
  bool expect(bool matches, const std::string& what) {
    if (!matches && seen == Seen::kCommit) {
      seen = Seen::kMismatch;
      std::fprintf(stderr, "MISMATCH: %s\n", what.c_str());
    }
    return matches && seen == Seen::kCommit;
  }
};

bool step_matches(Verdict& v, hid_t f, uint64_t i, uint64_t steps) {
  int version = i + kBusyReuseAge < steps ? 1 : 0;
  hid_t d = H5Dopen2(f, (busy_step_name(i) + "/data").c_str(), H5P_DEFAULT);
  if (!v.call(d >= 0)) return false;
  int64_t found = -1;
  hid_t space = H5Dget_space(d);
  hssize_t n = H5Sget_simple_extent_npoints(space);
  H5Sclose(space);
  std::vector<double> data(n > 0 ? size_t(n) : 0);
  std::string what = busy_step_name(i) + " at steps=" + std::to_string(steps);
  bool ok = v.call(read_int_attribute(d, "version", found)) &&
            v.expect(found == version && n == (version == 0 ? 512 : 1024), what + ": version or size") &&
            v.call(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0);
  for (size_t k = 0; ok && k < data.size(); ++k) ok = v.expect(data[k] == busy_value(i, version, k), what + ": values");
  H5Dclose(d);
  return ok;
}

bool series_matches(Verdict& v, hid_t f, uint64_t steps) {
  hid_t d = H5Dopen2(f, "/series", H5P_DEFAULT);
  if (!v.call(d >= 0)) return false;
  hid_t space = H5Dget_space(d);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space, &n, nullptr);
  H5Sclose(space);
  std::vector<int64_t> data(n);
  std::string what = "/series at steps=" + std::to_string(steps);
  bool ok = v.expect(n == steps, what + ": length") &&
            v.call(H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0);
  for (size_t k = 0; ok && k < data.size(); ++k) ok = v.expect(data[k] == int64_t(k), what + ": values");
  H5Dclose(d);
  return ok;
}

Seen verify_once(const std::string& file, int64_t& steps) {
  Verdict v;
  H5E_BEGIN_TRY {
    hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (v.call(f >= 0)) {
      bool whole = v.call(read_int_attribute(f, "steps", steps)) && series_matches(v, f, uint64_t(steps));
      int64_t first = std::max<int64_t>(0, steps - kBusyKept);
      if (whole && first > 0)
        whole = v.expect(H5Lexists(f, busy_step_name(uint64_t(first - 1)).c_str(), H5P_DEFAULT) == 0,
                         busy_step_name(uint64_t(first - 1)) + " outlived steps=" + std::to_string(steps));
      for (int64_t i = first; whole && i < steps; ++i) whole = step_matches(v, f, uint64_t(i), uint64_t(steps));
      v.call(H5Fclose(f) >= 0);
    }
  }
  H5E_END_TRY
  return v.seen;
}

int verify(const std::string& file, double seconds, double within_ms) {
  uint64_t opens = 0, verified = 0, cut_off = 0, short_cut_off = 0, failed = 0, mismatched = 0, regressed = 0;
  double longest_verified = 0, longest_cut_off = 0;
  int64_t last = 0;
  auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    int64_t steps = 0;
    auto opened = Clock::now();
    Seen seen = verify_once(file, steps);
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - opened).count();
    ++opens;
    if (seen == Seen::kCutOff) ++cut_off, short_cut_off += ms < within_ms, longest_cut_off = std::max(longest_cut_off, ms);
    if (seen == Seen::kFailed) ++failed;
    if (seen == Seen::kMismatch) ++mismatched;
    if (seen != Seen::kCommit) continue;
    if (steps < last) ++regressed, std::fprintf(stderr, "REGRESSED: %lld after %lld\n", (long long)steps, (long long)last);
    else ++verified, last = steps, longest_verified = std::max(longest_verified, ms);
  }
  std::printf("{\"opens\": %llu, \"verified\": %llu, \"cut_off\": %llu, \"short_cut_off\": %llu, \"failed\": %llu, \"mismatched\": %llu, "
              "\"regressed\": %llu, \"last_steps\": %lld, \"longest_verified_ms\": %.0f, \"longest_cut_off_ms\": %.0f}\n",
              (unsigned long long)opens, (unsigned long long)verified, (unsigned long long)cut_off,
              (unsigned long long)short_cut_off,
              (unsigned long long)failed, (unsigned long long)mismatched, (unsigned long long)regressed,
              (long long)last, longest_verified, longest_cut_off);
  return mismatched == 0 && regressed == 0 ? 0 : 1;
}

int hold(const std::string& file) {
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return 1;
  std::printf("ready\n");
  std::fflush(stdout);
  char line[16];
  bool got = std::fgets(line, sizeof line, stdin) != nullptr;
  return H5Fclose(f) >= 0 && got ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"a busy writer, and readers that verify each commit they open"};
  app.require_subcommand(1);
  std::string file;
  double seconds = 10, within_ms = 5000;
  auto* w = app.add_subcommand("write", "commit steps for --seconds");
  auto* r = app.add_subcommand("verify", "open, verify and close in a loop for --seconds");
  auto* h = app.add_subcommand("hold", "open read-only until a line comes on stdin");
  for (auto* sub : {w, r, h}) sub->add_option("FILE", file)->required();
  for (auto* sub : {w, r}) sub->add_option("--seconds", seconds);
  r->add_option("--within", within_ms, "count cut-offs of opens shorter than this, in ms");
  CLI11_PARSE(app, argc, argv);
  if (h->parsed()) return hold(file);
  return w->parsed() ? write(file, seconds) : verify(file, seconds, within_ms);
}
