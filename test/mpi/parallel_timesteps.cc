// Timesteps written by every rank of an MPI job through the journal driver,
// committed with H5Fflush; the workload of test/mpi/mpi_kill_test.sh, which
// kills the job and checks the recovered file against a reference.
//
//   parallel_timesteps write FILE --steps N [--raw inplace|log] [--driver journal|mpio]
//       [--durable-within MS] [--wait-every N] [--append-only]
//       under mpiexec.  Each rank writes FILE.pid.<rank> (its pid) once MPI
//       is up, so that a harness can kill it; rank 0 appends "start k" to
//       FILE.steps (fsynced) before the commit of step k and "done k" after
//       it returns, and "closed" after H5Fclose.
//       With --resume it opens FILE instead (recovering it) and goes on
//       from the step after its last_step, as a restarted job does.
//   parallel_timesteps reopen FILE
//       under mpiexec: the job's open of FILE for writing, every rank
//       together through the driver, and its close: how a restarted job
//       recovers a crashed file (rank 0 replays the journal at open).
//   parallel_timesteps reference FILE --ranks R --step K [--append-only]
//       serially, with sec2 and no MPI: the file exactly as it is after the
//       commit of step K of an R-rank job.  One process plays every rank.
//   parallel_timesteps watch FILE --ranks R [--append-only]
//       a live reader beside the job (docs/design.md §11), serial, no MPI:
//       opens FILE read-only through the driver in a loop until the step
//       log says "closed", and compares each open's contents with the
//       reference of the step its last_step names.  Prints a JSON tally;
//       fails on a mixture or on a step older than one seen before.
//
// Contents are a pure function of (step, rank count).  Rank r's values are
// value(tag, k, r, i): which dataset (tag), the step that wrote them, the
// rank and the element.  Step 0 creates everything; each step k >= 1:
//   /field       R*kRows x kCols, contiguous: each rank overwrites its rows
//                (independent I/O), except when skips(k, r); attribute
//                last_writes[r] says which step rank r's rows hold
//   /collective  R*kRows x kCols, contiguous: every rank its rows, collective
//   /series      1-D chunked, extendible: grown by every rank's share, some
//                shares empty, each rank its piece (independent)
//   /steps/step_k  new dataset of the ranks' uneven shares (some empty), with
//                attributes step and writers; each rank also overwrites the
//                first half of its share of step_(k-1): committed data
//   / attribute last_step = k
// With --append-only (write and reference alike) a step only appends: no
// /field or /collective rows rewritten, no overwrite of step_(k-1).  Every
// byte a step writes is then new space, as in a time series, so under
// durable=100ms its commit is left to every rank's background sync.
#include <fcntl.h>
#include <hdf5.h>
#include <mpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "h5journal.h"
#include "hdf5_walk.h"

namespace {

constexpr hsize_t kRows = 8, kCols = 128;

int my_rank = 0;

void must(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "parallel_timesteps (rank %d): %s failed\n", my_rank, what.c_str());
  std::exit(2);  // under mpiexec, hydra then ends the other ranks
}

// The ranks this process writes for: its own in the MPI job, all of them
// for the reference.  Metadata calls are made once either way (collective
// in the job, every rank passing the same values).
struct Writer {
  hid_t file;
  int nranks;
  std::vector<int> ranks;
  hid_t independent, collective;  // transfer property lists (H5P_DEFAULT serially)
  bool append_only = false;
};

long long value(int tag, int k, int r, hsize_t i) { return ((tag * 10000LL + k) * 100 + r) * 100000 + (long long)i; }

bool skips(int k, int r) { return k > 0 && (k + r) % 3 == 0; }
hsize_t series_share(int k, int r) { return k == 0 ? 0 : hsize_t((k + 2 * r) % 4) * 37; }
hsize_t step_share(int k, int r) { return hsize_t((k * 5 + r * 3) % 4) * 50; }

// The step whose values rank r's rows of /field hold after step k.
int last_field_write(int k, int r) {
  while (skips(k, r)) --k;
  return k;
}

hsize_t series_length(int k, int nranks) {
  hsize_t n = 0;
  for (int j = 0; j <= k; ++j)
    for (int r = 0; r < nranks; ++r) n += series_share(j, r);
  return n;
}

// Where rank r's piece of a 1-D dataset of per-rank shares starts.
template <typename Share>
hsize_t offset_of(int r, Share share) {
  hsize_t off = 0;
  for (int q = 0; q < r; ++q) off += share(q);
  return off;
}

std::string step_name(int k) { return "/steps/step_" + std::to_string(k); }

// Writes n int64 values value(tag, k, r, 0..n) at `start` (count `count`) of ds.
void write_block(hid_t ds, hid_t dxpl, int rank_dims, const hsize_t* start, const hsize_t* count, int tag, int k,
                 int r) {
  hsize_t n = 1;
  for (int d = 0; d < rank_dims; ++d) n *= count[d];
  std::vector<long long> v(n);
  for (hsize_t i = 0; i < n; ++i) v[i] = value(tag, k, r, i);
  hid_t fs = H5Dget_space(ds);
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr);
  hid_t ms = H5Screate_simple(rank_dims, count, nullptr);
  must(H5Dwrite(ds, H5T_NATIVE_LLONG, ms, fs, dxpl, v.data()) >= 0, "H5Dwrite tag " + std::to_string(tag));
  H5Sclose(ms);
  H5Sclose(fs);
}

void write_rows(const Writer& w, const char* name, hid_t dxpl, int tag, int k, int r) {
  hid_t ds = H5Dopen2(w.file, name, H5P_DEFAULT);
  must(ds >= 0, name);
  hsize_t start[2] = {hsize_t(r) * kRows, 0}, count[2] = {kRows, kCols};
  write_block(ds, dxpl, 2, start, count, tag, k, r);
  H5Dclose(ds);
}

void write_piece(const Writer& w, const std::string& name, hsize_t start, hsize_t count, int tag, int k, int r) {
  if (count == 0) return;  // independent I/O: a rank with nothing to write makes no call
  hid_t ds = H5Dopen2(w.file, name.c_str(), H5P_DEFAULT);
  must(ds >= 0, name);
  write_block(ds, w.independent, 1, &start, &count, tag, k, r);
  H5Dclose(ds);
}

void set_attr(hid_t obj, const char* name, const std::vector<int>& v) {
  hsize_t n = v.size();
  hid_t space = H5Screate_simple(1, &n, nullptr);
  hid_t a = H5Aexists(obj, name) > 0 ? H5Aopen(obj, name, H5P_DEFAULT)
                                      : H5Acreate2(obj, name, H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT);
  must(a >= 0 && H5Awrite(a, H5T_NATIVE_INT, v.data()) >= 0, name);
  H5Aclose(a);
  H5Sclose(space);
}

void create_dataset(hid_t f, const std::string& name, int dims, const hsize_t* size, const hsize_t* max, hid_t dcpl) {
  hid_t space = H5Screate_simple(dims, size, max);
  hid_t ds = H5Dcreate2(f, name.c_str(), H5T_STD_I64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  must(ds >= 0, "create " + name);
  H5Dclose(ds);
  H5Sclose(space);
}

void create_layout(const Writer& w) {
  hsize_t rows[2] = {hsize_t(w.nranks) * kRows, kCols};
  create_dataset(w.file, "/field", 2, rows, nullptr, H5P_DEFAULT);
  create_dataset(w.file, "/collective", 2, rows, nullptr, H5P_DEFAULT);
  hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk = 256;
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &chunk);
  create_dataset(w.file, "/series", 1, &zero, &unlimited, dcpl);
  H5Pclose(dcpl);
  H5Gclose(H5Gcreate2(w.file, "/steps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
}

void update_field(const Writer& w, int k) {
  for (int r : w.ranks)
    if (!skips(k, r)) write_rows(w, "/field", w.independent, 1, k, r);
  std::vector<int> last(size_t(w.nranks));
  for (int r = 0; r < w.nranks; ++r) last[size_t(r)] = last_field_write(k, r);
  hid_t ds = H5Dopen2(w.file, "/field", H5P_DEFAULT);
  set_attr(ds, "last_writes", last);
  H5Dclose(ds);
}

void grow_series(const Writer& w, int k) {
  hsize_t before = series_length(k - 1, w.nranks), after = series_length(k, w.nranks);
  hid_t ds = H5Dopen2(w.file, "/series", H5P_DEFAULT);
  must(ds >= 0 && H5Dset_extent(ds, &after) >= 0, "extend /series");
  H5Dclose(ds);
  for (int r : w.ranks)
    write_piece(w, "/series", before + offset_of(r, [k](int q) { return series_share(k, q); }),
                series_share(k, r), 3, k, r);
}

void add_step_dataset(const Writer& w, int k) {
  auto share = [k](int q) { return step_share(k, q); };
  hsize_t total = offset_of(w.nranks, share);
  create_dataset(w.file, step_name(k), 1, &total, nullptr, H5P_DEFAULT);
  for (int r : w.ranks) write_piece(w, step_name(k), offset_of(r, share), share(r), 4, k, r);
  int writers = 0;
  for (int r = 0; r < w.nranks; ++r) writers += share(r) > 0;
  hid_t ds = H5Dopen2(w.file, step_name(k).c_str(), H5P_DEFAULT);
  set_attr(ds, "step", {k});
  set_attr(ds, "writers", {writers});
  H5Dclose(ds);
}

// Overwrites the first half of each rank's share of step k-1's dataset.
void overwrite_previous_step(const Writer& w, int k) {
  auto share = [k](int q) { return step_share(k - 1, q); };
  for (int r : w.ranks) write_piece(w, step_name(k - 1), offset_of(r, share), share(r) / 2, 5, k, r);
}

void write_step(const Writer& w, int k) {
  if (k == 0) create_layout(w);
  if (!w.append_only || k == 0) {
    update_field(w, k);
    for (int r : w.ranks) write_rows(w, "/collective", w.collective, 2, k, r);
  }
  if (k > 0) grow_series(w, k);
  add_step_dataset(w, k);
  if (k > 0 && !w.append_only) overwrite_previous_step(w, k);
  set_attr(w.file, "last_step", {k});
}

// --- the MPI job ---------------------------------------------------------------

// Appends a line to the step log and makes it durable before going on.
void log_line(const std::string& path, const std::string& line) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  std::string text = line + "\n";
  must(fd >= 0 && write(fd, text.data(), text.size()) == ssize_t(text.size()) && fsync(fd) == 0, "step log " + path);
  close(fd);
}

void write_pid_file(const std::string& file) {
  std::string path = file + ".pid." + std::to_string(my_rank), tmp = path + ".tmp";
  FILE* out = std::fopen(tmp.c_str(), "w");
  must(out && std::fprintf(out, "%d\n", int(getpid())) > 0 && std::fclose(out) == 0, "pid file");
  must(std::rename(tmp.c_str(), path.c_str()) == 0, "pid file");  // whole or absent for the harness
}

// How the job writes.
struct JobOptions {
  std::string driver = "journal", raw = "inplace";
  unsigned long long checkpoint_bytes = 256 << 10;
  unsigned durable_within_ms = 0;  // durable=MSms: commits made durable in the background
  int wait_every = 0;              // H5Fwait_journal_durable after every N-th step (0: never)
  int step_pause_ms = 0;
  bool resume = false;
  bool append_only = false;
};

hid_t job_fapl(const JobOptions& o) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (o.driver == "mpio") {
    must(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) >= 0, "H5Pset_fapl_mpio");
    return fapl;
  }
  H5FD_journal_fapl_t c;
  H5Pget_fapl_journal_defaults(&c);
  c.raw = o.raw == "log" ? H5FD_JOURNAL_RAW_LOG : H5FD_JOURNAL_RAW_INPLACE;
  c.checkpoint_bytes = o.checkpoint_bytes;  // small, so that kills also land in checkpoints
  c.durable_within_ms = o.durable_within_ms;
  must(H5Pset_fapl_journal(fapl, &c) >= 0, "H5Pset_fapl_journal");
  must(H5Pset_mpi_params(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) >= 0, "H5Pset_mpi_params");
  return fapl;
}

// The step a file's root attribute last_step names.
std::optional<int> last_step(hid_t file) {
  int k = -1;
  hid_t a = H5Aopen(file, "last_step", H5P_DEFAULT);
  bool ok = a >= 0 && H5Aread(a, H5T_NATIVE_INT, &k) >= 0;
  if (a >= 0) H5Aclose(a);
  return ok ? std::optional<int>(k) : std::nullopt;
}

// After H5Fwait_journal_durable every commit is durable, as rank 0
// counts the job's (H5Fget_journal_stats).
void wait_durable(hid_t file) {
  must(H5Fwait_journal_durable(file) >= 0, "H5Fwait_journal_durable");
  H5FD_journal_stats_t stats;
  must(H5Fget_journal_stats(file, &stats) >= 0, "H5Fget_journal_stats");
  if (my_rank == 0) must(stats.durable_commits == stats.commits, "every commit durable after the wait");
}

int run_job(const std::string& file, int steps, const JobOptions& o) {
  const bool resume = o.resume;
  int nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  write_pid_file(file);
  std::string log = file + ".steps";
  hid_t fapl = job_fapl(o);
  hid_t f = resume ? H5Fopen(file.c_str(), H5F_ACC_RDWR, fapl) : H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  must(f >= 0, resume ? "H5Fopen" : "H5Fcreate");
  Writer w{f, nranks, {my_rank}, H5Pcreate(H5P_DATASET_XFER), H5Pcreate(H5P_DATASET_XFER), o.append_only};
  H5Pset_dxpl_mpio(w.independent, H5FD_MPIO_INDEPENDENT);
  H5Pset_dxpl_mpio(w.collective, H5FD_MPIO_COLLECTIVE);
  int first = 0;
  if (resume) {
    auto done = last_step(w.file);
    must(done.has_value(), "last_step of the file resumed");
    first = *done + 1;
    if (my_rank == 0) log_line(log, "resumed " + std::to_string(*done));
  }
  for (int k = first; k <= steps; ++k) {
    write_step(w, k);
    if (my_rank == 0) log_line(log, "start " + std::to_string(k));
    must(H5Fflush(w.file, H5F_SCOPE_GLOBAL) >= 0, "H5Fflush");
    if (my_rank == 0) log_line(log, "done " + std::to_string(k));
    if (o.wait_every > 0 && k % o.wait_every == 0) wait_durable(w.file);
    if (o.step_pause_ms > 0) usleep(useconds_t(o.step_pause_ms) * 1000);
  }
  H5Pclose(w.independent);
  H5Pclose(w.collective);
  must(H5Fclose(w.file) >= 0, "H5Fclose");
  if (my_rank == 0) log_line(log, "closed");
  H5Pclose(fapl);
  return 0;
}

int reopen(const std::string& file) {
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  hid_t fapl = job_fapl(JobOptions{});
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, fapl);
  must(f >= 0, "H5Fopen " + file);
  must(H5Fclose(f) >= 0, "H5Fclose " + file);
  H5Pclose(fapl);
  return 0;
}

// --- the reference ---------------------------------------------------------------

int write_reference(const std::string& file, int nranks, int step, bool append_only) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_sec2(fapl);
  Writer w{H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), nranks, {}, H5P_DEFAULT, H5P_DEFAULT,
           append_only};
  must(w.file >= 0, "H5Fcreate " + file);
  for (int r = 0; r < nranks; ++r) w.ranks.push_back(r);
  for (int k = 0; k <= step; ++k) write_step(w, k);
  must(H5Fclose(w.file) >= 0, "H5Fclose");
  H5Pclose(fapl);
  return 0;
}

// --- a live reader ---------------------------------------------------------------

struct Tally {
  int verified = 0, failed = 0, mismatched = 0, regressed = 0, last_step = -1;
  std::map<std::string, int> why_failed;  // the innermost error, cut at its first digit
};

herr_t innermost(unsigned n, const H5E_error2_t* e, void* out) {
  if (n == 0) *static_cast<std::string*>(out) = std::string(e->desc ? e->desc : "").substr(0, 60);
  return 0;
}

void count_failure(Tally& t, const std::string& file) {
  std::string why;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, &why);
  H5Eclear2(H5E_DEFAULT);
  for (size_t at; (at = why.find(file)) != std::string::npos;) why.replace(at, file.size(), "F");
  ++t.failed;
  ++t.why_failed[why.substr(0, why.find_first_of("0123456789'\""))];
}

// The contents after step k's commit, from a reference written for it.
std::string reference_contents(const std::string& file, int nranks, int k, bool append_only) {
  std::string path = file + ".reference";
  write_reference(path, nranks, k, append_only);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_sec2(fapl);
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl);
  must(f >= 0, "open " + path);
  auto contents = h5j::describe_file(f);
  must(contents.has_value(), "read " + path);
  H5Fclose(f);
  H5Pclose(fapl);
  return *contents;
}

bool job_closed(const std::string& log) {
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line))
    if (line == "closed") return true;
  return false;
}

int watch(const std::string& file, int nranks, bool append_only) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5FD_journal_fapl_t c;
  H5Pget_fapl_journal_defaults(&c);
  must(H5Pset_fapl_journal(fapl, &c) >= 0, "H5Pset_fapl_journal");
  std::map<int, std::string> references;
  Tally t;
  while (!job_closed(file + ".steps")) {
    hid_t f = -1;
    std::optional<int> k;
    std::optional<std::string> seen;
    H5E_BEGIN_TRY {
      f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl);
      if (f >= 0) {
        k = last_step(f);
        seen = k ? h5j::describe_file(f) : std::nullopt;
        H5Fclose(f);
      }
    }
    H5E_END_TRY
    if (!seen) {
      count_failure(t, file);  // before the first commit, or an expired snapshot
      usleep(2000);
      continue;
    }
    if (!references.count(*k)) references[*k] = reference_contents(file, nranks, *k, append_only);
    if (*seen != references[*k]) {
      ++t.mismatched;
      std::fprintf(stderr, "MISMATCH: the file says step %d, and its contents are not step %d's\n", *k, *k);
    } else if (*k < t.last_step) {
      ++t.regressed;
      std::fprintf(stderr, "REGRESSED: step %d after %d\n", *k, t.last_step);
    } else {
      ++t.verified;
      t.last_step = *k;
    }
  }
  H5Pclose(fapl);
  std::string why;
  for (const auto& [text, n] : t.why_failed) why += (why.empty() ? "" : ", ") + ("\"" + text + "\": " + std::to_string(n));
  std::printf("{\"verified\": %d, \"failed\": %d, \"mismatched\": %d, \"regressed\": %d, \"last_step\": %d, "
              "\"steps_seen\": %zu, \"why_failed\": {%s}}\n",
              t.verified, t.failed, t.mismatched, t.regressed, t.last_step, references.size(), why.c_str());
  return t.mismatched == 0 && t.regressed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Parallel HDF5 timesteps through the journal driver, or the reference file of one step."};
  app.require_subcommand(1);
  std::string file;
  int steps = 40, nranks = 2, step = 0;
  JobOptions o;
  auto* job = app.add_subcommand("write", "write steps 0..N under mpiexec, committing each");
  job->add_option("file", file)->required();
  job->add_option("--steps", steps, "last step");
  job->add_option("--driver", o.driver, "journal | mpio")->check(CLI::IsMember({"journal", "mpio"}));
  job->add_option("--raw", o.raw, "inplace | log")->check(CLI::IsMember({"inplace", "log"}));
  job->add_option("--checkpoint-bytes", o.checkpoint_bytes, "journal size that triggers a checkpoint");
  job->add_option("--durable-within", o.durable_within_ms, "durable=MSms: commits made durable within MS");
  job->add_option("--wait-every", o.wait_every, "H5Fwait_journal_durable after every N-th step");
  auto* reopener = app.add_subcommand("reopen", "open FILE for writing under mpiexec, and close it (recovers it)");
  reopener->add_option("file", file)->required();
  auto* ref = app.add_subcommand("reference", "write the state after step K's commit, serially with sec2");
  ref->add_option("file", file)->required();
  ref->add_option("--ranks", nranks, "ranks of the job")->required();
  ref->add_option("--step", step, "the step")->required();
  auto* watcher = app.add_subcommand("watch", "read the job's file live, serially, until the job closes it");
  watcher->add_option("file", file)->required();
  watcher->add_option("--ranks", nranks, "ranks of the job")->required();
  job->add_option("--step-pause-ms", o.step_pause_ms, "a pause after each step's commit");
  job->add_flag("--resume", o.resume, "open FILE, recovering it, and go on from the step after its last_step");
  job->add_flag("--append-only", o.append_only, "steps only append (above)");
  ref->add_flag("--append-only", o.append_only, "the reference of an --append-only job");
  watcher->add_flag("--append-only", o.append_only, "the job's steps only append");
  CLI11_PARSE(app, argc, argv);
  if (ref->parsed()) return write_reference(file, nranks, step, o.append_only);
  if (watcher->parsed()) return watch(file, nranks, o.append_only);
  MPI_Init(&argc, &argv);
  int rc = reopener->parsed() ? reopen(file) : run_job(file, steps, o);
  MPI_Finalize();
  return rc;
}
