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
// THE READERS FILE  <journal>.readers, 24 bytes:
//     0   8  magic "H5JREAD\n"
//     8   8  epoch, u64 little-endian
//    16   8  state, u64 little-endian: 0 readers welcome; 1 held off, while
//            a writer waits for the readers present to close before a
//            rewrite; 2 closed, by a writer about to unlink the file
// The epoch is even while no rewrite is under way, and odd during one; a
// writer makes it odd before a rewrite's first byte and even again once the
// new generation's header is written.  A file of 16 bytes (h5journal before the state) reads
// as state 0.
//
// A closing writer moves the epoch once more and marks the file closed just
// before it unlinks it: a reader holding the unlinked file would never see
// the next writer's epochs, so every snapshot on it must expire, and a
// reader that finds it closed registers with no writer and reads the file
// as a closed file is read, under HDF5's lock.
//
// A reader holds a shared lock on the readers file while it is open, loads
// its snapshot between two reads of the same epoch (waiting a little for
// an odd one to turn even), and after every read checks that the epoch has
// not moved: if it has, the snapshot is gone and the read fails (kExpired)
// rather than return a mixture.
//
// A writer, before a rewrite, asks for the exclusive lock (a probe, given
// back at once): free, nobody has a snapshot.  Held by readers, the writer
// holds off new readers, which wait (outside the lock) for the rewrite
// rather than take a snapshot it would expire, and lets those present
// finish: a checkpoint is put off (the journal grows) and a close or
// recovery waits, each for at most reader_wait.  Then the rewrite goes
// ahead, and the snapshots still open expire.  So a reader that opens,
// reads and closes within reader_wait never sees its snapshot expire, even
// with other readers always present; one open longer may.  A reader that
// dies drops its lock with its descriptors: the writer never waits for it.
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
//     the header only once it holds its lock: so a reader either holds the
//     lock at the probe, and is waited for, or finds itself held off (and
//     opens only after the rewrite, or after its wait, when its snapshot
//     may expire).  A probe that finds no reader is not undone by one that
//     comes after it.
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

namespace h5j {

// Absolute, for the writer and its readers alike: the writer opens it again
// by name at each rewrite, and the program may chdir between (HDF5's
// external-link tests do).
std::string readers_path_for(const std::string& journal_path);

inline constexpr char kReadersMagic[8] = {'H', '5', 'J', 'R', 'E', 'A', 'D', '\n'};
inline constexpr size_t kReadersFileSize = 24;
inline constexpr size_t kReadersFileSizeBeforeState = 16;
enum class ReadersState : uint64_t { kWelcome = 0, kHeldOff = 1, kClosed = 2 };

// The writer's side.
class ReadersFile {
 public:
  // The journal's readers file, created if it is missing.  It is opened
  // only for a probe or an epoch's change, both rare: a writer keeps no
  // descriptor on it (HDF5's family files open thousands of members).
  static Result<std::unique_ptr<ReadersFile>> open(FileSystem& fs, const std::string& journal_path);

  // Whether any reader holds a snapshot now.  False on a file system with no
  // lock other processes see: readers there cannot be told apart.
  bool readers_present();
  // Waits until no reader holds a snapshot, or `wait` has passed; returns
  // whether they are gone.
  bool wait_for_readers(std::chrono::milliseconds wait);
  // New readers wait for the coming rewrite, so that those present can
  // all close before it.  Until end_rewrite.
  Status hold_off_new_readers();
  // The epoch made odd: a rewrite begins, and any snapshot still open expires.
  Status begin_rewrite();
  // The epoch made even, and new readers let in: the new generation is in place.
  Status end_rewrite();
  // The epoch moved and the file marked closed, before the writer unlinks it.
  Status close_for_readers();
  const std::string& path() const { return path_; }

 private:
  ReadersFile(FileSystem& fs, std::string path, uint64_t epoch, ReadersState state)
      : fs_(fs), path_(std::move(path)), epoch_(epoch), state_(state) {}
  Status write_header(uint64_t epoch, ReadersState state);

  FileSystem& fs_;
  std::string path_;
  uint64_t epoch_;
  ReadersState state_;
};

// A reader's registration: its shared lock, and the epoch its snapshot was
// loaded under.
class ReaderRegistration {
 public:
  // nullptr (and ok) when the journal has no readers file (a writer of
  // an older h5journal) or a closed one: the snapshot is then unguarded.
  // While a writer holds new readers off, waits for it, up to `wait`.
  static Result<std::unique_ptr<ReaderRegistration>> register_reader(FileSystem& fs, const std::string& journal_path,
                                                                     std::chrono::milliseconds wait);

  // The epoch, once it is even or after `wait`.  A snapshot loaded under an
  // odd epoch is still exact: until the new generation starts, the journal
  // holds every commit the rewrite is writing into the file, and a rewrite
  // writes only bytes the journal covers.  It expires at the rewrite's end.
  // An odd epoch that stays odd is a rewrite cut short by a crash.
  // nullopt: the writer has closed the file since this registration.
  Result<std::optional<uint64_t>> stable_epoch(std::chrono::milliseconds wait);
  // Whether the epoch is still `epoch`: nothing this reader read was rewritten.
  Result<bool> unchanged_since(uint64_t epoch);

 private:
  explicit ReaderRegistration(std::unique_ptr<File> file) : file_(std::move(file)) {}
  std::unique_ptr<File> file_;  // holds the shared lock
};

}  // namespace h5j
