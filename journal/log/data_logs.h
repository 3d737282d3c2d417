// The data logs of one journal: where raw data goes in raw=log and raw=auto,
// and under MPI (format.h, THE DATA LOG).
//
// Data log 0 is <journal>.data (a serial writer's, or MPI rank 0's); data
// log n is <journal>.data.n (MPI rank n's).  Each handle appends to its own
// log only, and reads any: its own through its writer's ring (records not
// yet in the file), the others' from their files, opened on first use.
//
// Invariant: a data log's header carries its journal's generation, salt and
// UUID, so records of an older generation never validate as this one's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "file.h"
#include "journal_reader.h"
#include "journal_writer.h"

namespace h5j {

// Data log number `log` of the journal at `journal_path`.
inline std::string data_log_path_for(const std::string& journal_path, uint32_t log = 0) {
  return journal_path + ".data" + (log == 0 ? std::string() : "." + std::to_string(log));
}

// The numbers of the journal's data logs that exist, ascending.  Not always
// 0..n-1: under MPI every rank creates its own log as it opens, so a job
// killed in its open can leave log 2 without log 1.
Result<std::vector<uint32_t>> existing_data_logs(FileSystem& fs, const std::string& journal_path);

// Whether `path` is named as a data log is (data_log_path_for).
bool names_a_data_log(const std::string& path);

// Removes every data log of the journal, found by listing its directory;
// with `sync`, makes the removals durable when there were any.
Status remove_data_logs(FileSystem& fs, const std::string& journal_path, bool sync);

// Removes data logs 0 to `ranks` - 1, the ones a session of that many ranks
// makes, by name.  A close uses it: listing the directory would cost every
// close time in proportion to the files beside it (100,000 in a directory
// of time steps: 28 ms a close).  With `sync`, as above.
Status remove_data_logs_of_ranks(FileSystem& fs, const std::string& journal_path, uint32_t ranks, bool sync);

class DataLogSet {
 public:
  // `own` is the log this handle appends to; a read-only set opens every
  // log read-only and appends to none.
  DataLogSet(FileSystem& fs, std::string journal_path, uint32_t own, IoEngine engine, bool read_only)
      : fs_(fs), journal_path_(std::move(journal_path)), own_(own), engine_(engine), read_only_(read_only) {}
  ~DataLogSet() { writer_.reset(); }  // waits for writes in flight before the files close

  // --- reading any log ---
  // Data log `log`, opened on first use; nullptr if it does not exist.
  Result<File*> file(uint32_t log);
  Status read(uint32_t log, uint64_t offset, std::span<std::byte> out);
  // Whether a committed DATA record's bytes match its CRC (false if the log
  // ends before they do); kMissing if its log does not exist.
  Result<bool> matches(const Record& data);
  // Every data log that exists, synced: a recovery's, before it rewrites
  // the file from logs a killed writer may have left in the page cache.
  Status sync_every_log();
  // Salvage: every log's own DATA records of transactions [first, last]
  // that belong to `journal`'s generation, damage skipped.
  Result<std::vector<Record>> records_of(const JournalHeader& journal, uint64_t first, uint64_t last);

  // --- appending to this handle's log ---
  // Starts appending under header `h` (creating the log if needed); `fresh`
  // empties it first: a log left beside a new journal holds nothing anyone
  // needs, as its journal was removed at a clean close.
  Status start(const JournalHeader& h, bool fresh, RingOptions ring);
  bool appending() const { return writer_ != nullptr; }
  // Requires appending().
  JournalWriter& writer() {
    assert(writer_);
    return *writer_;
  }
  // Bytes of records in this generation of this handle's log (0 if none).
  uint64_t generation_bytes() const { return writer_ ? writer_->generation_bytes() : 0; }
  // Stops appending, once the writes in flight are done.
  void stop() { writer_.reset(); }
  // Stops appending and closes every log.
  void close() { (void)take_files(); }
  // Stops appending and hands over every open log, for its caller to close.
  std::vector<std::unique_ptr<File>> take_files() {
    writer_.reset();
    return std::exchange(files_, {});
  }

 private:
  FileSystem& fs_;
  std::string journal_path_;
  uint32_t own_;
  IoEngine engine_;
  bool read_only_;
  std::vector<std::unique_ptr<File>> files_;  // by number; opened on first use
  std::unique_ptr<JournalWriter> writer_;     // this handle's log's, while appending
  std::vector<std::byte> check_buffer_;       // matches()' reads, kept between calls
};

}  // namespace h5j
