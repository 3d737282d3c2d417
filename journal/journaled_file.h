// A file whose changes are journaled: the engine the HDF5 driver wraps.  It
// knows nothing of HDF5: it sees byte writes, a size, and commit points.
//
// THE WRITE-AHEAD RULE.  No write may change, before its transaction is
// durable, a byte that the last committed state could reference.  The driver
// does not see HDF5's frees, so every byte below the committed size may be
// live.  Writes below the protected end
//     protected_end = max(committed size, highest byte journaled this generation)
// go to the journal and an in-memory overlay; writes at or above it go in
// place (the second term keeps replay from laying an older journaled copy over
// a newer in-place write), unless they are shorter than inplace_min_bytes:
// those are journaled too, because in place they would cost the commit a
// second fdatasync.  Commit makes in-place bytes durable first, then the
// journal's COMMIT record.  A checkpoint copies the overlay into the file,
// syncs it and starts a new journal generation.
//
// BINDING.  The journal's UUID and generation are also stored in the HDF5
// file's extended attribute "user.h5journal" while the journal exists, so a
// journal of another file, an older generation of this file's journal, or a
// journal that should exist and does not is reported, not silently used.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "extent_map.h"
#include "file.h"
#include "journal_writer.h"
#include "raw_layer.h"
#include "replay.h"

namespace h5j {

// What recovery code may do to the image it recovered (before it is used).
class RecoveredImage {
 public:
  virtual ~RecoveredImage() = default;
  virtual Status read(uint64_t addr, std::span<std::byte> out) = 0;
  // A change to the recovered bytes: in place for a read-write open, held in
  // memory for a read-only one (which must modify no file).
  virtual Status patch(uint64_t addr, std::span<const std::byte> bytes) = 0;
  // The image's size (bytes at or past it read as zeros).
  virtual uint64_t size() const = 0;
};

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

// Data log number `log` of the journal at `journal_path`: <journal>.data
// for 0 (a serial writer, or MPI rank 0), <journal>.data.<n> for MPI rank n.
inline std::string data_log_path_for(const std::string& journal_path, uint32_t log = 0) {
  return journal_path + ".data" + (log == 0 ? std::string() : "." + std::to_string(log));
}

// The numbers of the journal's data logs that exist, ascending.  Not always
// 0..n-1: under MPI every rank creates its own log as it opens, so a job
// killed in its open can leave log 2 without log 1.
Result<std::vector<uint32_t>> existing_data_logs(FileSystem& fs, const std::string& journal_path);

// Removes every data log of the journal; with `sync`, makes the removals
// durable when there were any.
Status remove_data_logs(FileSystem& fs, const std::string& journal_path, bool sync);

// Who a handle is among the processes writing one file (docs/design.md §10).
enum class Role {
  kSerial,       // the only writer
  kMpiOwner,     // MPI rank 0: owns the journal, publishes its records as it appends them
  kMpiFollower,  // any other rank: follows the journal's tail, keeps its own data log
};

struct JournalOptions {
  std::string journal_path;
  // The file name the journal records (its base name); empty: the file's own.
  // A recovered copy keeps the original's, so the journal still binds to it.
  std::string target_name;
  RingOptions ring;
  IoEngine engine = IoEngine::kAuto;
  uint64_t checkpoint_bytes = uint64_t(64) << 20;
  // A write above the protected end shorter than this is journaled, not
  // written in place.  0: every such write in place (the tests' setting, to
  // exercise the in-place path with small writes).
  uint64_t inplace_min_bytes = uint64_t(64) << 10;
  RawMode raw_mode = RawMode::kInPlace;
  uint32_t data_log = 0;  // the data log this handle appends to (its MPI rank; 0 when serial)
  Role role = Role::kSerial;
  uint32_t ranks = 1;     // MPI: how many ranks, hence data logs, share the file
  // The raw layer's windows, 2^this bytes: the unit an MPI checkpoint splits
  // between ranks (write_raw_share).  Tests make them small.
  unsigned raw_window_shift = 20;
  // false: close leaves the file in log form (journal, data log, and the
  // guard at offset 0); the next read-write open or h5recover materializes.
  bool materialize_at_close = true;
  bool recover_on_open = true;  // false: refuse to open a file that needs recovery
  RecoveryMode recovery_mode = RecoveryMode::kPointInTime;
  Progress progress;  // told of bytes applied during recovery (h5recover's progress bar)
  std::function<Status(RecoveredImage&)> after_replay;
  // Where every file operation goes: the real file system unless a test puts
  // a fault-injecting or recording one behind the seam.  Not owned.
  FileSystem* fs = &posix_filesystem();
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
  bool passive = false;         // another handle owns the journal
};

inline constexpr const char* kBindingXattr = "user.h5journal";
// What a file left in log form holds at offset 0 instead of its first 8
// bytes (HDF5's signature, "\211HDF\r\n\032\n"), which its journal keeps:
// HDF5 without the driver finds no signature and refuses the file rather
// than misread it.
inline constexpr char kLogFormGuard[8] = {'\211', 'H', '5', 'J', '\r', '\n', '\032', '\n'};

// The name a journal records for `path`: its base name, cut to the format's limit.
std::string journal_target_name(const std::string& path);

// The binding attribute of a journaled file: the journal's UUID, generation
// and absolute path (journal-format.md §5).
struct Binding {
  std::array<uint8_t, 16> uuid{};
  uint64_t generation = 0;
  std::string journal_path;
};
// nullopt when the file carries no binding (or the filesystem has no xattrs).
Result<std::optional<Binding>> read_binding(File& file);
// kMissing if `base` is bound to a journal (named by its recorded path, or
// `journal`) that does not exist: the caller found none.
Status check_binding_not_missing(File& base, const std::string& journal);

class JournaledFile : private RecoveredImage {
 public:
  static Result<std::unique_ptr<JournaledFile>> open(const std::string& path, Access access,
                                                     const JournalOptions& opts);
  // Releases the files without committing: what a crash would leave.
  ~JournaledFile() override;

  Status read(uint64_t addr, std::span<std::byte> out) override;
  // Metadata.  Rank 0 writes all of it under MPI; a follower's are dropped.
  Status write(uint64_t addr, std::span<const std::byte> data, uint32_t tag);
  // Raw data, one vector write: pieces in the order HDF5 gives them.
  // Appended to the data log (RawMode::kLog, and kAuto for pieces that are
  // small or overwrite), else by the write-ahead rule, nearby pieces
  // gathered into windows as HDF5's sieve buffer would.
  Status write_raw(std::span<const RawPiece> pieces, uint32_t tag);
  Status write_raw(uint64_t addr, std::span<const std::byte> data, uint32_t tag) {
    RawPiece piece{addr, data};
    return write_raw({&piece, 1}, tag);
  }
  // HDF5's truncate: the file's size becomes `size`.  Takes effect at commit.
  Status set_size(uint64_t size);
  uint64_t size() const override { return logical_size_; }
  // A durable transaction boundary.  Afterwards, a crash brings the file back
  // exactly as it is now.
  Status commit();
  // Commit, checkpoint, remove the journal: the file is a plain file again.
  // With materialize_at_close false: commit and leave the file in log form.
  Status close();

  // --- a commit across MPI ranks (docs/design.md §10) ---
  // The steps, in order; after each, every rank learns whether all
  // succeeded, and a failure anywhere stops the rest.
  // 1. Follower: places its staged bytes, makes its in-place writes and data
  //    log durable, and hands over the DATA records the owner must commit
  //    for it (and data_log_bytes()).
  Result<std::vector<DataPayload>> prepare_commit();
  uint64_t data_log_bytes() const;
  // 2. Owner: commits the followers' DATA records with its own transaction.
  //    True if the image must now go into the file: a checkpoint is due
  //    (the followers' logs hold `followers_log_bytes`), or `closing` a
  //    file that was bound.
  Result<bool> commit_with(std::span<const DataPayload> followers, uint64_t followers_log_bytes, bool closing);
  // 3. Follower: follows the journal to the commit, or into the new
  //    generation after step 5.
  Status finish_commit();
  // 4. If step 2 said so, every rank: its share of the raw windows into the
  //    file, durable.
  Status write_raw_share();
  // 5. Owner: the overlay over them, then the new generation (a checkpoint)
  //    or the journal's removal (`closing`); or, with nothing to write,
  //    close() if `closing`.  Then followers step 3, or close() if closing.
  Status end_commit(bool materialize, bool closing);
  // MPI: this rank's staged bytes (staged_) in place now, at the end of a
  // raw write in collective mode: HDF5 fills chunks in one (each rank its
  // share) and writes their data in the next, perhaps from another rank,
  // and the fill must land first.
  Status place_staged();
  // Enters fail-stop with `why` (a commit that another rank could not
  // prepare): the file stays at its last commit.
  Status fail_stop(Status why) { return fail(std::move(why)); }
  // MPI, before a raw read: takes in what the other ranks appended to their
  // data logs since the last call.  MPI-IO lets a rank read another's
  // write after a barrier, before any commit; until its commit journals
  // it, such a write is only in its writer's data log.
  Status refresh_peers();

  const OpenReport& report() const { return report_; }
  // What this session has done (H5Fget_journal_stats).
  struct Stats {
    uint64_t commits = 0;
    uint64_t checkpoints = 0;
    uint64_t raw_bytes_logged = 0;
    uint64_t raw_index_bytes = 0;
    uint64_t raw_index_peak_bytes = 0;
  };
  Stats stats() const {
    Stats s = stats_;
    s.raw_index_bytes = raw_.memory_bytes();
    return s;
  }
  File& base() { return *base_; }
  const std::string& journal_path() const { return opts_.journal_path; }
  // "uring" or "sync" (io_uring may be unavailable); "none" without a journal open.
  const char* journal_engine() const { return journal_ ? journal_->engine_name() : "none"; }

 private:
  JournaledFile(std::unique_ptr<File> base, JournalOptions opts, bool read_only);
  Status patch(uint64_t addr, std::span<const std::byte> bytes) override;

  Status open_for_read();
  Status open_for_write(bool truncated);
  Status open_as_follower();
  // Follower: starts following the journal's current generation.
  Status follow_generation();
  // Follower: applies the journal's records appended since the last call.
  Status catch_up();
  void apply_followed(const Record& r);
  bool follower() const { return opts_.role == Role::kMpiFollower; }
  uint64_t generation() const { return follower() ? tail_->header().generation : writer_->header().generation; }
  // Reads data log `log`'s new records into peer_raw_ (those of the open
  // transaction: earlier ones are committed, in raw_).
  Status follow_peer(uint32_t log);
  // After a commit the peers' extents are in raw_, in the journal's order.
  void forget_peers();
  // The transaction a data-log record belongs to.
  uint64_t current_txn() const;
  // Owner: puts the records appended by this call where followers read them.
  Status publish();
  Status start_writing();
  // kMissing if the file is bound to a journal that does not exist.
  Status check_not_missing();
  // Reads, validates and binds an existing journal; fills plan_.
  Status load_journal();
  Status check_binding(const JournalHeader& h);
  Result<std::optional<Binding>> read_binding();
  Status replay_into_base();
  Status start_generation(uint64_t generation, uint64_t first_txn, std::array<uint8_t, 16> uuid);
  Status checkpoint();
  bool checkpoint_due() const;
  // checkpoint()'s end, once the image is durable in the file.
  Status end_checkpoint();
  // close()'s end, once the image is in the file.
  Status end_close();
  // The image of `raw` (this generation's extents, or a layer already
  // written) and the overlay over it, into the file; not synced.
  Status write_image_to_base(const RawLayer& raw);
  // Appends [addr, addr + data.size()) to the open transaction and the overlay.
  Status journal_bytes(uint64_t addr, std::span<const std::byte> data, uint32_t tag);
  // write() with the in-place threshold given: the part below the protected
  // end journaled, the rest in place unless shorter than inplace_min.
  Status write_by_rule(uint64_t addr, std::span<const std::byte> data, uint32_t tag, uint64_t inplace_min);
  // write_raw_by_mode's single piece under MPI (in place or journaled, as if
  // nothing were staged).
  Status write_piece_under_mpi(const RawPiece& p, uint32_t tag);
  // Raw pieces sorted by address, gathered into windows (read, patched,
  // written back), each written by the rule.
  Status write_windows(std::span<const RawPiece> pieces, uint32_t tag);
  // write_raw's choice by RawMode.
  Status write_raw_by_mode(std::span<const RawPiece> pieces, uint32_t tag);
  // set_size's work (the owner's or a serial writer's).
  Status resize(uint64_t size);
  // Pieces `in_place` picks are written by `write_in_place`; the runs of
  // pieces between them go to the data log, in order.
  Status log_all_but(std::span<const RawPiece> pieces, const std::function<bool(const RawPiece&)>& in_place,
                     const std::function<Status(const RawPiece&)>& write_in_place);
  // In-place writes and the data log durable, before a COMMIT names them.
  Status make_writes_durable(bool first_commit);
  // Raw pieces into the data log, as few patterns as their layout allows.
  Status append_raw(std::span<const RawPiece> pieces);
  Status append_pattern(const RawPattern& pattern, Gather bytes);
  // Whether a pattern about to be logged is staged (staged_) rather than indexed.
  bool stages(const RawPattern& pattern) const;
  bool all_in_new_space(std::span<const RawPiece> pieces) const;
  Status stage(const RawPattern& pattern, Gather bytes);
  // staged_'s bytes below `limit` in place (not yet durable); staged_ emptied.
  Status write_staged(uint64_t limit);
  // The checks every write makes (fail-stop, read-only, passive), then
  // BEGIN if no transaction is open and there are bytes to write.
  Status start_write(size_t bytes);
  Status close_in_log_form();
  // commit() without the checkpoint that may follow it.
  Status commit_transaction();
  Status fail(Status s);  // enters fail-stop and returns s
  // The error of a passive handle, or of an open refused for `holder`'s lock.
  Status busy_error(std::optional<int> holder = std::nullopt) const;
  std::string target_name() const;
  // Opens a transaction if none is open (BEGIN, and once a COMMENT naming the writer).
  Status begin_transaction();
  uint64_t protected_end() const { return std::max(committed_size_, journal_high_water_); }
  // Bytes of the journal, and of the data log.
  Status read_journal(uint64_t offset, std::span<std::byte> out);
  Status read_data_log(uint32_t log, uint64_t offset, std::span<std::byte> out);
  // Data log `log`, opened on first use (read-write unless read-only);
  // nullptr if it does not exist.
  Result<File*> data_log_file(uint32_t log);
  // Whether a committed DATA record's bytes in the data log match its CRC.
  Result<bool> data_matches(const Record& data);
  // Salvage: the data log's own DATA records of transactions [first, last].
  Result<std::vector<Record>> data_log_records(const JournalHeader& journal, uint64_t first, uint64_t last);
  Status start_data_log(const JournalHeader& h, bool fresh);
  // Stores the journal's UUID and generation in the file's binding attribute.
  Status set_binding();

  std::unique_ptr<File> base_;
  std::unique_ptr<File> journal_;
  std::unique_ptr<JournalWriter> writer_;
  std::vector<std::unique_ptr<File>> data_logs_;  // by number; [opts_.data_log] is this handle's
  std::unique_ptr<JournalWriter> data_writer_;
  JournalOptions opts_;
  bool read_only_;
  bool closed_ = false;
  OpenReport report_;
  std::optional<ReplayPlan> plan_;
  std::vector<std::byte> check_buffer_;  // data_matches' reads
  std::unique_ptr<JournalReader> tail_;   // follower: the journal, read as it grows
  uint64_t followed_txn_ = 0;             // follower: the transaction the owner has open (or will)
  std::vector<DataPayload> pending_index_;  // follower: DATA records for the owner's next commit
  uint64_t followers_log_bytes_ = 0;        // owner: the followers' data logs, as of the last commit
  std::vector<std::unique_ptr<JournalReader>> peer_logs_;  // MPI: other ranks' data logs, by number
  uint64_t peer_generation_ = 0;                           // the generation peer_logs_ read
  // MPI: the other ranks' extents of the open transaction, over the whole
  // image.  (Where a follower and rank 0 write the same bytes between two
  // commits, the follower's win, as they will in the journal's order.)
  RawLayer peer_raw_;

  // MPI: this rank's extents of the open transaction that were in new space
  // (above the protected end) when written, their bytes in staged_bytes_.
  // They go in place (write_staged), by this rank, and never into the
  // journal's index or a data log.  Invariant: raw_ holds nothing older that
  // overlaps them (raw_'s extents end below the protected end they were
  // above, and staging does not raise it), and no in-place write lands on
  // them (it is staged too); so the image is base, staged_, raw_, overlay.
  RawLayer staged_;
  std::vector<std::byte> staged_bytes_;  // staged_'s extents' bytes, packed, in staging order
  AlignedBuffer apply_run_;              // every apply's write buffer (replay.h), kept between calls
  RawLayer raw_{opts_.raw_window_shift};  // data-log extents (this generation), under the overlay
  ExtentMap overlay_;                 // file range -> journal offset (this generation)
  Stats stats_;
  std::vector<std::pair<uint64_t, std::vector<std::byte>>> memory_patches_;  // read-only recovery
  uint64_t logical_size_ = 0;
  uint64_t committed_size_ = 0;
  uint64_t journal_high_water_ = 0;
  bool dirty_ = false;                // changed since the last commit
  bool inplace_unsynced_ = false;     // in-place writes since the last base sync
  bool data_unsynced_ = false;        // data log records since the last data log sync
  bool first_commit_done_ = false;    // journal's directory entry and the binding are durable
  bool session_noted_ = false;
  bool binding_set_ = false;          // this session set the binding attribute
  Status failed_;                     // fail-stop: the first error that poisoned the file
};

// The collective commit (MpiSession::commit, which runs the same steps with
// MPI) for ranks that share one process: the explorer and the unit tests.
// Each step runs on every rank in rank order, and the first failure is
// every rank's outcome, as MpiSession::agree gives each rank the failure of
// the lowest failing rank.  ranks[0] is the owner.
Status commit_in_one_process(std::span<JournaledFile* const> ranks, bool closing);

}  // namespace h5j
