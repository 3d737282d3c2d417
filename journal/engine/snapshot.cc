#include "snapshot.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "journal_options.h"

namespace h5j {

// A reader keeps no lock on the journal: that is the writer's.  It
// registers with the readers file, which a writer, live or yet to come,
// consults, and loads under the epoch it registered at.
Result<Snapshot> Snapshot::load(FileSystem& fs, const std::string& journal_path, const std::string& file_path,
                                std::chrono::milliseconds reader_wait, const std::function<Status()>& load_journal) {
  constexpr int kAttempts = 100;
  Snapshot s;
  s.file_path_ = file_path;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto registration = ReaderRegistration::register_reader(fs, journal_path, reader_wait);
    if (!registration) return registration.status();
    s.registration_ = std::move(*registration);
    if (!s.registration_) {
      H5J_RETURN_IF_ERROR(load_journal());
      return s;
    }
    Status loaded = load_journal();
    auto same = s.registration_->unchanged_since(s.registration_->epoch());
    if (!same) return same.status();
    if (*same) {
      H5J_RETURN_IF_ERROR(loaded);
      s.epoch_ = s.registration_->epoch();
      return s;
    }
    // Rewritten while it was read: what was read may be a mixture, and even
    // a failure may be one.  Again, registered anew: the writer that moved
    // on has not seen this reader in its new generation.
  }
  return Status(Code::kBusy, "no snapshot of " + file_path + ": its writer rewrote it " + std::to_string(kAttempts) +
                                 " times while this open read " + journal_path,
                EWOULDBLOCK);
}

Status Snapshot::check(uint64_t txn) const {
  auto same = registration_->snapshot_holds(epoch_);
  if (!same) return same.status();
  if (*same) return Status::ok();
  return Status(Code::kExpired,
                "the snapshot of " + file_path_ + " this handle reads (transaction " + std::to_string(txn) +
                    ") is gone after " + seconds_text(registration_->held()) +
                    ": its writer rewrote the file (a checkpoint, a close or a recovery) once this reader had held it "
                    "longer than the writer's reader_wait (" + std::to_string(kDefaultReaderWait.count()) +
                    " ms unless its configuration sets another); close " +
                    file_path_ + " and open it again to read its newest commit, or raise the writer's reader_wait");
}

void Snapshot::lay_patches_onto(uint64_t addr, std::span<std::byte> out) const {
  for (const auto& [paddr, bytes] : patches_) {
    uint64_t lo = std::max(paddr, addr), hi = std::min(paddr + bytes.size(), addr + out.size());
    if (lo < hi) std::memcpy(out.data() + (lo - addr), bytes.data() + (lo - paddr), hi - lo);
  }
}

}  // namespace h5j
