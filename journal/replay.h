// Replay: from a journal, the committed state of the HDF5 file as an overlay
// (which journal bytes cover which file bytes) plus the committed size; and
// applying an overlay to the file.  Open-time recovery, checkpoints and
// h5recover all use these two functions: one implementation.
#pragma once

#include <functional>

#include "extent_map.h"
#include "file.h"
#include "journal_reader.h"

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
  ExtentMap overlay;      // file range -> journal (or data log) offset of its newest bytes
  uint64_t logical_size;  // size of the file in the committed state
  ScanSummary summary;    // counts cover every scanned stretch
  uint64_t bytes_to_apply = 0;
  std::vector<SkippedRange> skipped;  // salvage only
  uint64_t refused_txn = 0;  // the first transaction whose data failed its CRC (0: none)
};

// Whether a committed DATA record's bytes in the data log have its CRC;
// an error (kMissing: no data log) if they cannot be read.
using DataCheck = std::function<Result<bool>(const Record& data)>;

// Scans `journal` under `mode`; the plan starts from the generation's base
// size, so a journal with no committed transaction yields the file as the
// generation found it.  kCorrupt when the journal is damaged beyond what the
// mode accepts; the message says where and why.
//
// Each committed transaction's DATA records are checked with `check_data`
// before it is applied.  A transaction whose data fails is refused, and
// with it everything after it (point-in-time, tolerate-tail), or the plan
// (strict), or only itself (salvage).
Result<ReplayPlan> plan_replay(JournalReader& reader, RecoveryMode mode = RecoveryMode::kPointInTime,
                               const DataCheck& check_data = nullptr);
// True when the stream's end is an ordinary end (no damaged record).
bool clean_end(StreamEnd e);

// Reads journal bytes [offset, offset + n) into a buffer.
using JournalSource = std::function<Status(uint64_t offset, std::span<std::byte> out)>;

// Told how many of the bytes to apply are done, as they are written.
using Progress = std::function<void(uint64_t done)>;

// Writes every extent of `overlay` into `base` in address order, adjacent
// extents coalesced into large writes, then sets the size to `logical_size`.
// Does not sync.  Idempotent: applying the same plan twice gives the same file.
Status apply_overlay(const ExtentMap& overlay, uint64_t logical_size, const JournalSource& source, File& base,
                     const Progress& progress = nullptr);

}  // namespace h5j
