// What a read-only open reads: the journal's last commit over the file,
// loaded under the epoch of the readers file it registered with, checked
// after every read, and the in-memory patches of a read-only recovery (a
// read-only open modifies no file).  The protocol with the writer is
// readers/live_readers.h's.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "file.h"
#include "live_readers.h"

namespace h5j {

class Snapshot {
 public:
  Snapshot() = default;  // a writer's handle: no snapshot, nothing to check

  // Registers with the journal's readers file and runs `load_journal`
  // (which reads the journal's last commit into the image) until one load
  // saw no rewrite.  Without a readers file (a writer of an older
  // h5journal), or with a closed one (read as a closed file is, under
  // HDF5's lock), `load_journal` runs once and the snapshot is not live.
  static Result<Snapshot> load(FileSystem& fs, const std::string& journal_path, const std::string& file_path,
                               std::chrono::milliseconds reader_wait, const std::function<Status()>& load_journal);

  // Registered with a writer's readers file: reads must be checked.
  bool live() const { return registration_ != nullptr; }
  // After a read of a live snapshot: kExpired once a rewrite began, since
  // the bytes read may be the rewrite's.  `txn` names the commit read.
  Status check(uint64_t txn) const;
  // The handle closes: its snapshot holds the writer off no longer.
  void release() { registration_.reset(); }

  // A read-only recovery's fix-ups (after_replay), held here and laid over
  // every read.
  void patch(uint64_t addr, std::span<const std::byte> bytes) {
    patches_.emplace_back(addr, std::vector<std::byte>(bytes.begin(), bytes.end()));
  }
  void lay_patches_onto(uint64_t addr, std::span<std::byte> out) const;

 private:
  std::string file_path_;  // for messages
  std::unique_ptr<ReaderRegistration> registration_;
  uint64_t epoch_ = 0;  // the one the snapshot was loaded under
  std::vector<std::pair<uint64_t, std::vector<std::byte>>> patches_;
};

}  // namespace h5j
