#include "journal_follower.h"

namespace h5j {

Result<std::unique_ptr<JournalFollower>> JournalFollower::open(File& journal) {
  auto reader = JournalReader::open(journal);
  if (!reader) return reader.status();
  return std::unique_ptr<JournalFollower>(new JournalFollower(journal, std::move(*reader)));
}

Result<bool> JournalFollower::generation_changed() const {
  auto reader = JournalReader::open(journal_);
  if (!reader) return reader.status();
  return (*reader)->header().generation != tail_->header().generation;
}

Status JournalFollower::catch_up(ImageLayers& image, uint32_t own_log) {
  H5J_RETURN_IF_ERROR(tail_->refresh());
  return for_each_record(*tail_, [&](const Record& r) { apply(r, image, own_log); });
}

void JournalFollower::apply(const Record& r, ImageLayers& image, uint32_t own_log) {
  switch (r.header.type) {
    case RecordType::kBegin: open_txn_ = r.header.txn; return;
    case RecordType::kCommit:
      image.committed_size = r.commit.logical_size;
      open_txn_ = r.header.txn + 1;
      return;
    case RecordType::kComment:
    case RecordType::kInPlace: return;  // in the file already
    case RecordType::kWrite: image.journaled(r.write.address, r.write.length, r.data_offset); return;
    case RecordType::kZero: image.zeroed(r.write.address, r.write.length); return;
    case RecordType::kPlaced: image.placed(r.write.address, r.write.length); return;
    case RecordType::kData:
      if (r.data_log != own_log) image.logged(r.pattern, r.data_log, r.data_offset);
      return;
  }
}

}  // namespace h5j
