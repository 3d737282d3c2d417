// A writer that makes every kind of change, and readers that check each open
// sees exactly one whole commit (test/readers/live_readers_test.sh).
//
//   live_readers write FILE --commits N [--seed S] [--report-fd FD]
//       Creates FILE, or reopens it (recovering it) if it holds commits, and
//       goes on from its last commit.  Each commit makes a few random
//       changes: new groups, datasets (contiguous and chunked, small and
//       large) and attributes; deletes, whose space HDF5 reuses; extends
//       and overwrites.  It then sets the root's attribute "commit" to its
//       number and "state_digest" to a digest of everything else in the
//       file, and calls H5Fflush.  Prints "committed N" (to FD) after each.
//   live_readers read FILE --seconds T [--json]
//       Opens FILE read-only in a loop for T seconds; at each open reads
//       "commit" and "state_digest", digests everything else, and compares.
//       Counts opens that verified, that failed (the file missing, no commit
//       yet, a snapshot expired while it was read), mismatches (a mixture of
//       commits) and regressions (a commit older than one this reader saw).
//       Exits 0 unless there was a mismatch or a regression.
// The driver is whatever HDF5_DRIVER says (sec2 when unset), so the same
// harness shows what readers see without h5journal.
#include <hdf5.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "hdf5_walk.h"

namespace {

constexpr char kDigestName[] = "state_digest";
constexpr char kCommitName[] = "commit";

// The file's contents but the digest attribute itself, digested.
std::optional<uint64_t> state_digest(hid_t f) {
  auto text = h5j::describe_file(f);
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  std::string line, kept;
  while (std::getline(in, line))
    if (line.rfind(std::string(".@") + kDigestName + " ", 0) != 0) kept += line + "\n";
  return uint64_t(std::hash<std::string>{}(kept));
}

bool write_u64_attribute(hid_t obj, const char* name, uint64_t value) {
  if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0) return false;
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, H5T_NATIVE_UINT64, space, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = a >= 0 && H5Awrite(a, H5T_NATIVE_UINT64, &value) >= 0;
  if (a >= 0) H5Aclose(a);
  H5Sclose(space);
  return ok;
}

std::optional<uint64_t> read_u64_attribute(hid_t obj, const char* name) {
  uint64_t value = 0;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  bool ok = a >= 0 && H5Aread(a, H5T_NATIVE_UINT64, &value) >= 0;
  if (a >= 0) H5Aclose(a);
  if (!ok) return std::nullopt;
  return value;
}

// --- the writer --------------------------------------------------------------

struct Changes {
  hid_t f;
  uint64_t commit;
  std::mt19937_64 rng;

  std::string name(const char* kind, uint64_t n) { return std::string("/") + kind + std::to_string(n % 24); }

  bool dataset(hsize_t elems, bool chunked) {
    std::string path = name("d", rng());
    if (H5Lexists(f, path.c_str(), H5P_DEFAULT) > 0) return H5Ldelete(f, path.c_str(), H5P_DEFAULT) >= 0;
    hsize_t max = chunked ? H5S_UNLIMITED : elems;
    hid_t space = H5Screate_simple(1, &elems, &max);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t chunk = 4096;
    if (chunked) H5Pset_chunk(dcpl, 1, &chunk);
    hid_t d = H5Dcreate2(f, path.c_str(), H5T_NATIVE_INT64, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    std::vector<int64_t> v(elems, int64_t(commit * 1000 + rng() % 1000));
    bool ok = d >= 0 && H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0;
    ok = write_u64_attribute(d, "made_at", commit) && ok;
    if (d >= 0) H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(space);
    return ok;
  }

  // Extends a chunked dataset, or overwrites part of any dataset, if one exists.
  bool extend_or_overwrite() {
    std::string path = name("d", rng());
    if (H5Lexists(f, path.c_str(), H5P_DEFAULT) <= 0) return true;
    hid_t d = H5Dopen2(f, path.c_str(), H5P_DEFAULT);
    hid_t dcpl = H5Dget_create_plist(d);
    bool chunked = H5Pget_layout(dcpl) == H5D_CHUNKED;
    H5Pclose(dcpl);
    hid_t space = H5Dget_space(d);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(space, &n, nullptr);
    H5Sclose(space);
    hsize_t start = 0, count = std::min<hsize_t>(n, 1 + rng() % 20000);
    if (chunked) {
      start = n;
      hsize_t grown = n + count;
      if (H5Dset_extent(d, &grown) < 0) return H5Dclose(d), false;
    } else {
      start = rng() % (n - count + 1);
    }
    hid_t file_space = H5Dget_space(d);
    H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, nullptr, &count, nullptr);
    hid_t mem = H5Screate_simple(1, &count, nullptr);
    std::vector<int64_t> v(count, -int64_t(commit));
    bool ok = H5Dwrite(d, H5T_NATIVE_INT64, mem, file_space, H5P_DEFAULT, v.data()) >= 0;
    H5Sclose(mem);
    H5Sclose(file_space);
    H5Dclose(d);
    return ok;
  }

  bool group() {
    std::string path = name("g", rng());
    if (H5Lexists(f, path.c_str(), H5P_DEFAULT) > 0) return H5Ldelete(f, path.c_str(), H5P_DEFAULT) >= 0;
    hid_t g = H5Gcreate2(f, path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    bool ok = g >= 0 && write_u64_attribute(g, "made_at", commit);
    for (int i = 0; ok && i < int(rng() % 4); ++i) {
      std::string sub = "s" + std::to_string(i);
      hid_t s = H5Gcreate2(g, sub.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      ok = s >= 0 && H5Gclose(s) >= 0;
    }
    if (g >= 0) H5Gclose(g);
    return ok;
  }

  bool one() {
    switch (rng() % 6) {
      case 0: return dataset(1 + rng() % 2000, false);              // small: journaled
      case 1: return dataset(20000 + rng() % 60000, false);         // 160 KiB or more: in place
      case 2: return dataset(1 + rng() % 30000, true);
      case 3: return group();
      case 4: return write_u64_attribute(f, ("a" + std::to_string(rng() % 8)).c_str(), rng());
      default: return extend_or_overwrite();
    }
  }
};

int write(const std::string& file, uint64_t commits, uint64_t seed, int report_fd) {
  hid_t f = -1;
  uint64_t first = 1;
  // A restarted writer reopens, recovering its predecessor's commits: a
  // create then would hide a refused open (and truncate what it committed).
  if (std::filesystem::exists(file)) {
    f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    auto last = f >= 0 ? read_u64_attribute(f, kCommitName) : std::nullopt;
    if (last) first = *last + 1;
  } else {
    f = H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
  }
  if (f < 0) return std::fprintf(stderr, "FAIL: open %s\n", file.c_str()), 1;
  Changes changes{f, 0, std::mt19937_64(seed)};
  for (uint64_t k = first; k < first + commits; ++k) {
    changes.commit = k;
    for (int i = 0, n = 1 + int(changes.rng() % 5); i < n; ++i)
      if (!changes.one()) return std::fprintf(stderr, "FAIL: a change at commit %llu\n", (unsigned long long)k), 1;
    auto digest = write_u64_attribute(f, kCommitName, k) ? state_digest(f) : std::nullopt;
    if (!digest || !write_u64_attribute(f, kDigestName, *digest) || H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
      return std::fprintf(stderr, "FAIL: commit %llu\n", (unsigned long long)k), 1;
    dprintf(report_fd, "committed %llu\n", (unsigned long long)k);
  }
  return H5Fclose(f) < 0;
}

// --- a reader -----------------------------------------------------------------

struct Tally {
  uint64_t verified = 0, failed = 0, mismatched = 0, regressed = 0, last_commit = 0;
  std::map<std::string, uint64_t> why_failed;  // the innermost error's text, without_particulars
};

herr_t innermost(unsigned n, const H5E_error2_t* e, void* out) {
  if (n == 0) *static_cast<std::string*>(out) = e->desc ? e->desc : "";
  return 0;
}

// `text` with numbers as N, quoted names as '' (offsets, PIDs, the garbage a
// reader without the driver takes for a name) and each absolute path as its
// last component, printable, cut short.  The paths go so that the cut keeps
// the reason: the driver's messages start with the file's path, which a
// CI checkout makes long.
std::string without_particulars(const std::string& text) {
  std::string out;
  bool quoted = false;
  size_t path_start = std::string::npos;  // in `out`, while inside a path
  for (char c : text) {
    bool ends_path = std::isspace(static_cast<unsigned char>(c)) || c == ':' || c == ',' || c == ')' || c == ';';
    if (path_start != std::string::npos && ends_path) path_start = std::string::npos;
    if (path_start == std::string::npos && c == '/' && !quoted && (out.empty() || out.back() == ' ' || out.back() == '(')) {
      path_start = out.size();
      continue;
    }
    if (path_start != std::string::npos && c == '/') {
      out.resize(path_start);  // keep only the component after the last '/'
      continue;
    }
    if (c == '\'') {
      quoted = !quoted;
      out += c;
    } else if (quoted) {
      continue;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      if (out.empty() || out.back() != 'N') out += 'N';
    } else {
      out += std::isprint(static_cast<unsigned char>(c)) && c != '"' ? c : '?';
    }
  }
  return out.substr(0, 100);
}

// What the failure just met was, without its particulars.
void count_failure(Tally& t) {
  ++t.failed;
  std::string why;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, &why);
  H5Eclear2(H5E_DEFAULT);
  ++t.why_failed[without_particulars(why)];
}

// One open: what it saw, added to `t`.
void read_once(const std::string& file, Tally& t) {
  hid_t f = -1;
  H5E_BEGIN_TRY {
    f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
      count_failure(t);
    } else {
      auto commit = read_u64_attribute(f, kCommitName);
      auto recorded = read_u64_attribute(f, kDigestName);
      auto digest = state_digest(f);
      if (!commit || !recorded || !digest) {
        count_failure(t);  // an expired snapshot, or a file with no commit yet
      } else if (*digest != *recorded) {
        ++t.mismatched;
        std::fprintf(stderr, "MISMATCH: commit %llu's digest is not its contents'\n", (unsigned long long)*commit);
      } else if (*commit < t.last_commit) {
        ++t.regressed;
        std::fprintf(stderr, "REGRESSED: commit %llu after %llu\n", (unsigned long long)*commit,
                     (unsigned long long)t.last_commit);
      } else {
        ++t.verified;
        t.last_commit = *commit;
      }
      H5Fclose(f);
    }
  }
  H5E_END_TRY
}

int read(const std::string& file, double seconds) {
  Tally t;
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) read_once(file, t);
  std::string why;
  for (const auto& [text, n] : t.why_failed) why += (why.empty() ? "" : ", ") + ("\"" + text + "\": " + std::to_string(n));
  std::printf("{\"verified\": %llu, \"failed\": %llu, \"mismatched\": %llu, \"regressed\": %llu, \"last_commit\": %llu, "
              "\"why_failed\": {%s}}\n",
              (unsigned long long)t.verified, (unsigned long long)t.failed, (unsigned long long)t.mismatched,
              (unsigned long long)t.regressed, (unsigned long long)t.last_commit, why.c_str());
  return t.mismatched == 0 && t.regressed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"live readers beside a writer"};
  app.require_subcommand(1);
  std::string file;
  uint64_t commits = 100, seed = 1;
  int report_fd = 1;
  double seconds = 10;
  auto* w = app.add_subcommand("write", "commit every kind of change, with a digest of each commit");
  w->add_option("FILE", file)->required();
  w->add_option("--commits", commits);
  w->add_option("--seed", seed);
  w->add_option("--report-fd", report_fd);
  auto* r = app.add_subcommand("read", "open, verify and close in a loop");
  r->add_option("FILE", file)->required();
  r->add_option("--seconds", seconds);
  CLI11_PARSE(app, argc, argv);
  return w->parsed() ? write(file, commits, seed, report_fd) : read(file, seconds);
}
