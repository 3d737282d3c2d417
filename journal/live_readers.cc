#include "live_readers.h"

#include <array>
#include <cstring>
#include <filesystem>
#include <thread>

#include "coding.h"

namespace h5j {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kPoll(5);

struct Header {
  uint64_t epoch = 0;
  ReadersState state = ReadersState::kWelcome;
};

Result<Header> read_header(File& file) {
  std::array<std::byte, kReadersFileSize> bytes{};
  auto n = file.read_at(0, bytes);
  if (!n) return n.status();
  if (*n == 0) return Header{};  // just created: its writer has yet to write epoch 0
  if (*n < kReadersFileSizeBeforeState || std::memcmp(bytes.data(), kReadersMagic, sizeof kReadersMagic) != 0)
    return Status(Code::kCorrupt, file.path() + " is not an h5journal readers file");
  uint64_t state = *n >= kReadersFileSize ? get_u64(bytes.data() + 16) : 0;
  if (state > uint64_t(ReadersState::kClosed)) return Status(Code::kCorrupt, file.path() + ": unknown readers state");
  return Header{get_u64(bytes.data() + 8), ReadersState(state)};
}

}  // namespace

std::string readers_path_for(const std::string& journal_path) {
  std::string path = journal_path + ".readers";
  std::error_code ec;
  auto absolute = std::filesystem::absolute(path, ec);
  return ec ? path : absolute.string();
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
  std::unique_ptr<ReadersFile> readers(new ReadersFile(fs, (*file)->path(), header.epoch, header.state));
  // Closed by a writer that crashed before unlinking it: open again, on an
  // epoch no snapshot of it was loaded under.
  if (header.state == ReadersState::kClosed)
    H5J_RETURN_IF_ERROR(readers->write_header(header.epoch + 2, ReadersState::kWelcome));
  else if (*size < kReadersFileSize)
    H5J_RETURN_IF_ERROR(readers->write_header(header.epoch, header.state));
  return readers;
}

// A probe on a descriptor of its own, closed at once: the lock goes with it.
bool ReadersFile::readers_present() {
  auto probe = fs_.open(path_, OpenMode::kReadWrite, IoEngine::kSync);
  return probe && (*probe)->try_lock(LockMode::kExclusive).code() == Code::kBusy;
}

bool ReadersFile::wait_for_readers(std::chrono::milliseconds wait) {
  auto deadline = Clock::now() + wait;
  while (readers_present()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPoll);
  }
  return true;
}

Status ReadersFile::hold_off_new_readers() {
  return state_ == ReadersState::kHeldOff ? Status::ok() : write_header(epoch_, ReadersState::kHeldOff);
}

Status ReadersFile::begin_rewrite() { return epoch_ % 2 == 1 ? Status::ok() : write_header(epoch_ + 1, state_); }

Status ReadersFile::end_rewrite() {
  bool done = epoch_ % 2 == 0 && state_ == ReadersState::kWelcome;
  return done ? Status::ok() : write_header(epoch_ + epoch_ % 2, ReadersState::kWelcome);
}

Status ReadersFile::close_for_readers() { return write_header(epoch_ + 1, ReadersState::kClosed); }

// One write of 24 bytes at offset 0: a reader's read of them, in the same
// page, sees all of it or none.  Never synced: readers live no longer than
// the page cache that holds it.
Status ReadersFile::write_header(uint64_t epoch, ReadersState state) {
  std::array<std::byte, kReadersFileSize> bytes{};
  std::memcpy(bytes.data(), kReadersMagic, sizeof kReadersMagic);
  put_u64(bytes.data() + 8, epoch);
  put_u64(bytes.data() + 16, uint64_t(state));
  auto file = fs_.open(path_, OpenMode::kReadWrite, IoEngine::kSync);
  if (!file) return file.status();
  H5J_RETURN_IF_ERROR((*file)->write_at(0, bytes));
  epoch_ = epoch;
  state_ = state;
  return Status::ok();
}

// --- a reader ------------------------------------------------------------------

Result<std::unique_ptr<ReaderRegistration>> ReaderRegistration::register_reader(FileSystem& fs,
                                                                                const std::string& journal_path,
                                                                                std::chrono::milliseconds wait) {
  auto deadline = Clock::now() + wait;
  for (;;) {
    auto file = fs.open(readers_path_for(journal_path), OpenMode::kReadOnly, IoEngine::kSync);
    if (!file && file.status().code() == Code::kMissing) return std::unique_ptr<ReaderRegistration>();
    if (!file) return file.status();
    // Shared: busy only for the instant of a writer's probe.
    Status locked = (*file)->try_lock(LockMode::kShared);
    for (int tries = 0; locked.code() == Code::kBusy && tries < 200; ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      locked = (*file)->try_lock(LockMode::kShared);
    }
    if (!locked && locked.code() != Code::kUnsupported) return locked;
    // Read under the lock: held off after this read, the writer's probe
    // finds this reader and waits for it.
    auto header = read_header(**file);
    if (!header) return header.status();
    if (header->state == ReadersState::kClosed) return std::unique_ptr<ReaderRegistration>();
    if (header->state == ReadersState::kWelcome || Clock::now() >= deadline)
      return std::unique_ptr<ReaderRegistration>(new ReaderRegistration(std::move(*file)));
    file->reset();  // the lock goes with the descriptor, out of the writer's way
    std::this_thread::sleep_for(kPoll);
  }
}

Result<std::optional<uint64_t>> ReaderRegistration::stable_epoch(std::chrono::milliseconds wait) {
  auto deadline = Clock::now() + wait;
  for (;;) {
    auto header = read_header(*file_);
    if (!header) return header.status();
    if (header->state == ReadersState::kClosed) return std::optional<uint64_t>();
    if (header->epoch % 2 == 0 || Clock::now() >= deadline) return std::optional<uint64_t>(header->epoch);
    std::this_thread::sleep_for(kPoll);
  }
}

Result<bool> ReaderRegistration::unchanged_since(uint64_t epoch) {
  auto header = read_header(*file_);
  if (!header) return header.status();
  return header->epoch == epoch;
}

}  // namespace h5j
