// Replay: from a journal, the committed state of the HDF5 file as an image
// (which data-log extents, then which journal bytes, cover which file bytes)
// plus the committed size; and applying an image to the file.  Open-time
// recovery, checkpoints, close and h5recover all use these two functions:
// one implementation.
#pragma once

#include <functional>

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
  // Salvage: transactions whose journal records were lost to damage, and
  // whose raw data came back from the data log's own records.
  uint64_t rebuilt_txns = 0;
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
Result<ReplayPlan> plan_replay(JournalReader& reader, RecoveryMode mode = RecoveryMode::kPointInTime,
                               const DataLogAccess& data_log = {});

// Told how many of the bytes to apply are done, as they are written.
using Progress = std::function<void(uint64_t done)>;

// Adds one committed record to an image: a DATA record's pattern to `raw`
// (erasing what `overlay` holds there, which it supersedes), any other to
// `overlay`.  The one way both replay and the live writer build an image,
// so its invariant (raw_layer.h) holds in both.
void add_to_image(RawLayer& raw, ExtentMap& overlay, const RawPattern& data, uint32_t log, uint64_t offset);

// Whether the bytes between the runs an apply writes may be read back from
// the file and written with them, or must be left alone.  Only bytes that
// hold nothing committed may be rewritten: a write torn by a crash may
// leave garbage in what it covers, and no record could bring a committed
// gap byte back (the crash-state explorer's torn writes found this when
// replay filled gaps).  So: kFromFile for staged bytes placed serially
// (their gaps lie in new space, and the commit that covers them syncs them
// first); kLeave everywhere else, and under MPI, where another rank may be
// writing a gap.
enum class GapFill { kFromFile, kLeave };

// Writes the image into `base` in address order, adjacent bytes coalesced
// into large writes, only the bytes the image covers: first the data-log extents of `raw`, then the journal
// bytes of `overlay` over them; then sets the size to `logical_size`.  Does
// not sync.  Idempotent: applying the same plan twice gives the same file.
// A caller that applies often passes `run`, the buffer the writes are
// gathered in, and keeps it: allocated on first use, its pages are faulted
// in once, not at every call.
Status apply_image(const RawLayer& raw, const ExtentMap& overlay, uint64_t logical_size, const ByteSource& journal,
                   const DataLogSource& data_log, File& base, const Progress& progress = nullptr,
                   AlignedBuffer* run = nullptr);
// Given a window's address (RawLayer::for_each_window), whether this writer
// writes it: the writers of an MPI checkpoint split the windows.
using WindowFilter = std::function<bool(uint64_t window)>;
// apply_image for a raw layer alone, its bytes below `limit`, in the
// windows `mine` picks (all without it), gaps as `gaps` says; the file's
// size is left as it is.
// `run` as for apply_image.
Status apply_raw_layer(const RawLayer& raw, uint64_t limit, const DataLogSource& data_log, File& base, GapFill gaps,
                       const WindowFilter& mine = nullptr, AlignedBuffer* run = nullptr);

}  // namespace h5j
