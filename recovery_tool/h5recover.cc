// h5recover: after a crash, brings an HDF5 file written through h5journal back
// to its last commit, as a standard HDF5 file.
//
// It finds the journal (beside the file, or --journal), validates it under a
// recovery mode, replays the committed transactions in order, clears HDF5's
// "open for writing" flag, syncs, and retires the journal.  The replay is the
// driver's own (recover_file), so open-time recovery and h5recover cannot
// disagree.  Every outcome has an exit status (exit_status.h).
#include <hdf5.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cstring>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "config.h"
#include "exit_status.h"
#include "hdf5_walk.h"
#include "journal_listing.h"
#include "journal_reader.h"
#include "recovery.h"
#include "superblock.h"

using namespace h5j;
using json = nlohmann::json;

namespace {

struct Options {
  std::string file, journal, mode = "point-in-time", output;
  bool dry_run = false, as_json = false, verbose = false, quiet = false, verify = false, keep_journal = false;
  bool materialize = false;
  bool list = false;
};

// The result of a run: its exit status, a one-line message, and the report.
struct Outcome {
  int status = kExitRecovered;
  std::string message;
  json report = json::object();
};

Outcome fail(int status, const std::string& message) { return Outcome{status, message, json::object()}; }

int exit_status_for(const Status& s) {
  switch (s.code()) {
    case Code::kMissing: return kExitJournalMissing;
    case Code::kForeign: return kExitForeignJournal;
    case Code::kCorrupt: return kExitCorruptJournal;
    case Code::kInvalid: return kExitNotHdf5;
    default: return kExitIoError;
  }
}

RecoveryMode parse_mode(const std::string& m) {
  if (m == "strict") return RecoveryMode::kStrict;
  if (m == "tolerate-tail") return RecoveryMode::kTolerateTail;
  if (m == "salvage") return RecoveryMode::kSalvage;
  return RecoveryMode::kPointInTime;
}

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / (1 << 20));
  return buf;
}

// Whether `path` holds `bytes` at `offset`.
bool holds_at(const std::string& path, uint64_t offset, std::span<const char> bytes) {
  auto f = posix_filesystem().open(path, OpenMode::kReadOnly, IoEngine::kSync);
  if (!f) return false;
  std::vector<std::byte> found(bytes.size());
  auto n = (*f)->read_at(offset, found);
  return n && *n == found.size() && std::memcmp(found.data(), bytes.data(), found.size()) == 0;
}

// Whether `file` was closed in log form (materialize=never): the guard at
// offset 0, its own first bytes in the journal.
bool in_log_form(const std::string& file) { return holds_at(file, 0, kLogFormGuard); }

// A file with no journal: clean, or damaged in a way replay cannot help.
Outcome classify_unjournaled(const std::string& file, const std::string& journal, bool log_form) {
  auto base = posix_filesystem().open(file, OpenMode::kReadOnly, IoEngine::kSync);
  if (!base) return fail(kExitIoError, base.status().message());
  if (log_form)
    return fail(kExitJournalMissing, file + " was closed in log form (materialize=never), and its journal " + journal +
                                         " is missing: its committed state is in that journal");
  if (Status s = check_binding_not_missing(**base, journal); !s)
    return fail(exit_status_for(s), s.message() + ". If the journal was moved, pass it with --journal");
  auto size = (*base)->size();
  if (!size) return fail(kExitIoError, size.status().message());
  FileImageView view(**base, *size);
  auto sb = find_superblock(view);
  if (!sb || !sb->has_value())
    return fail(kExitNotHdf5, file + " is not an HDF5 file (no superblock signature) and has no journal");
  if (marked_open_for_writing(**sb)) return fail(kExitJournalMissing, left_open_without_journal(file, journal).message());
  auto eoa = superblock_eoa(view, **sb);
  if (eoa && *eoa > *size)
    return fail(kExitNotHdf5, file + " is truncated (" + std::to_string(*size) + " bytes, HDF5 expects " +
                                  std::to_string(*eoa) + ") and has no journal to replay");
  return fail(kExitNothingToDo, "nothing to do: " + file + " is clean (no journal " + journal + ")");
}

// The journal path recorded in the file's binding attribute (a journal kept
// elsewhere with journal_path=...), or `fallback`.
std::string recorded_journal(const std::string& file, const std::string& fallback) {
  auto base = posix_filesystem().open(file, OpenMode::kReadOnly, IoEngine::kSync);
  if (!base) return fallback;
  auto binding = read_binding(**base);
  if (!binding || !binding->has_value() || (*binding)->journal_path.empty()) return fallback;
  return (*binding)->journal_path;
}

Status copy_file(const std::string& from, const std::string& to) {
  auto in = posix_filesystem().open(from, OpenMode::kReadOnly, IoEngine::kSync);
  if (!in) return in.status();
  auto out = posix_filesystem().open(to, OpenMode::kCreateTruncate, IoEngine::kSync);
  if (!out) return out.status();
  auto buffer = (*in)->allocate_buffer(8 << 20);
  if (!buffer) return buffer.status();
  for (uint64_t off = 0;;) {
    auto n = (*in)->read_at(off, std::span(buffer->data(), buffer->size()));
    if (!n) return n.status();
    if (*n == 0) break;
    H5J_RETURN_IF_ERROR((*out)->write_at(off, std::span<const std::byte>(buffer->data(), *n)));
    off += *n;
  }
  auto binding = (*in)->get_xattr(kBindingXattr);
  if (binding && binding->has_value()) (void)(*out)->set_xattr(kBindingXattr, **binding);
  return (*out)->sync_all();
}

std::string sha256_of(const std::string& file) {
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (f == nullptr) return "";
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  std::vector<unsigned char> buf(1 << 20);
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) EVP_DigestUpdate(ctx, buf.data(), n);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(ctx, md, &len);
  EVP_MD_CTX_free(ctx);
  std::fclose(f);
  std::string hex;
  for (unsigned i = 0; i < len; ++i) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", md[i]);
    hex += b;
  }
  return hex;
}

// Opens the recovered file with plain HDF5 and reads every object.
bool verify_readable(const std::string& file) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_sec2(fapl);
  bool ok = false;
  H5E_BEGIN_TRY {
    hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl);
    if (f >= 0) {
      ok = describe_file(f).has_value();
      ok = H5Fclose(f) >= 0 && ok;
    }
  }
  H5E_END_TRY
  H5Pclose(fapl);
  return ok;
}

json report_of(const OpenReport& r) {
  json skipped = json::array();
  for (const auto& s : r.skipped) skipped.push_back({{"from", s.from}, {"to", s.to}, {"why", stream_end_name(s.why)}});
  return {{"generation", r.generation},       {"transactions_replayed", r.replayed_txns},
          {"last_transaction", r.last_txn},   {"records_discarded", r.discarded_records},
          {"stream_end", stream_end_name(r.end)}, {"stream_end_detail", r.end_detail},
          {"bytes_applied", r.bytes_applied}, {"file_size", r.logical_size},
          {"skipped", skipped},               {"transactions_rebuilt_from_data_log", r.rebuilt_txns}};
}

// A one-line progress bar on a terminal.
Progress progress_bar(bool enabled) {
  if (!enabled) return nullptr;
  return [last = std::chrono::steady_clock::time_point()](uint64_t done) mutable {
    auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::milliseconds(100)) return;
    last = now;
    std::fprintf(stderr, "\rh5recover: replaying, %s applied   ", mib(done).c_str());
  };
}

// Whether `path` starts like a journal or a data log (a header slot's magic).
bool is_journal(const std::string& path) {
  return holds_at(path, kHeaderSlotOffset[0], kMagic) || holds_at(path, kHeaderSlotOffset[1], kMagic);
}

// FILE's journal: --journal, else where the configuration puts it, else
// (if none is there) the path the file's binding records.
std::string journal_of(const Options& o, const H5FD_journal_fapl_t& config) {
  if (!o.journal.empty()) return o.journal;
  std::string journal = journal_path_for(o.file, config);
  return posix_filesystem().exists(journal) ? journal : recorded_journal(o.file, journal);
}

Outcome list_one(const std::string& path, bool data_log) {
  Status s = list_journal(path, data_log, stdout);
  return s ? Outcome{kExitRecovered, "", json::object()} : fail(exit_status_for(s), s.message());
}

// --list: FILE's journal and data logs, found as recovery finds them; or
// FILE itself, if it is a journal or a data log.
Outcome list(const Options& o) {
  if (is_journal(o.file)) return list_one(o.file, names_a_data_log(o.file));
  H5FD_journal_fapl_t config;
  H5Pget_fapl_journal_defaults(&config);
  std::string journal = journal_of(o, config);
  if (!posix_filesystem().exists(journal)) return fail(kExitNothingToDo, "no journal: " + journal + " does not exist");
  Outcome out = list_one(journal, false);
  auto logs = existing_data_logs(posix_filesystem(), journal);
  if (!logs) return fail(kExitIoError, logs.status().message());
  for (uint32_t n : *logs) {
    if (out.status != kExitRecovered) break;
    std::printf("\n");
    out = list_one(data_log_path_for(journal, n), true);
  }
  return out;
}

Outcome recover(const Options& o) {
  struct stat st;
  if (::stat(o.file.c_str(), &st) != 0) return fail(kExitNotHdf5, "no such file: " + o.file);
  if (S_ISDIR(st.st_mode)) return fail(kExitNotHdf5, o.file + " is a directory, not an HDF5 file");
  H5FD_journal_fapl_t config;
  H5Pget_fapl_journal_defaults(&config);
  config.io_engine = H5FD_JOURNAL_IO_SYNC;
  bool log_form = in_log_form(o.file);
  if (o.materialize && !log_form)
    return fail(kExitUsage, o.file + " is not in log form (materialize=never); to recover it after a crash, run "
                            "h5recover without --materialize");
  std::string journal = journal_of(o, config);
  if (!posix_filesystem().exists(journal)) return classify_unjournaled(o.file, journal, log_form);
  if (::stat(journal.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return fail(kExitIoError, "cannot read journal " + journal + ": not a regular file");
  RecoveryMode mode = parse_mode(o.mode);
  if (mode == RecoveryMode::kSalvage && o.output.empty() && !o.dry_run)
    return fail(kExitUsage, "--mode salvage writes to a copy: give --output PATH");

  JournalOptions opts = journal_options_for(o.file, config, posix_filesystem());
  opts.journal_path = journal;
  opts.recovery_mode = mode;
  if (o.dry_run) {
    // A read-only open replays in memory and changes nothing.
    auto f = JournaledFile::open(o.file, Access::kReadOnly, opts);
    if (!f) return fail(exit_status_for(f.status()), f.status().message());
    Outcome out{kExitRecovered, "recovery needed: " + o.file + " has " + std::to_string((*f)->report().replayed_txns) +
                                    " committed transaction(s) in " + journal + " (dry run: nothing changed)",
                report_of((*f)->report())};
    return out;
  }
  std::string target = o.file;
  if (!o.output.empty()) {
    // Salvage (or any mode, on request) recovers a copy and leaves both originals alone.
    target = o.output;
    opts.target_name = journal_target_name(o.file);
    opts.journal_path = o.output + ".jnl";
    if (Status s = copy_file(o.file, target); !s) return fail(kExitIoError, s.message());
    if (Status s = copy_file(journal, opts.journal_path); !s) return fail(kExitIoError, s.message());
    // The data logs: one per MPI rank that opened the file, not always numbered without gaps.
    auto logs = existing_data_logs(posix_filesystem(), journal);
    if (!logs) return fail(kExitIoError, logs.status().message());
    for (uint32_t n : *logs) {
      Status s = copy_file(data_log_path_for(journal, n), data_log_path_for(opts.journal_path, n));
      if (!s) return fail(kExitIoError, s.message());
    }
  }
  std::string kept;
  if (o.keep_journal) {
    kept = journal + ".replayed";
    if (Status s = copy_file(journal, kept); !s) return fail(kExitIoError, s.message());
  }
  opts.progress = progress_bar(!o.quiet && !o.as_json && isatty(STDERR_FILENO));
  auto r = recover_file(target, opts);
  if (opts.progress) std::fprintf(stderr, "\r%60s\r", "");
  if (!r) {
    std::string m = r.status().message();
    if (m.find("Permission denied") != std::string::npos || m.find("Read-only file system") != std::string::npos)
      m += ": recovery writes the file in place; give write access, or recover a copy with --output";
    return fail(exit_status_for(r.status()), m);
  }
  Outcome out{kExitRecovered, "", report_of(*r)};
  out.message = (log_form ? "materialized " : "recovered ") + target + ": replayed " +
                std::to_string(r->replayed_txns) + " committed transaction(s) (" + mib(r->bytes_applied) + ")";
  if (r->discarded_records > 0)
    out.message += ", discarded " + std::to_string(r->discarded_records) + " record(s) of an uncommitted transaction";
  if (!r->skipped.empty()) out.message += ", skipped " + std::to_string(r->skipped.size()) + " damaged stretch(es)";
  if (r->rebuilt_txns > 0)
    out.message += ", rebuilt the raw data of " + std::to_string(r->rebuilt_txns) +
                   " transaction(s) whose journal records were damaged, from the data log";
  if (!kept.empty()) out.report["journal_kept"] = kept;
  if (o.verify) {
    bool ok = verify_readable(target);
    out.report["verified"] = ok;
    out.report["sha256"] = sha256_of(target);
    if (!ok) return Outcome{kExitVerifyFailed, target + " was recovered but does not read back completely", out.report};
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Brings an HDF5 file written through h5journal back to its last commit after a crash,\n"
               "as a standard HDF5 file (docs/recovery.md, h5recover(1))."};
  app.add_option("FILE", o.file, "the HDF5 file")->required();
  app.add_option("--journal", o.journal, "the journal (default: FILE.jnl)");
  app.add_option("--mode", o.mode, "point-in-time (default), strict, tolerate-tail or salvage")
      ->check(CLI::IsMember({"point-in-time", "strict", "tolerate-tail", "salvage"}));
  app.add_option("--output", o.output, "recover into this copy, leaving FILE and its journal as they are (required by salvage)");
  app.add_flag("--dry-run", o.dry_run, "validate and report; change nothing (exit 0: recovery needed, 1: clean)");
  app.add_flag("--json", o.as_json, "print a machine-readable report");
  app.add_flag("-v,--verbose", o.verbose, "say more");
  app.add_flag("-q,--quiet", o.quiet, "print errors only");
  app.add_flag("--verify", o.verify, "after recovery, read every object with plain HDF5 and print the file's SHA-256");
  app.add_flag("--keep-journal", o.keep_journal, "keep a copy of the journal as JOURNAL.replayed");
  app.add_flag("--materialize", o.materialize,
               "FILE was closed in log form (materialize=never): make it a plain HDF5 file. Without the flag "
               "h5recover does the same; with it, a FILE not in log form is an error (exit 2)");
  app.add_flag("--list", o.list,
               "list FILE's journal and data logs record by record (FILE may also be a journal or a data log); "
               "change nothing");
  app.footer(kExitTable);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "h5recover: %s\nRun 'h5recover --help' for usage.\n", e.what());
    return kExitUsage;
  }
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (o.list) {
    Outcome listed = list(o);
    if (listed.status != kExitRecovered) std::fprintf(stderr, "h5recover: %s\n", listed.message.c_str());
    return listed.status;
  }
  auto t0 = std::chrono::steady_clock::now();
  Outcome out = recover(o);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.as_json) {
    out.report["file"] = o.file;
    out.report["mode"] = o.mode;
    out.report["dry_run"] = o.dry_run;
    out.report["exit_status"] = out.status;
    out.report["message"] = out.message;
    out.report["seconds"] = secs;
    std::printf("%s\n", out.report.dump(2).c_str());
    return out.status;
  }
  bool error = out.status >= kExitUsage;
  if (error) std::fprintf(stderr, "h5recover: %s\n", out.message.c_str());
  else if (!o.quiet) std::printf("h5recover: %s (%.2f s)\n", out.message.c_str(), secs);
  if (!error && o.verbose && !out.report.empty()) std::printf("%s\n", out.report.dump(2).c_str());
  if (out.report.contains("sha256") && !o.quiet) std::printf("sha256 %s\n", out.report["sha256"].get<std::string>().c_str());
  return out.status;
}
