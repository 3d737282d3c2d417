#include "recover_one.h"

#include <hdf5.h>
#include <sys/stat.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "binding.h"
#include "config.h"
#include "copies.h"
#include "data_logs.h"
#include "exit_status.h"
#include "file_lock.h"
#include "journal_listing.h"
#include "journal_reader.h"
#include "journaled_file.h"
#include "live_readers.h"
#include "recovery.h"
#include "superblock.h"
#include "superblock_guard.h"
#include "verify.h"

namespace h5j {
namespace {

using json = nlohmann::json;

// A journal at least this large gets a progress bar on a terminal.
constexpr uint64_t kProgressBarBytes = uint64_t(256) << 20;

Outcome fail(int status, const std::string& message) {
  const char* what = status == kExitNeverCommitted ? "never committed" : "failed";
  return Outcome{status, what, message, json::object()};
}

int exit_status_for(const Status& s) {
  switch (s.code()) {
    case Code::kMissing: return kExitJournalMissing;
    case Code::kForeign: return kExitForeignJournal;
    case Code::kCorrupt: return kExitCorruptJournal;
    case Code::kInvalid: return kExitNotHdf5;
    case Code::kNeverCommitted: return kExitNeverCommitted;
    case Code::kBaseMismatch: return kExitFileMismatch;
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

// Whether `file`'s superblock is guarded (superblock_guard.h): as a
// writer leaves it, or, with `log_form`, as a close in log form does.
// The superblock is where HDF5 finds it: at 0, or after a user block.
bool guarded(const std::string& file, bool log_form) {
  auto f = posix_filesystem().open(file, OpenMode::kReadOnly, IoEngine::kSync);
  if (!f) return false;
  auto at = locate_superblock(**f);
  std::array<std::byte, kSuperblockHead> head;
  auto n = at && *at ? (*f)->read_at(**at, head) : Result<size_t>(size_t(0));
  return n && *n == head.size() && is_guarded_head(head, log_form);
}

// Whether `file` was closed in log form (materialize=never): its
// superblock's log-form guard, or the guard an older h5journal wrote over
// the whole signature (format.h).
bool in_log_form(const std::string& file) {
  return holds_at(file, 0, kLogFormGuard) || guarded(file, /*log_form=*/true);
}

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
  if ((!sb || !sb->has_value()) && guarded(file, /*log_form=*/false))
    return fail(kExitJournalMissing,
                file + " was being written through h5journal, or is a copy taken while it was (its superblock is "
                       "guarded), and its journal " + journal + " is not here: its last commits are in that journal. "
                       "Pass the journal with --journal; to accept a copy as it was taken, clear the top bits of "
                       "its superblock's version byte (docs/recovery.md, \"What a reader without the driver sees\")");
  if (!sb || !sb->has_value())
    return fail(kExitNotHdf5, file + " is not an HDF5 file (no superblock signature) and has no journal");
  if (marked_open_for_writing(**sb)) return fail(kExitJournalMissing, left_open_without_journal(file, journal).message());
  auto eoa = superblock_eoa(view, **sb);
  if (eoa && *eoa > *size)
    return fail(kExitNotHdf5, file + " is truncated (" + std::to_string(*size) + " bytes, HDF5 expects " +
                                  std::to_string(*eoa) + ") and has no journal to replay");
  return Outcome{kExitOk, "clean", "clean: " + file + " needs no recovery (no journal " + journal + ")", json::object()};
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

// A journal found through the file's binding is the file's only if the
// binding was set on it: a copy that kept its extended attributes (cp -a)
// must neither replay that journal into itself, which retires it, nor
// discard it (binding.h, check_binding_made_here).
Status check_binding_of_found_journal(const std::string& file, const std::string& journal, const RecoverOptions& o) {
  if (!o.journal.empty()) return Status::ok();
  auto base = posix_filesystem().open(file, OpenMode::kReadOnly, IoEngine::kSync);
  if (!base) return base.status();
  auto binding = read_binding(**base);
  if (!binding || !binding->has_value() || (*binding)->journal_path != journal) return Status::ok();
  return check_binding_made_here(posix_filesystem(), **base);
}

json report_of(const OpenReport& r) {
  json skipped = json::array();
  for (const auto& s : r.skipped) skipped.push_back({{"from", s.from}, {"to", s.to}, {"why", stream_end_name(s.why)}});
  return {{"generation", r.generation},       {"transactions_replayed", r.replayed_txns},
          {"last_transaction", r.last_txn},   {"records_discarded", r.discarded_records},
          {"stream_end", stream_end_name(r.end)}, {"stream_end_detail", r.end_detail},
          {"bytes_applied", r.bytes_applied}, {"file_size", r.logical_size},
          {"skipped", skipped},               {"transactions_rebuilt_from_data_log", r.rebuilt_txns},
          {"committed_transactions_left_out", r.past_stop.txns}};
}

// A one-line progress bar on the terminal, for a journal worth one.
Progress progress_bar(const std::string& file, const std::string& journal, bool enabled) {
  struct stat st;
  if (!enabled || ::stat(journal.c_str(), &st) != 0 || uint64_t(st.st_size) < kProgressBarBytes) return nullptr;
  return [file, total = uint64_t(st.st_size), last = std::chrono::steady_clock::time_point()](uint64_t done) mutable {
    auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::milliseconds(100)) return;
    last = now;
    int width = 30, filled = int(std::min<uint64_t>(done, total) * uint64_t(width) / total);
    std::fprintf(stderr, "\rh5recover: %s [%s%s] %s applied   ", file.c_str(), std::string(size_t(filled), '#').c_str(),
                 std::string(size_t(width - filled), '.').c_str(), mib(done).c_str());
  };
}

// Whether `path` starts like a journal or a data log (a header slot's magic).
bool is_journal(const std::string& path) {
  return holds_at(path, kHeaderSlotOffset[0], kMagic) || holds_at(path, kHeaderSlotOffset[1], kMagic);
}

// No call into HDF5: recover_one runs on h5recover's worker threads, and
// HDF5 is not thread-safe (an h5journal.h function clears HDF5's error
// stack, and workers doing so at once corrupted its free lists).
H5FD_journal_fapl_t config_for(const RecoverOptions& o) {
  H5FD_journal_fapl_t config = default_config();
  config.io_engine = H5FD_JOURNAL_IO_SYNC;
  config.reader_wait = o.reader_wait_ms;
  if (!o.journal_dir.empty()) {
    std::string dir = o.journal_dir.back() == '/' ? o.journal_dir : o.journal_dir + "/";
    std::snprintf(config.journal_path, sizeof config.journal_path, "%s", dir.c_str());
  }
  return config;
}

Outcome list_one(const std::string& path, bool data_log) {
  Status s = list_journal(path, data_log, stdout);
  return s ? Outcome{kExitOk, "clean", "", json::object()} : fail(exit_status_for(s), s.message());
}

// With --check: a read-only open replays in memory and changes nothing.
Outcome check(const std::string& file, const std::string& journal, JournalOptions opts) {
  auto f = JournaledFile::open(file, Access::kReadOnly, opts);
  if (!f) return fail(exit_status_for(f.status()), f.status().message());
  return Outcome{kExitRecoveryNeeded, "recovery needed",
                 "recovery needed: " + file + " has " + std::to_string((*f)->report().replayed_txns) +
                     " committed transaction(s) in " + journal + " (--check: nothing changed)",
                 report_of((*f)->report())};
}

std::string recovered_message(const std::string& target, const OpenReport& r, bool log_form) {
  std::string m = (log_form ? "materialized " : "recovered ") + target + ": replayed " +
                  std::to_string(r.replayed_txns) + " committed transaction(s) (" + mib(r.bytes_applied) + ")";
  const CommitsPastStop& past = r.past_stop;
  if (past.txns > 0)
    m += ", left out transaction " + std::to_string(past.stopped_txn) + " at the damage (" + stream_end_name(past.why) +
         " at offset " + std::to_string(past.at) + ") and the " + past.text() + " after it";
  else if (r.discarded_records > 0)
    m += ", discarded " + std::to_string(r.discarded_records) + " record(s) of an uncommitted transaction";
  if (!r.skipped.empty()) m += ", skipped " + std::to_string(r.skipped.size()) + " damaged stretch(es)";
  if (r.end == StreamEnd::kInPlaceMissing) m += ", left out " + r.end_detail;
  if (r.rebuilt_txns > 0)
    m += ", rebuilt the raw data of " + std::to_string(r.rebuilt_txns) +
         " transaction(s) whose journal records were damaged, from the data log";
  return m;
}

// A replay the disk could not hold.  Its writes into the file are the
// committed bytes again, so a replay run again with room finishes it; the
// journal and data logs hold at most that many bytes.
std::string no_space_advice(const std::string& target, const JournalOptions& opts) {
  auto size_of = [](const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
  };
  uint64_t records = size_of(opts.journal_path);
  if (auto logs = existing_data_logs(*opts.fs, opts.journal_path))
    for (uint32_t log : *logs) records += size_of(data_log_path_for(opts.journal_path, log));
  return ". Nothing committed is lost: the journal and its data logs are kept, and a replay run again starts "
         "over. It writes at most " + mib(records) + " (what they hold) into " + target +
         ": free that much on its file system and run h5recover again, or recover a copy on another with "
         "--output PATH";
}

Outcome replay(const std::string& file, const std::string& journal, JournalOptions opts, const RecoverOptions& o,
               bool log_form) {
  std::string target = file;
  if (!o.output.empty()) {
    target = o.output;
    opts.target_name = journal_target_name(file);
    opts.journal_path = o.output + ".jnl";
    if (Status s = copy_for_output(file, journal, o.output); !s) return fail(kExitIoError, s.message());
  }
  std::string kept;
  if (o.keep_journal) {
    kept = journal + ".replayed";
    if (Status s = copy_file(journal, kept); !s) return fail(kExitIoError, s.message());
  }
  opts.progress = progress_bar(file, journal, o.progress);
  // A recovery rewrites the file, so it lets live readers finish first.
  opts.on_reader_wait = [](const std::string& what) { std::fprintf(stderr, "h5recover: %s\n", what.c_str()); };
  auto r = recover_file(target, opts);
  if (opts.progress) std::fprintf(stderr, "\r%*s\r", int(file.size()) + 60, "");
  if (!r) {
    std::string m = r.status().message();
    if (m.find("Permission denied") != std::string::npos || m.find("Read-only file system") != std::string::npos)
      m += ": recovery writes the file in place; give write access, or recover a copy with --output";
    if (r.status().code() == Code::kNoSpace) m += no_space_advice(target, opts);
    return fail(exit_status_for(r.status()), m);
  }
  Outcome out{kExitOk, "recovered", recovered_message(target, *r, log_form), report_of(*r)};
  if (!kept.empty()) out.report["journal_kept"] = kept;
  if (o.verify) {
    bool ok = verify_readable(target);
    out.report["verified"] = ok;
    out.report["sha256"] = sha256_of(target);
    if (!ok) return Outcome{kExitVerifyFailed, "failed", target + " was recovered but does not read back completely", out.report};
  }
  return out;
}

// --discard-journal: the file stays as it is (written without the driver
// after the crash, say), and its journal, data logs and marks go, durably,
// the marks first so that no binding ever names a missing journal.
Outcome discard(const std::string& file, const std::string& journal) {
  // Never a journal a live writer holds.
  auto held = posix_filesystem().open(journal, OpenMode::kReadWrite, IoEngine::kSync);
  if (!held) return fail(kExitIoError, held.status().message());
  if (Status s = try_lock_past_exited_holder(**held, LockMode::kExclusive); !s && s.code() != Code::kUnsupported)
    return fail(kExitIoError, s.message() + ": " + file + " is open for writing; its journal is not discarded");
  // A file still as a writer left it (its superblock guarded) is made whole
  // only by its journal: without it, no HDF5 file, and its commits gone.
  const bool log_form = in_log_form(file);
  if (log_form || guarded(file, /*log_form=*/false))
    return fail(kExitUsage, file +
                                (log_form ? " was closed in log form (materialize=never)"
                                          : " is as h5journal left it (its superblock is guarded)") +
                                ": without " + journal +
                                " it is not a whole HDF5 file, and its commits are in that journal. Nothing was "
                                "changed. Run h5recover " + file + " to bring back its last commit; --discard-journal "
                                "is for a file a program without the driver wrote after the crash (exit status 10)");
  // Read-only is enough, and all a killed writer's file allows (write_protection.cc).
  auto base = posix_filesystem().open(file, OpenMode::kReadOnly, IoEngine::kSync);
  if (!base) return fail(kExitIoError, base.status().message());
  if (Status s = (*base)->restore_write_permission(); !s) return fail(kExitIoError, s.message());
  Status marks = remove_binding(**base);
  if (marks) marks = (*base)->remove_xattr(kApplyingXattr);
  if (!marks) return fail(kExitIoError, marks.message());
  if (Status s = (*base)->sync_all(); !s) return fail(kExitIoError, s.message());
  // In order: a journal whose data log is gone could not be replayed.
  Status s = posix_filesystem().remove(journal);
  if (s) s = posix_filesystem().sync_dir(journal);
  if (s) s = remove_data_logs(posix_filesystem(), journal, true);
  if (s) s = posix_filesystem().remove(readers_path_for(journal));
  if (!s) return fail(kExitIoError, s.message());
  Outcome out = classify_unjournaled(file, journal, false);
  if (out.status == kExitOk)
    out = Outcome{kExitOk, "discarded", "discarded " + journal + ": " + file + " is kept as it is", json::object()};
  return out;
}

}  // namespace

std::string journal_of(const std::string& file, const RecoverOptions& o) {
  if (!o.journal.empty()) return o.journal;
  std::string in_dir = journal_path_for(file, config_for(o)), beside = journal_path_for(file, config_for({}));
  for (const std::string& journal : {in_dir, beside})
    if (posix_filesystem().exists(journal)) return journal;
  return recorded_journal(file, in_dir);
}

Outcome list_journals(const std::string& file, const RecoverOptions& o) {
  if (is_journal(file)) return list_one(file, names_a_data_log(file));
  std::string journal = journal_of(file, o);
  if (!posix_filesystem().exists(journal))
    return Outcome{kExitOk, "clean", "no journal: " + journal + " does not exist", json::object()};
  Outcome out = list_one(journal, false);
  auto logs = existing_data_logs(posix_filesystem(), journal);
  if (!logs) return fail(kExitIoError, logs.status().message());
  for (uint32_t n : *logs) {
    if (out.status != kExitOk) break;
    std::printf("\n");
    out = list_one(data_log_path_for(journal, n), true);
  }
  return out;
}

Outcome recover_one(const std::string& file, const RecoverOptions& o) {
  struct stat st;
  if (::stat(file.c_str(), &st) != 0) return fail(kExitNotHdf5, "no such file: " + file);
  if (S_ISDIR(st.st_mode)) return fail(kExitNotHdf5, file + " is a directory, not an HDF5 file");
  bool log_form = in_log_form(file);
  if (o.materialize && !log_form)
    return fail(kExitUsage, file + " is not in log form (materialize=never); to recover it after a crash, run "
                                   "h5recover without --materialize");
  std::string journal = journal_of(file, o);
  if (!posix_filesystem().exists(journal)) return classify_unjournaled(file, journal, log_form);
  if (Status s = check_binding_of_found_journal(file, journal, o); !s) return fail(exit_status_for(s), s.message());
  if (::stat(journal.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return fail(kExitIoError, "cannot read journal " + journal + ": not a regular file");
  RecoveryMode mode = parse_mode(o.mode);
  if (mode == RecoveryMode::kSalvage && o.output.empty() && !o.check)
    return fail(kExitUsage, "--mode salvage writes to a copy: give --output PATH");
  if (o.discard_journal) return discard(file, journal);
  JournalOptions opts = journal_options_for(file, config_for(o), posix_filesystem());
  opts.journal_path = journal;
  opts.recovery_mode = mode;
  // Damage with commits after it: the file and its journal are kept for
  // salvage, and only a copy may be recovered to the damage.
  using PastDamage = JournalOptions::PastDamage;
  opts.past_damage = o.check ? PastDamage::kRefuse : o.output.empty() ? PastDamage::kRefuseWhenWriting : PastDamage::kLeaveOut;
  opts.require_locks = o.require_locks;
  return o.check ? check(file, journal, opts) : replay(file, journal, opts, o, log_form);
}

}  // namespace h5j
