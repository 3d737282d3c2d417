// Live readers: processes that read a file while a writer writes it, each
// seeing exactly one commit.
//
// A reader opens the file read-only through the driver and builds, in
// memory, the image of the journal's last commit over the file, as a
// read-only recovery does.  That image stays true while the writer goes on:
//   - a commit only appends to the journal;
//   - in-place writes go above the protected end (image_layers.h), which
//     never falls within a generation, so past the end of every snapshot
//     of the generation; or into space declared unwritten, which every
//     snapshot reads as zeros from its ZERO records (unwritten_space.h).
// Only a rewrite changes what a snapshot reads: a checkpoint, a close or a
// recovery writes committed bytes into the file, and a new generation
// starts the journal and data logs over.
//
// THE READERS FILE  <journal>.readers (its bytes: format.h, readers_file):
// the writer's epoch and state, which the writer alone writes, a late mark
// readers write, and one lock byte per generation.
// The epoch is even while no rewrite is under way, and odd during one; a
// writer makes it odd before a rewrite's first byte and even again once the
// new generation's header is written.  A reader of a file written before the
// deadline field waits at most 2 s.
//
// A closing writer moves the epoch once more and marks the file closed just
// before it unlinks it: a reader holding the unlinked file would never see
// the next writer's epochs, so every snapshot on it must expire, and a
// reader that finds it closed registers with no writer and reads the file
// as a closed file is read, under HDF5's lock.
//
// A reader holds a shared lock on the readers file and one on its
// generation's byte while its snapshot lasts, loads the snapshot between
// two reads of the same epoch, and after every read checks that the epoch
// has not moved: if it has, the snapshot is gone, the read fails (kExpired)
// rather than return a mixture, and the locks go.  The writer asks only
// whether a reader holds the byte of the generation it is about to rewrite:
// a reader whose snapshot is of an older generation has already expired,
// and waiting for it (an interactive session left open on the file, say)
// would hold every checkpoint off for nothing.  Where the file system has
// no byte-range lock, the whole-file lock stands in, and any reader counts.
//
// THE WRITER'S RULE, in time.  A checkpoint comes due at a commit; the
// writer holds new readers off and asks whether the generation's byte is
// locked (F_OFD_GETLK, which takes no lock): free, nobody has a snapshot of
// this generation, and it checkpoints.  Held, it puts the
// checkpoint off for reader_wait, going on committing into a journal that
// grows, and checkpoints at the first commit that finds the readers gone or
// the window over.  New readers wait, outside the lock, for the checkpoint's
// end, and then register: the next window starts after they did.  So every
// snapshot gets at least reader_wait from its registration, and a reader
// that opens, reads and closes within reader_wait is never cut off, however
// often checkpoints come due.  A bound in bytes could not promise that: a
// writer committing 50 KiB of metadata a thousand times a second passes
// 4 x checkpoint_bytes of 1 MiB in 80 ms.
//
// A writer that commits nothing after its window ends (computing, or
// stopped) leaves readers held off.  They wait until the window's end plus
// reader_wait (the "held off until" field), then register late: each writes
// the late mark, and reads the header again; unchanged, it is registered,
// else (the writer moved on meanwhile) it waits again.  The writer, at its
// first commit after a window, first writes a new "held off until" (no
// reader registers late under the old one from then on), then reads the
// mark: changed, some reader registered late, and it opens one more window
// for it rather than cut it off.  A writer that is gone (its process has
// died, on this host) holds nobody off: readers register at once.
//
// The journal's growth is bounded by time: past checkpoint_bytes it grows
// only by the commits of one window (reader_wait), and a new window opens
// only for a reader that registered late, after the writer had committed
// nothing for reader_wait past the previous one.  A reader that dies drops
// its lock with its descriptors: the writer never waits for it.
//
// Why expiry is made rare rather than merely clean: an expired snapshot
// fails a read in the middle of some HDF5 operation, and HDF5's error
// paths are not all sound (2.2.0's H5A__dense_iterate, failing a read,
// trips an assertion in H5A__attr_release_table, which Debian's build
// keeps, and the reader aborts).
//
// Invariants:
//   - Between a reader's two epoch reads around its load, and from then
//     until its last check, no byte it read was rewritten, or the epoch
//     moved.
//   - A writer holds new readers off before it probes, and a reader reads
//     the header again once it holds its generation's byte, and registers
//     only if nothing changed: so a reader either holds the byte at the
//     probe, and is waited for, or finds itself held off.  A probe that
//     finds no reader is not undone by one that comes after it.
//   - A reader registers late only under a header it read again after
//     writing the mark, and the writer reads the mark only after writing a
//     new header: so the writer sees every late registration that stands.
//
// Worked example, checkpoint_bytes=1M, reader_wait=5000, a writer
// committing 50 KiB a millisecond.  t=0: reader A registers.  t=20 ms: the
// journal passes 1 MiB, the checkpoint comes due; the writer holds new
// readers off and finds A's lock: window until t=5020 ms.  t=30 ms: reader
// B arrives, finds itself held off, and waits.  t=2 s: A closes; the
// writer's next commit probes, finds no lock, and checkpoints (A never saw
// it); its end lets B in, and B's snapshot gets its own 5 s from the next
// due checkpoint on.  Had A stayed open past t=5020 ms, the first commit
// after it would have checkpointed and A's next read would fail, naming how
// long A held its snapshot and reader_wait.  Meanwhile the journal grew by
// what the writer committed in 2 s: 100 MB.
//
// Reads and writes are in one page cache (one host) or a file system
// coherent across hosts (Lustre, GPFS); NFS's close-to-open caching is not
// coherent enough for readers on other hosts.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "file.h"
#include "format.h"

namespace h5j {

// Absolute, for the writer and its readers alike: the writer opens it again
// by name at each rewrite, and the program may chdir between (HDF5's
// external-link tests do).
std::string readers_path_for(const std::string& journal_path);

// "1.2 s": how long a reader held its snapshot, or a writer waited for readers.
std::string seconds_text(std::chrono::duration<double> d);

// The byte a reader of a snapshot loaded under `epoch` holds locked.  An odd
// epoch (a rewrite under way) counts as the generation being rewritten.
inline uint64_t generation_lock_byte(uint64_t epoch) { return kGenerationLockFirst + (epoch / 2) % kGenerationLocks; }
enum class ReadersState : uint64_t { kWelcome = 0, kHeldOff = 1, kClosed = 2 };
using WallClock = std::chrono::system_clock;  // shared by every process of a host, and across coherent hosts

// The writer's side.
class ReadersFile {
 public:
  // The journal's readers file, created if it is missing.  The writer keeps
  // a descriptor on it only while it holds readers off or rewrites the file:
  // a checkpoint's or a close's headers and probes go through one open, and
  // between rewrites it holds none (HDF5's family files open thousands of
  // members).
  static Result<std::unique_ptr<ReadersFile>> open(FileSystem& fs, const std::string& journal_path);

  // Whether any reader holds a snapshot now.  False on a file system with no
  // lock other processes see: readers there cannot be told apart.
  bool readers_present();
  // At a commit whose checkpoint is due: whether to put it off, for the
  // readers present (THE WRITER'S RULE above).  New readers are held off
  // from the first call until end_rewrite.
  Result<bool> put_off_checkpoint(std::chrono::milliseconds reader_wait);
  // Before an early write-back (early_write_back.cc): holds new readers
  // off and probes, as a due checkpoint does, but never waits and opens no
  // window.  True if no reader holds a snapshot (new readers stay held off
  // until end_rewrite); else they are let in again at once.
  Result<bool> alone_for_rewrite();
  // Before a close or a recovery: holds new readers off and waits until no
  // reader holds a snapshot, or `wait` has passed.  `waiting` is told once,
  // when the first probe finds readers.
  struct Wait {
    bool readers = false;  // some were present
    bool outlasted = false;  // some were still present when the wait ended
    std::chrono::milliseconds waited{0};
  };
  Result<Wait> wait_for_readers(std::chrono::milliseconds wait, const std::function<void()>& waiting);
  // The epoch made odd: a rewrite begins, and any snapshot still open expires.
  Status begin_rewrite();
  // The epoch made even, and new readers let in: the new generation is in place.
  Status end_rewrite();
  // The epoch moved and the file marked closed, before the writer unlinks it.
  Status close_for_readers();
  const std::string& path() const { return path_; }
  // Whether open() found it empty: made by this writer (or left so by a
  // writer that died before writing its header), which an open refused
  // after it removes.
  bool found_empty() const { return found_empty_; }
  // Its name since its directory moved (JournaledFile::follow_moved_journal).
  void moved_to(std::string path) {
    path_ = std::move(path);
    release();
  }

 private:
  struct Window {
    std::chrono::steady_clock::time_point end;
    uint64_t late_mark;  // as read when the window opened
  };
  ReadersFile(FileSystem& fs, std::string path, uint64_t epoch, std::optional<FileId> id);
  // The readers file by its name, for a probe or a header, or null where the
  // name leads to another file by now, or to none: moved away with its
  // directory while the writer works (mv run/ run.old/), it may be another
  // writer's, which this one must leave alone, and through which no reader
  // finds this one.  The writer goes on without readers, as sec2's writer
  // goes on in a moved directory; readers that open the file by its new
  // name are not held off (design.md §6).
  Result<std::unique_ptr<File>> reopen(OpenMode mode);
  // The descriptor held from a rewrite's first header until readers are let
  // in again (a welcome header at an even epoch: end_rewrite, or
  // alone_for_rewrite finding readers) or the file is closed for them;
  // opened by reopen, and null where reopen's is.  Invariant: held only
  // while the last header written holds readers off, rewrites or closes.
  Result<File*> held();
  void release();
  Status hold_off_until(WallClock::time_point until);
  Result<uint64_t> read_late_mark();
  Status write_header(uint64_t epoch, ReadersState state, uint64_t until_ns);
  // The same through `file`, already open (the first header, by open()).
  Status write_header_to(File* file, uint64_t epoch, ReadersState state, uint64_t until_ns);

  FileSystem& fs_;
  std::string path_;
  bool found_empty_ = false;
  uint64_t epoch_;
  std::optional<FileId> id_;  // the file made or found at open
  const uint32_t writer_pid_;   // who writes the headers: this process, on this host
  const uint32_t writer_host_;
  // While readers are held off or a rewrite is under way; the descriptor in
  // it is null where the file is gone, or another's now (reopen).
  std::optional<std::unique_ptr<File>> held_;
  ReadersState state_ = ReadersState::kWelcome;
  uint64_t until_ns_ = 0;
  std::optional<Window> window_;  // while a checkpoint is put off
};

// A reader's registration: its shared lock, and the epoch its snapshot was
// loaded under.
class ReaderRegistration {
 public:
  // nullptr (and ok) when the journal has no readers file (a writer of
  // an older h5journal) or a closed one: the snapshot is then unguarded.
  // While a writer holds new readers off, waits for it (THE WRITER'S RULE),
  // and while a rewrite is under way, for up to `wait` (at most 2 s); with
  // `wait` 0 it registers at once, and its snapshot may expire at the
  // coming checkpoint.  A snapshot loaded under an odd epoch (after the wait,
  // or with a writer that is gone) is still exact: until the new generation
  // starts, the journal holds every commit the rewrite is writing into the
  // file, and a rewrite writes only bytes the journal covers.  It expires at
  // the rewrite's end.
  static Result<std::unique_ptr<ReaderRegistration>> register_reader(FileSystem& fs, const std::string& journal_path,
                                                                     std::chrono::milliseconds wait);

  // The epoch this reader registered under, which its snapshot is loaded at.
  uint64_t epoch() const { return epoch_; }
  // Whether the epoch is still `epoch`: nothing this reader read was
  // rewritten.  For the load, which may try again under a newer epoch.
  Result<bool> unchanged_since(uint64_t epoch);
  // After the load: whether the snapshot loaded under `epoch` still holds.
  // Once it does not, it never will again (a later writer's readers file may
  // reach the same epoch), and the lock goes with the descriptor: a snapshot
  // that is gone holds no later checkpoint off.
  Result<bool> snapshot_holds(uint64_t epoch);
  // How long this reader has held its registration.
  std::chrono::steady_clock::duration held() const { return std::chrono::steady_clock::now() - registered_; }

 private:
  ReaderRegistration(std::unique_ptr<File> file, uint64_t epoch) : file_(std::move(file)), epoch_(epoch) {}
  std::unique_ptr<File> file_;  // holds the shared locks; null once the snapshot is gone
  uint64_t epoch_;
  std::chrono::steady_clock::time_point registered_ = std::chrono::steady_clock::now();
};

}  // namespace h5j
