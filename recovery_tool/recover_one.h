// One file's recovery, as h5recover runs it for each FILE it is given:
// find the journal, validate it under a recovery mode, replay the committed
// transactions (the driver's own recover_file, so open-time recovery and
// h5recover cannot disagree), and say what happened as an exit status
// (exit_status.h), a one-line message and a report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "journal_options.h"

namespace h5j {

struct RecoverOptions {
  std::string journal;      // --journal: this file's journal (one FILE only)
  std::string journal_dir;  // --journal-dir: where journal_path=DIR/ put the journals
  std::string mode = "point-in-time";
  std::string output;       // --output: recover into this copy (one FILE only)
  bool check = false;       // --check: validate and report, change nothing
  bool verify = false, keep_journal = false, materialize = false;
  bool discard_journal = false;  // keep the file as it is; drop its journal
  bool progress = false;    // a progress bar on the terminal for a large journal
  // --reader-wait: how long recovery lets live readers finish
  unsigned reader_wait_ms = unsigned(kDefaultReaderWait.count());
  // HDF5_USE_FILE_LOCKING=TRUE, as HDF5's tools read it: asked once, before
  // the workers start, for HDF5 is not thread-safe.
  bool require_locks = false;
};

// What became of one file.  `status` is an ExitStatus; `what` is the word
// the summary counts it under.
struct Outcome {
  int status = 0;
  std::string what;  // "recovered", "clean", "recovery needed", "discarded", "never committed" or "failed"
  std::string message;
  nlohmann::json report = nlohmann::json::object();
};

// Runs on h5recover's worker threads, several at once: it calls into HDF5
// only through verify_readable (verify.h), which takes HDF5 one thread at
// a time, since HDF5 is not thread-safe.
Outcome recover_one(const std::string& file, const RecoverOptions& options);

// --list: FILE's journal and data logs, record by record, on stdout; or FILE
// itself, if it is a journal or a data log.
Outcome list_journals(const std::string& file, const RecoverOptions& options);

// FILE's journal: --journal, else the first that exists of the one in
// --journal-dir and the one beside FILE, else the path the file's binding
// records.
std::string journal_of(const std::string& file, const RecoverOptions& options);

}  // namespace h5j
