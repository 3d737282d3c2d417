#include "recovery.h"

#include "config.h"
#include "journaled_file.h"
#include "superblock.h"

namespace h5j {

std::function<Status(RecoveredImage&)> hdf5_recovery_fixups() {
  return [](RecoveredImage& image) { return clear_status_flags(image); };
}

JournalOptions journal_options_for(const std::string& file, const H5FD_journal_fapl_t& c, FileSystem& fs) {
  JournalOptions o;
  o.fs = &fs;
  o.journal_path = journal_path_for(file, c);
  o.ring = RingOptions{c.ring_buffers, size_t(c.buffer_size), bool(c.durable)};
  o.engine = c.io_engine == H5FD_JOURNAL_IO_URING ? IoEngine::kUring
             : c.io_engine == H5FD_JOURNAL_IO_SYNC ? IoEngine::kSync
                                                   : IoEngine::kAuto;
  o.checkpoint_bytes = c.checkpoint_bytes != 0 ? c.checkpoint_bytes : default_checkpoint_bytes(c.durable);
  o.reader_wait = std::chrono::milliseconds(c.reader_wait);
  o.durable_within = std::chrono::milliseconds(c.durable_within_ms);
  o.recover_on_open = c.recovery == H5FD_JOURNAL_RECOVERY_AUTO;
  o.materialize_at_close = c.materialize == H5FD_JOURNAL_MATERIALIZE_CLOSE;
  o.raw_mode = c.raw == H5FD_JOURNAL_RAW_LOG ? RawMode::kLog : c.raw == H5FD_JOURNAL_RAW_AUTO ? RawMode::kAuto
                                                                                              : RawMode::kInPlace;
  o.after_replay = hdf5_recovery_fixups();
  return o;
}

Result<OpenReport> recover_file(const std::string& file, const JournalOptions& options) {
  JournalOptions o = options;
  o.recover_on_open = true;
  o.materialize_at_close = true;  // recovery's result is a plain HDF5 file, whatever the writer chose
  o.after_replay = hdf5_recovery_fixups();
  // Without a journal a read-only open changes nothing and still reports a
  // journal that should exist and does not.
  Access access = o.fs->exists(o.journal_path) ? Access::kReadWrite : Access::kReadOnly;
  auto f = JournaledFile::open(file, access, o);
  if (!f) return f.status();
  OpenReport report = (*f)->report();
  H5J_RETURN_IF_ERROR((*f)->close());
  return report;
}

}  // namespace h5j
