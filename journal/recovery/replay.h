// Replay: from a journal, the committed state of the HDF5 file as an image
// (which data-log extents, then which journal bytes, cover which file bytes)
// plus the committed size.  Open-time recovery, checkpoints, close and
// h5recover all plan with this function and apply with apply_image.h: one
// implementation.
#pragma once

#include <functional>

#include "commits_past_stop.h"
#include "extent_map.h"
#include "file.h"
#include "journal_reader.h"
#include "raw_layer.h"

namespace h5j {

// How much damage recovery accepts (after RocksDB's WAL recovery modes).
enum class RecoveryMode {
  kPointInTime,   // stop at the first invalid record; apply what came before (default)
  kStrict,        // any damaged record is an error and nothing is applied
  kTolerateTail,  // damage is accepted only at the end (a torn last transaction)
  kSalvage,       // resynchronise past damage; apply every transaction that validates
};
const char* recovery_mode_name(RecoveryMode m);

// A stretch of journal that salvage skipped.
struct SkippedRange {
  uint64_t from, to;
  StreamEnd why;
};

struct ReplayPlan {
  RawLayer raw;           // data-log extents (DATA records), under the overlay
  ExtentMap overlay;      // file range -> journal offset of its newest bytes
  // Ranges of committed ZERO and PLACED records: the writer may have
  // written there in place legitimately (unwritten_space.h), so the file
  // may hold newer bytes than the generation's fingerprint saw.
  ExtentMap placeable;
  uint64_t logical_size;  // size of the file in the committed state
  // The file's own size on disk at the last commit applied (0: not
  // recorded, before format version 5 or under MPI).
  uint64_t committed_file_size = 0;
  ScanSummary summary;    // counts cover every scanned stretch
  uint64_t bytes_to_apply = 0;
  std::vector<SkippedRange> skipped;  // salvage only
  uint64_t refused_txn = 0;  // the first transaction whose data failed its CRC (0: none)
  // Point-in-time: the committed transactions after refused_txn.
  // Past a damaged record, find_commits_past_damage adds them.
  CommitsPastStop past_stop;
  // Salvage: transactions whose journal records were lost to damage, and
  // whose raw data came back from the data log's own records.
  uint64_t rebuilt_txns = 0;
  // The highest kDurableTxn an applied COMMIT records: every transaction up
  // to it had its bytes outside the journal durable.
  uint64_t durable_txn = 0;
  // The INPLACE records of the applied transactions after durable_txn,
  // in log order, for first_txn_missing_in_place.
  std::vector<Record> unverified_in_place;
  uint64_t last_applied_txn = 0;
  // The transaction left out as never made whole (0: none): see
  // plan_replay's `unacknowledged`.
  uint64_t unacknowledged_txn = 0;
};

// What replay asks of the data log.
struct DataLogAccess {
  // Whether a committed DATA record's bytes in the data log have its CRC;
  // an error (kMissing: no data log) if they cannot be read.
  std::function<Result<bool>(const Record& data)> matches;
  // Salvage: the data log's own valid DATA records of transactions
  // [first, last], in log order.
  std::function<Result<std::vector<Record>>(uint64_t first, uint64_t last)> records_of;
};

// Scans `journal` under `mode`; the plan starts from the generation's base
// size, so a journal with no committed transaction yields the file as the
// generation found it.  kCorrupt when the journal is damaged beyond what the
// mode accepts; the message says where and why.
//
// Each committed transaction's DATA records are checked with
// `data_log.matches` before it is applied.  A transaction whose data fails
// is refused, and with it everything after it (point-in-time), or the
// plan (strict; tolerate-tail too: the data log is durable before COMMIT,
// so committed data that fails is damage, not a torn tail), or only itself
// (salvage).
//
// Salvage also rebuilds from the data log: a transaction missing from the
// stream (damage skipped) before one that validates did commit (the writer
// begins a transaction only after the last one committed), so its raw data
// is applied from the data log's own records, in its place in the order.
// Its metadata records are lost with the damage.
//
// `unacknowledged`, if not 0, is the first transaction whose in-place
// bytes first_txn_missing_in_place did not find: its COMMIT reached the
// disk before them, so it never became durable whole (a commit of one
// flush never returned; under durable_within no sync had covered it).  It
// and every later transaction are left out, in every mode, and the stream
// ends before it (kInPlaceMissing).
Result<ReplayPlan> plan_replay(JournalReader& reader, RecoveryMode mode = RecoveryMode::kPointInTime,
                               const DataLogAccess& data_log = {}, uint64_t unacknowledged = 0);

// Reads [offset, offset + out.size()): false if the source ends before.
using RangeRead = std::function<Result<bool>(uint64_t offset, std::span<std::byte> out)>;
// The CRC32C of [addr, addr + len) read through `read` in 1 MiB pieces;
// nullopt if the source ends before.  Both sides of an INPLACE record
// take their CRC so: the writer's from the file, recovery's through its plan.
Result<std::optional<uint32_t>> crc_of_range(uint64_t addr, uint64_t len, const RangeRead& read);

// The first transaction after `durable_txn` (at least plan.durable_txn)
// whose INPLACE records `base` fails: its bytes in a range differ from the
// record's CRC, or the file ends before them.  0 if none does.
//
// The ranges are read from the file itself.  Nothing but a rewrite of
// committed bytes (a checkpoint, a close, a replay) writes them after their
// commit: later writes of the generation there are journaled (the
// write-ahead rule) and early write-back is off where several transactions
// wait unverified.  A rewrite could lay a later transaction's journaled
// bytes over them, so before one starts, the applying marker names the
// last transaction known durable (format.h), and `durable_txn` is at least
// that: nothing a rewrite touched is checked again.  A replay never writes
// into the ranges of the last transaction it applies, which nothing covers.
Result<uint64_t> first_txn_missing_in_place(const ReplayPlan& plan, File& base, uint64_t durable_txn);

}  // namespace h5j
