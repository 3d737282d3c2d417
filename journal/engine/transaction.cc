#include "transaction.h"

#include <algorithm>
#include <cassert>

namespace h5j {

Status PendingWrites::make_durable(WriteAheadFile& base, DataLogSet& logs, bool durable, bool whole_file) {
  if (durable && (in_place_ || whole_file)) H5J_RETURN_IF_ERROR(whole_file ? base.sync_all() : base.sync_data());
  in_place_ = false;
  started_ = {};
  if (logged_) H5J_RETURN_IF_ERROR(logs.writer().sync());
  logged_ = false;
  return Status::ok();
}

// Within the span counts as a rewrite, though it may fall in a gap between
// started writes: the cost is only a write left to the commit's sync.
bool PendingWrites::starts_writeback(uint64_t addr, uint64_t len) {
  if (started_.rewritten || len < File::kEarlyWritebackMin) return false;
  if (addr < started_.hi && addr + len > started_.lo) {
    started_.rewritten = true;
    return false;
  }
  started_.lo = std::min(started_.lo, addr);
  started_.hi = std::max(started_.hi, addr + len);
  return true;
}

Status Transaction::begin() { return writer_->in_transaction() ? Status::ok() : writer_->begin(); }

// A PLACED write changes the file below what a live reader reads.  A reader
// whose snapshot holds this commit reads its ZERO records as zeros,
// whatever goes in place; one whose snapshot is older (loaded at the start
// of the generation, before any ZERO record) would read the new bytes.  So
// writes go in place until the next commit only if no reader holds a
// snapshot now: probed after this COMMIT, so that a reader
// registering later loads a snapshot that holds it.
Status Transaction::commit(const PendingWrites& pending, const std::vector<InPlacePayload>* in_place,
                           const std::vector<UnwrittenSpace::Range>& unwritten,
                           const JournalWriter::CommitFacts& facts, JournalWriter::CommitSync sync,
                           const std::function<bool()>& readers_present) {
  assert(in_place ? !pending.has_logged() : !pending.any());  // THE ORDER OF DURABILITY
  assert(in_place || sync == JournalWriter::CommitSync::kFlush);
  (void)pending;
  H5J_RETURN_IF_ERROR(begin());
  if (in_place)
    for (const InPlacePayload& p : *in_place) H5J_RETURN_IF_ERROR(writer_->append_in_place(p));
  for (const UnwrittenSpace::Range& r : unwritten) H5J_RETURN_IF_ERROR(writer_->append_zero(r.addr, r.len));
  H5J_RETURN_IF_ERROR(writer_->commit(facts, sync));
  dirty_ = false;
  placed_allowed_ = !unwritten.empty() && !readers_present();
  return Status::ok();
}

Status Transaction::append_placed(uint64_t addr, uint64_t len) {
  assert(placed_allowed_);
  return writer_->append_placed(addr, len);
}

Status Transaction::start_generation(const JournalHeader& h) {
  assert(!writer_->in_transaction());
  placed_allowed_ = false;  // the new generation holds no ZERO record yet
  return writer_->reset(h);
}

}  // namespace h5j
