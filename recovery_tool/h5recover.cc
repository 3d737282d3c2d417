// h5recover: after a crash, brings HDF5 files written through h5journal back
// to their last commit, as standard HDF5 files.
//
// Each FILE (or, with --recursive, each file under each DIR that recovery
// could concern: file_set.h) is recovered on its own (recover_one.h), a few
// at a time.  One line per file says what became of it; over more than one
// file a summary follows, and the exit status is the worst file's
// (exit_status.h).
#include <hdf5.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include "config.h"
#include "exit_status.h"
#include "file_set.h"
#include "recover_one.h"

using namespace h5j;
using json = nlohmann::json;

namespace {

struct Options {
  std::vector<std::string> files;
  RecoverOptions recover;
  bool recursive = false, as_json = false, verbose = false, quiet = false, list = false;
  unsigned jobs = 0;  // 0: one per core
};

struct Timed {
  Outcome outcome;
  double seconds = 0;
};

Timed timed_recovery(const std::string& file, const RecoverOptions& o) {
  auto t0 = std::chrono::steady_clock::now();
  Outcome out = recover_one(file, o);
  return {std::move(out), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}

// Recovers every file, `jobs` at a time; the results in the files' order.
std::vector<Timed> recover_all(const std::vector<std::string>& files, const RecoverOptions& o, unsigned jobs) {
  std::vector<Timed> results(files.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < files.size();) results[i] = timed_recovery(files[i], o);
  };
  std::vector<std::jthread> workers;
  for (unsigned w = 1; w < std::min<size_t>(jobs, files.size()); ++w) workers.emplace_back(work);
  work();
  return results;
}

json file_report(const std::string& file, const Options& o, const Timed& t) {
  json r = t.outcome.report;
  r["file"] = file;
  r["mode"] = o.recover.mode;
  r["check"] = o.recover.check;
  r["outcome"] = t.outcome.what;
  r["exit_status"] = t.outcome.status;
  r["message"] = t.outcome.message;
  r["seconds"] = t.seconds;
  return r;
}

void print_line(const Options& o, const Timed& t) {
  const Outcome& out = t.outcome;
  bool failure = severity(out.status) > severity(kExitNeverCommitted);
  if (failure || out.status == kExitNeverCommitted) std::fprintf(stderr, "h5recover: %s\n", out.message.c_str());
  else if (!o.quiet) std::printf("h5recover: %s (%.2f s)\n", out.message.c_str(), t.seconds);
  if (!failure && o.verbose && !out.report.empty()) std::printf("%s\n", out.report.dump(2).c_str());
  if (out.report.contains("sha256") && !o.quiet) std::printf("sha256 %s\n", out.report["sha256"].get<std::string>().c_str());
}

// "50 files: 30 recovered, 17 clean, 1 never committed, 2 failed"
std::string summary_line(const std::vector<Timed>& results, const std::map<std::string, int>& counts) {
  std::string line = std::to_string(results.size()) + " file(s):";
  const char* sep = " ";
  for (const char* what : {"recovered", "clean", "recovery needed", "discarded", "never committed", "failed"})
    if (auto it = counts.find(what); it != counts.end()) {
      line += sep + std::to_string(it->second) + " " + what;
      sep = ", ";
    }
  return line;
}

int report(const Options& o, const std::vector<std::string>& files, const std::vector<Timed>& results) {
  int worst = kExitOk;
  std::map<std::string, int> counts;
  for (const Timed& t : results) {
    if (severity(t.outcome.status) > severity(worst)) worst = t.outcome.status;
    ++counts[t.outcome.what];
  }
  bool many = o.recursive || files.size() != 1;
  if (o.as_json) {
    json doc;
    if (!many) {
      doc = file_report(files[0], o, results[0]);
    } else {
      doc["files"] = json::array();
      for (size_t i = 0; i < files.size(); ++i) doc["files"].push_back(file_report(files[i], o, results[i]));
      doc["summary"] = counts;
      doc["exit_status"] = worst;
    }
    std::printf("%s\n", doc.dump(2).c_str());
    return worst;
  }
  for (const Timed& t : results) print_line(o, t);
  if (many && !o.quiet) std::printf("h5recover: %s (exit status %d)\n", summary_line(results, counts).c_str(), worst);
  return worst;
}

// The files to look at: each FILE, or with --recursive everything under each DIR.
Result<std::vector<std::string>> files_of(const Options& o) {
  if (!o.recursive) return o.files;
  std::vector<std::string> all;
  for (const std::string& dir : o.files) {
    auto found = files_under(dir, [&](const std::string& file) { return journal_of(file, o.recover); });
    if (!found) return found.status();
    all.insert(all.end(), found->begin(), found->end());
  }
  return all;
}

int list(const Options& o) {
  int worst = kExitOk;
  for (const std::string& file : o.files) {
    Outcome listed = list_journals(file, o.recover);
    if (!listed.message.empty()) std::fprintf(stderr, "h5recover: %s\n", listed.message.c_str());
    if (severity(listed.status) > severity(worst)) worst = listed.status;
  }
  return worst;
}

void define_options(CLI::App& app, Options& o) {
  RecoverOptions& r = o.recover;
  app.add_option("FILE", o.files, "the HDF5 files (with --recursive: directories)")->required();
  app.add_flag("-r,--recursive", o.recursive,
               "recover every HDF5 file, file in log form, or journaled file under each DIR given");
  app.add_option("--journal", r.journal, "the journal (default: FILE.jnl; one FILE only)");
  app.add_option("--journal-dir", r.journal_dir, "the directory that holds the journals (journal_path=DIR/)");
  app.add_option("--mode", r.mode, "point-in-time (default), strict, tolerate-tail or salvage")
      ->check(CLI::IsMember({"point-in-time", "strict", "tolerate-tail", "salvage"}));
  app.add_option("--output", r.output,
                 "recover into this copy, leaving FILE and its journal as they are (one FILE only; required by salvage)");
  app.add_flag("--check,--dry-run", r.check, "validate and report; change nothing (exit 0: clean, 1: recovery needed)");
  app.add_option("-j,--jobs", o.jobs, "recover this many files at once (default: one per core)");
  app.add_flag("--json", o.as_json, "print a machine-readable report (over many files: every file, and a summary)");
  app.add_flag("-v,--verbose", o.verbose, "say more");
  app.add_flag("-q,--quiet", o.quiet, "print errors only");
  app.add_flag("--verify", r.verify, "after recovery, read every object with plain HDF5 and print the file's SHA-256");
  app.add_flag("--keep-journal", r.keep_journal, "keep a copy of the journal as JOURNAL.replayed");
  app.add_option("--reader-wait", r.reader_wait_ms,
                 "how long, in ms, recovery lets live readers of the file finish before it rewrites it (default " +
                     std::to_string(kDefaultReaderWait.count()) + ")");
  app.add_flag("--discard-journal", r.discard_journal,
               "keep FILE as it is and remove its journal, losing the commits in it (for a file written without "
               "the driver after the crash: exit status 10)");
  app.add_flag("--materialize", r.materialize,
               "FILE was closed in log form (materialize=never): make it a plain HDF5 file. Without the flag "
               "h5recover does the same; with it, a FILE not in log form is an error (exit 2)");
  app.add_flag("--list", o.list,
               "list FILE's journal and data logs record by record (FILE may also be a journal or a data log); "
               "change nothing");
  app.footer(kExitTable);
}

// Options that name one file's journal or copy make no sense for many.
std::string usage_problem(const Options& o) {
  bool many = o.recursive || o.files.size() != 1;
  if (many && !o.recover.journal.empty()) return "--journal names one file's journal: give one FILE, or use --journal-dir";
  if (many && !o.recover.output.empty()) return "--output names one copy: give one FILE";
  if (o.recursive && o.list) return "--list takes files, not --recursive";
  if (o.recover.discard_journal && (o.recover.check || !o.recover.output.empty() || o.recover.keep_journal))
    return "--discard-journal changes only the journal: not with --check, --output or --keep-journal";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Brings HDF5 files written through h5journal back to their last commit after a crash,\n"
               "as standard HDF5 files (docs/recovery.md, h5recover(1))."};
  define_options(app, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "h5recover: %s\nRun 'h5recover --help' for usage.\n", e.what());
    return kExitUsage;
  }
  if (std::string problem = usage_problem(o); !problem.empty()) {
    std::fprintf(stderr, "h5recover: %s\n", problem.c_str());
    return kExitUsage;
  }
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (o.list) return list(o);
  auto files = files_of(o);
  if (!files) {
    std::fprintf(stderr, "h5recover: %s\n", files.status().message().c_str());
    return kExitUsage;
  }
  unsigned jobs = o.jobs != 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  // Asked here, before the workers start: HDF5's property lists are not
  // thread-safe (workers calling this at once corrupted its free lists).
  o.recover.require_locks = file_locking(H5P_FILE_ACCESS_DEFAULT).required();
  // One bar at a time: only a single recovery draws one.
  o.recover.progress = !o.quiet && !o.as_json && isatty(STDERR_FILENO) && (jobs == 1 || files->size() == 1);
  return report(o, *files, recover_all(*files, o.recover, jobs));
}
