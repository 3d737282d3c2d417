#include "peer_logs.h"

namespace h5j {

Status PeerLogs::refresh(DataLogSet& logs, uint64_t generation, uint64_t open_txn) {
  if (generation != generation_) {
    readers_.clear();
    extents_.clear();
    generation_ = generation;
  }
  for (uint32_t log = 0; log < ranks_; ++log)
    if (log != own_) H5J_RETURN_IF_ERROR(follow(logs, log, generation, open_txn));
  return Status::ok();
}

Status PeerLogs::follow(DataLogSet& logs, uint32_t log, uint64_t generation, uint64_t open_txn) {
  if (readers_.size() <= log) readers_.resize(size_t(log) + 1);
  std::unique_ptr<JournalReader>& reader = readers_[log];
  if (!reader) {
    auto file = logs.file(log);
    if (!file) return file.status();
    if (*file == nullptr) return Status::ok();  // that rank has not opened yet
    auto opened = JournalReader::open(**file);
    // No header yet, or last generation's: the rank has not written in this one.
    if (!opened || (*opened)->header().generation != generation) return Status::ok();
    reader = std::move(*opened);
  }
  H5J_RETURN_IF_ERROR(reader->refresh());
  // The end so far, or a record the rank is still writing, ends the pass.
  return for_each_record(*reader, [&](const Record& r) {
    if (r.header.type == RecordType::kData && r.header.txn >= open_txn) extents_.insert(r.pattern, log, r.data_offset);
  });
}

}  // namespace h5j
