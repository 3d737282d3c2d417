#include "live_readers.h"

#include <array>
#include <cstdio>
#include <cstring>
#include <thread>

#include <signal.h>
#include <unistd.h>

#include "coding.h"
#include "crc32c.h"

namespace h5j {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kPoll(1);
// A reader waits at most this long for a rewrite under way, or for a writer
// of an older h5journal that holds it off with no deadline.
constexpr std::chrono::milliseconds kMostPatience(2000);
// How long an early write-back holds new readers off, at most: it lets them
// in when it ends, a few milliseconds later; this bounds the wait only if
// the writer dies in between.
constexpr std::chrono::milliseconds kWriteBackHold(1000);

struct Header {
  uint64_t epoch = 0;
  ReadersState state = ReadersState::kWelcome;
  uint64_t until_ns = 0;
  uint32_t writer_pid = 0;
  uint32_t writer_host = 0;
  uint64_t late_mark = 0;
  bool has_deadline = false;
  bool operator==(const Header&) const = default;
};

uint64_t wall_ns(WallClock::time_point t) {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

uint32_t this_host() {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  return crc32c(host, std::strlen(host));
}

Result<Header> read_header(File& file) {
  std::array<std::byte, kReadersFileSize> bytes{};
  auto n = file.read_at(0, bytes);
  if (!n) return n.status();
  if (*n == 0) return Header{};  // just created: its writer has yet to write epoch 0
  if (*n < kReadersFileSizeBeforeState || std::memcmp(bytes.data(), kReadersMagic, sizeof kReadersMagic) != 0)
    return Status(Code::kCorrupt, file.path() + " is not an h5journal readers file");
  Header h;
  h.epoch = get_field<readers_file::kEpoch>(bytes.data());
  uint64_t state = *n >= kReadersFileSizeBeforeDeadline ? get_field<readers_file::kState>(bytes.data()) : 0;
  if (state > uint64_t(ReadersState::kClosed)) return Status(Code::kCorrupt, file.path() + ": unknown readers state");
  h.state = ReadersState(state);
  h.has_deadline = *n >= kReadersWriterBytes;
  if (h.has_deadline) {
    h.until_ns = get_field<readers_file::kUntil>(bytes.data());
    h.writer_pid = get_field<readers_file::kWriterPid>(bytes.data());
    h.writer_host = get_field<readers_file::kWriterHost>(bytes.data());
  }
  if (*n >= kReadersFileSize) h.late_mark = get_field<readers_file::kLateMark>(bytes.data());
  return h;
}

// Whether the header's writer is known to be gone: its process has died,
// and it ran on this host.  A writer elsewhere, or of an older h5journal,
// is taken to live.
bool writer_gone(const Header& h) {
  if (!h.has_deadline || h.writer_pid == 0 || h.writer_host != this_host()) return false;
  if (pid_t(h.writer_pid) == getpid()) return false;
  return ::kill(pid_t(h.writer_pid), 0) != 0 && errno == ESRCH;
}

// Whether a reader that finds `h` registers: now, late (THE WRITER'S RULE),
// or not yet.  A rewrite under way is waited for until `patience`, so that
// the snapshot is not one that expires as it ends (one that a dead writer
// cut short never ends); so is a writer of an older h5journal, which holds
// readers off with no deadline.
enum class Admission { kNotYet, kNow, kLate };

Admission admit(const Header& h, Clock::time_point patience) {
  bool patient = Clock::now() < patience;
  if (writer_gone(h)) return Admission::kNow;
  if (h.epoch % 2 == 1 && patient) return Admission::kNotYet;
  if (h.state != ReadersState::kHeldOff) return Admission::kNow;
  if (!h.has_deadline) return patient ? Admission::kNotYet : Admission::kNow;
  return h.until_ns != 0 && wall_ns(WallClock::now()) >= h.until_ns ? Admission::kLate : Admission::kNotYet;
}

}  // namespace

std::string readers_path_for(const std::string& journal_path) { return absolute_name(journal_path + ".readers"); }

std::string seconds_text(std::chrono::duration<double> d) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", d.count());
  return text;
}

Result<std::unique_ptr<ReadersFile>> ReadersFile::open(FileSystem& fs, const std::string& journal_path) {
  auto file = fs.open(readers_path_for(journal_path), OpenMode::kCreate, IoEngine::kSync);
  if (!file) return file.status();
  auto size = (*file)->size();
  if (!size) return size.status();
  Header header;
  if (*size > 0) {
    auto found = read_header(**file);
    if (!found) return found.status();
    header = *found;
  }
  auto id = fs.id((*file)->path());
  std::unique_ptr<ReadersFile> readers(
      new ReadersFile(fs, (*file)->path(), header.epoch, id ? std::optional<FileId>(*id) : std::nullopt));
  readers->found_empty_ = *size == 0;
  // Closed by a writer that crashed before unlinking it: open again, on an
  // epoch no snapshot of it was loaded under.  Any header is written again,
  // naming this writer.
  uint64_t epoch = header.state == ReadersState::kClosed ? header.epoch + 2 : header.epoch;
  ReadersState state = header.state == ReadersState::kClosed ? ReadersState::kWelcome : header.state;
  H5J_RETURN_IF_ERROR(readers->write_header_to(file->get(), epoch, state, header.until_ns));
  return readers;
}

ReadersFile::ReadersFile(FileSystem& fs, std::string path, uint64_t epoch, std::optional<FileId> id)
    : fs_(fs),
      path_(std::move(path)),
      epoch_(epoch),
      id_(id),
      writer_pid_(uint32_t(getpid())),
      writer_host_(this_host()) {}

Result<std::unique_ptr<File>> ReadersFile::reopen(OpenMode mode) {
  auto file = fs_.open(path_, mode, IoEngine::kSync);
  if (!file && file.status().code() == Code::kMissing) return std::unique_ptr<File>();
  if (!file) return file.status();
  if (leads_elsewhere(fs_, path_, id_)) return std::unique_ptr<File>();
  return file;
}

Result<File*> ReadersFile::held() {
  if (!held_) {
    auto file = reopen(OpenMode::kReadWrite);
    if (!file) return file.status();
    held_ = std::move(*file);
  }
  return held_->get();
}

void ReadersFile::release() { held_.reset(); }

// The generation's byte is asked about without a lock, through the held
// descriptor during a rewrite.  Else (a commit's question, transaction.cc)
// a probe of its own, closed at once: where there is no byte-range lock it
// tries the whole-file lock, which goes with it.
bool ReadersFile::readers_present() {
  if (held_ && *held_) {
    auto of_this_generation = (*held_)->byte_locked(generation_lock_byte(epoch_));
    if (of_this_generation) return *of_this_generation;
  }
  auto probe = reopen(OpenMode::kReadWrite);
  if (!probe || !*probe) return false;
  auto of_this_generation = (*probe)->byte_locked(generation_lock_byte(epoch_));
  if (of_this_generation) return *of_this_generation;
  return (*probe)->try_lock(LockMode::kExclusive).code() == Code::kBusy;
}

Result<bool> ReadersFile::put_off_checkpoint(std::chrono::milliseconds reader_wait) {
  auto now = Clock::now();
  if (window_ && now < window_->end) {
    if (readers_present()) return true;
    window_.reset();
    return false;
  }
  // Held off before the probe, and before the mark is read (the invariants).
  H5J_RETURN_IF_ERROR(hold_off_until(WallClock::now() + 2 * reader_wait));
  auto mark = read_late_mark();
  if (!mark) return mark.status();
  bool opens = !window_ || *mark != window_->late_mark;  // a due checkpoint, or a reader registered late
  if (opens && readers_present()) {
    window_ = Window{now + reader_wait, *mark};
    return true;
  }
  window_.reset();
  return false;
}

Result<bool> ReadersFile::alone_for_rewrite() {
  if (window_) return false;  // a checkpoint is put off for the readers present
  // The hold's end only matters if this writer dies before it lets readers in.
  H5J_RETURN_IF_ERROR(hold_off_until(WallClock::now() + kWriteBackHold));
  if (!readers_present()) return true;
  H5J_RETURN_IF_ERROR(write_header(epoch_, ReadersState::kWelcome, 0));
  return false;
}

Result<ReadersFile::Wait> ReadersFile::wait_for_readers(std::chrono::milliseconds wait,
                                                        const std::function<void()>& waiting) {
  auto start = Clock::now();
  H5J_RETURN_IF_ERROR(hold_off_until(WallClock::now() + 2 * wait));
  Wait w;
  while (readers_present()) {
    if (!w.readers && waiting) waiting();
    w.readers = true;
    if (Clock::now() - start >= wait) {
      w.outlasted = true;
      break;
    }
    std::this_thread::sleep_for(kPoll);
  }
  w.waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  return w;
}

Status ReadersFile::hold_off_until(WallClock::time_point until) {
  return write_header(epoch_, ReadersState::kHeldOff, wall_ns(until));
}

Result<uint64_t> ReadersFile::read_late_mark() {
  auto file = held();
  if (!file) return file.status();
  if (!*file) return uint64_t(0);  // no reader of this writer's can register
  auto header = read_header(**file);
  if (!header) return header.status();
  return header->late_mark;
}

Status ReadersFile::begin_rewrite() {
  return epoch_ % 2 == 1 ? Status::ok() : write_header(epoch_ + 1, state_, until_ns_);
}

Status ReadersFile::end_rewrite() {
  window_.reset();
  bool done = epoch_ % 2 == 0 && state_ == ReadersState::kWelcome;
  return done ? Status::ok() : write_header(epoch_ + epoch_ % 2, ReadersState::kWelcome, 0);
}

Status ReadersFile::close_for_readers() { return write_header(epoch_ + 1, ReadersState::kClosed, 0); }

// One write of the writer's 40 bytes at offset 0: a reader's read of them,
// in the same page, sees all of it or none.  Never synced: readers live no
// longer than the page cache that holds it.
Status ReadersFile::write_header(uint64_t epoch, ReadersState state, uint64_t until_ns) {
  auto file = held();
  if (!file) return file.status();
  H5J_RETURN_IF_ERROR(write_header_to(*file, epoch, state, until_ns));
  if (state == ReadersState::kClosed || (epoch % 2 == 0 && state == ReadersState::kWelcome)) release();
  return Status::ok();
}

// `file` null: the readers file is gone, or another's now, and no reader
// of this writer's reads it.
Status ReadersFile::write_header_to(File* file, uint64_t epoch, ReadersState state, uint64_t until_ns) {
  std::array<std::byte, kReadersWriterBytes> bytes{};
  std::memcpy(bytes.data(), kReadersMagic, sizeof kReadersMagic);
  put_field<readers_file::kEpoch>(bytes.data(), epoch);
  put_field<readers_file::kState>(bytes.data(), uint64_t(state));
  put_field<readers_file::kUntil>(bytes.data(), until_ns);
  put_field<readers_file::kWriterPid>(bytes.data(), writer_pid_);
  put_field<readers_file::kWriterHost>(bytes.data(), writer_host_);
  if (file != nullptr) H5J_RETURN_IF_ERROR(file->write_at(0, bytes));
  epoch_ = epoch;
  state_ = state;
  until_ns_ = until_ns;
  return Status::ok();
}

// --- a reader ------------------------------------------------------------------

namespace {

// The readers file for a reader: for writing where it may, so that it can
// register late (THE WRITER'S RULE); else for reading, and it waits.
Result<std::unique_ptr<File>> open_for_reader(FileSystem& fs, const std::string& path) {
  auto file = fs.open(path, OpenMode::kReadWrite, IoEngine::kSync);
  if (file || file.status().code() == Code::kMissing) return file;
  return fs.open(path, OpenMode::kReadOnly, IoEngine::kSync);
}

Status lock_shared(File& file) {
  // Busy only for the instant of a writer's probe.
  Status locked = file.try_lock(LockMode::kShared);
  for (int tries = 0; locked.code() == Code::kBusy && tries < 200; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    locked = file.try_lock(LockMode::kShared);
  }
  return locked.code() == Code::kUnsupported ? Status::ok() : locked;
}

// Registers under `h`: its generation's byte locked, then (`late`) the
// mark written, then the header read again.  False if the writer wrote a
// new header meanwhile (its probe may have come before the lock), or the
// mark cannot be written (a reader without write permission waits for the
// writer instead).
Result<bool> register_under(File& file, const Header& h, bool late) {
  Status held = file.lock_byte_shared(generation_lock_byte(h.epoch));
  if (!held && held.code() != Code::kUnsupported) return held;
  if (late) {
    std::array<std::byte, readers_file::kLateMark.len> mark{};
    put_u64(mark.data(), wall_ns(WallClock::now()));
    if (!file.write_at(readers_file::kLateMark.at, mark)) return false;
  }
  auto again = read_header(file);
  if (!again) return again.status();
  again->late_mark = h.late_mark;
  return *again == h;
}

}  // namespace

Result<std::unique_ptr<ReaderRegistration>> ReaderRegistration::register_reader(FileSystem& fs,
                                                                                const std::string& journal_path,
                                                                                std::chrono::milliseconds wait) {
  auto patience = Clock::now() + std::min(wait, kMostPatience);
  for (;;) {
    auto file = open_for_reader(fs, readers_path_for(journal_path));
    if (!file && file.status().code() == Code::kMissing) return std::unique_ptr<ReaderRegistration>();
    if (!file) return file.status();
    H5J_RETURN_IF_ERROR(lock_shared(**file));
    auto header = read_header(**file);
    if (!header) return header.status();
    if (header->state == ReadersState::kClosed) return std::unique_ptr<ReaderRegistration>();
    Admission admission = wait.count() == 0 ? Admission::kNow : admit(*header, patience);
    if (admission != Admission::kNotYet) {
      auto registered = register_under(**file, *header, admission == Admission::kLate);
      if (!registered) return registered.status();
      if (*registered) return std::unique_ptr<ReaderRegistration>(new ReaderRegistration(std::move(*file), header->epoch));
    }
    file->reset();  // the locks go with the descriptor, out of the writer's way
    std::this_thread::sleep_for(kPoll);
  }
}

Result<bool> ReaderRegistration::unchanged_since(uint64_t epoch) {
  auto header = read_header(*file_);
  if (!header) return header.status();
  return header->epoch == epoch;
}

Result<bool> ReaderRegistration::snapshot_holds(uint64_t epoch) {
  if (!file_) return false;
  auto same = unchanged_since(epoch);
  if (same && !*same) file_.reset();
  return same;
}

}  // namespace h5j
