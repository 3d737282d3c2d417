// What a JournaledFile is opened with, and what its open reports.
#pragma once

#include <cstdint>
#include <chrono>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "apply_image.h"
#include "apply_buffers_pool.h"
#include "closing_thread.h"
#include "file.h"
#include "journal_writer.h"
#include "recovered_image.h"
#include "replay.h"

namespace h5j {

// Where raw data (HDF5's H5FD_MEM_DRAW writes, write_raw) goes.
enum class RawMode {
  kInPlace,  // as any other write: the write-ahead rule
  kLog,      // appended to the data log, indexed by DATA records in the journal
  kAuto,     // in place when large and in new space (at or above the protected end), else the data log
};

// Raw bytes for [addr, addr + bytes.size()): one element of a vector write.
struct RawPiece {
  uint64_t addr;
  std::span<const std::byte> bytes;
};

// The journal's size past which a commit checkpoints, unless configured
// (design.md §5).  A durable journal's checkpoint costs two cache flushes,
// and its journal writes zeros ahead once for each byte of space it
// reaches: 16 MiB.  Without durability a checkpoint costs no flush, only a
// write of what the generation changed, and a small journal stays in the
// page cache it already has: its appends overwrite pages instead of adding
// them, and its removal at close frees a few (W4, 5,000 steps of 8 KiB:
// 0.78x sec2 at 16 MiB, 0.91x at 1 MiB).
constexpr uint64_t default_checkpoint_bytes(bool durable) { return (durable ? uint64_t(16) : uint64_t(1)) << 20; }

// Who a handle is among the processes writing one file (docs/design.md §10).
enum class Role {
  kSerial,       // the only writer
  kMpiOwner,     // MPI rank 0: owns the journal, publishes its records as it appends them
  kMpiFollower,  // any other rank: follows the journal's tail, keeps its own data log
};

// reader_wait unless the configuration sets another (JournalOptions).
inline constexpr std::chrono::milliseconds kDefaultReaderWait{5000};

struct JournalOptions {
  std::string journal_path;
  // The file name the journal records (its base name); empty: the file's own.
  // A recovered copy keeps the original's, so the journal still binds to it.
  std::string target_name;
  RingOptions ring;
  IoEngine engine = IoEngine::kAuto;
  uint64_t checkpoint_bytes = default_checkpoint_bytes(true);
  // A write above the protected end shorter than this is journaled, not
  // written in place: in place it would cost its commit a second fdatasync
  // (the file's, before the journal's), and below this size writing the
  // bytes into the journal costs less than that sync (design.md §9).
  // 0: every such write in place (the tests' setting, to exercise the
  // in-place path with small writes).
  uint64_t inplace_min_bytes = uint64_t(128) << 10;
  RawMode raw_mode = RawMode::kInPlace;
  uint32_t data_log = 0;  // the data log this handle appends to (its MPI rank; 0 when serial)
  Role role = Role::kSerial;
  uint32_t ranks = 1;     // MPI: how many ranks, hence data logs, share the file
  // The raw layer's buckets, 2^this bytes: the unit an MPI checkpoint splits
  // between ranks (step4_write_raw_share).  Tests make them small.
  unsigned raw_bucket_shift = 20;
  // false: close leaves the file in log form (its journal and data log, and
  // the superblock's guard with the log-form bit); the next read-write open
  // or h5recover materializes.
  bool materialize_at_close = true;
  bool recover_on_open = true;  // false: refuse to open a file that needs recovery
  RecoveryMode recovery_mode = RecoveryMode::kPointInTime;
  // Point-in-time, when the replay stops at damage that committed
  // transactions follow (commits_past_stop.h):
  //   kRefuseWhenWriting  a writer's open, which would retire the journal,
  //                       is refused (kCorrupt) and changes nothing; a
  //                       reader reads up to the damage without looking
  //                       past it, since a live writer may be appending
  //   kRefuse             every open is refused (h5recover --check)
  //   kLeaveOut           the replay stops there and the report counts
  //                       what it left out (h5recover --output: a copy)
  enum class PastDamage { kRefuseWhenWriting, kRefuse, kLeaveOut };
  PastDamage past_damage = PastDamage::kRefuseWhenWriting;
  Progress progress;  // told of bytes applied during recovery (h5recover's progress bar)
  std::function<Status(RecoveredImage&)> after_replay;
  // A writer's lock on the file itself (HDF5's file locking), taken right
  // after the journal's lock and before the open changes a byte (truncation,
  // replay), so that a file written by a program without the driver is
  // refused, not damaged.  Not called for a passive handle.  Empty: none.
  std::function<Status(File& base)> lock_base;
  // A file system with no lock other processes can see (file_lock.h): true
  // refuses the open (HDF5_USE_FILE_LOCKING=TRUE); false opens with a lock
  // this process alone honours, and a second writer elsewhere is then
  // refused only by convention (OpenReport::unlocked).
  bool require_locks = false;
  // How long live readers' snapshots may hold off a rewrite of the file
  // (live_readers.h): a checkpoint is put off that long after a reader's
  // registration, a close or recovery waits that long; then the readers'
  // snapshots expire.  A reader with 0 never waits for a writer holding
  // readers off.
  std::chrono::milliseconds reader_wait{kDefaultReaderWait};
  // With ring.durable: 0, each commit is durable when it returns; else
  // commits are only written, and a thread makes them durable in commit
  // order within this interval (background_sync.h, design.md §9a).
  std::chrono::milliseconds durable_within{0};
  // Told, in a sentence, when a close or a recovery waits for live readers
  // and how that wait ended (h5recover prints it).  Empty: nobody is told.
  std::function<void(const std::string&)> on_reader_wait;
  // A read-only open of a file this process writes is passive, as HDF5's
  // tentative second open needs (the VFD sets it); false: a live reader.
  bool reader_in_writer_passive = false;
  // journal_path follows from the file's name (the VFD sets it): a binding
  // naming another journal that is there means the file is written, or was
  // until a crash, under another name, and the open is refused
  // (JournaledFile::refuse_if_bound_elsewhere).  h5recover, told which
  // journal to use or recovering into a copy, leaves it false.
  bool journal_named_after_file = false;
  // Where every file operation goes: the real file system unless a test puts
  // a fault-injecting or recording one behind the seam.  Not owned.
  FileSystem* fs = &posix_filesystem();
  // Where a close hands its journal and data logs once their names are
  // removed, for their blocks to be freed off the close (closing_thread.h);
  // nullptr: closed at once.  Not owned; outlives the JournaledFile.
  ClosingThread* closing_thread = nullptr;
  // The buffers applies work in, shared by the files of a process
  // (apply_buffers_pool.h); nullptr: the file keeps its own.  Not owned;
  // outlives the JournaledFile.
  ApplyBuffersPool* apply_buffers = nullptr;
};

// kTruncate: an existing file, emptied (HDF5's TRUNC without CREAT).
enum class Access { kReadOnly, kReadWrite, kTruncate, kCreate, kCreateTruncate, kCreateExclusive };

inline bool truncates(Access a) { return a == Access::kTruncate || a == Access::kCreateTruncate; }

// What open found, for messages, reports and tests.
struct OpenReport {
  bool journal_found = false;
  bool recovered = false;       // a journal was found and recovered (replayed or overlaid)
  uint64_t replayed_txns = 0;
  uint64_t last_txn = 0;        // the last transaction replayed
  uint64_t discarded_records = 0;
  uint64_t generation = 0;      // of the journal found
  uint64_t bytes_applied = 0;
  uint64_t logical_size = 0;    // of the recovered file
  StreamEnd end = StreamEnd::kEndOfFile;
  std::string end_detail;       // where and why the journal's stream ended
  std::vector<SkippedRange> skipped;  // salvage
  uint64_t rebuilt_txns = 0;          // salvage: transactions whose raw data came from the data log alone
  CommitsPastStop past_stop;          // point-in-time: committed transactions left out past damage
  bool passive = false;         // another handle owns the journal
  bool unlocked = false;        // the journal's lock holds in this process only (require_locks)
  bool write_protected = false; // the file's write permission is taken while it is written
  bool live_snapshot = false;   // read-only: a snapshot registered with the writer's readers file
};

}  // namespace h5j
