// An MPI rank's part of a shared file (docs/design.md §10): how a follower
// follows rank 0's journal, how every rank sees the others' data logs, and
// each rank's work in the steps of the collective commit
// (collective_commit.h, which runs them).
#include "journaled_file.h"

namespace h5j {

// --- a follower --------------------------------------------------------------

// Rank 0 opened (and recovered) the file before any follower opens it, so
// the journal and its header are there.
Status JournaledFile::open_as_follower() {
  auto journal = opts_.fs->open(opts_.journal_path, OpenMode::kReadOnly, IoEngine::kSync);
  if (!journal) return journal.status();
  journal_ = std::move(*journal);
  return follow_generation();
}

Status JournaledFile::follow_generation() {
  auto follower = JournalFollower::open(*journal_);
  if (!follower) return follower.status();
  follower_ = std::move(*follower);
  const JournalHeader& h = follower_->header();
  assert(staged_.empty());  // written in place at the commit before this generation
  base_->end_rewrite();      // a follower's share of a checkpoint (step 4) is in
  image_.start_generation();
  image_.committed_size = std::max(image_.committed_size, h.base_size);
  peers_.clear();
  H5J_RETURN_IF_ERROR(data_logs_.start(h, /*fresh=*/true, opts_.ring));
  return catch_up();
}

Status JournaledFile::catch_up() { return follower_->catch_up(image_, opts_.data_log); }

// --- every rank --------------------------------------------------------------

Status JournaledFile::refresh_peers() {
  return guarded([&] {
    if (!sharing_.publishes_records() || read_only_ || closed_) return Status::ok();  // as every rank does
    return peers_.refresh(data_logs_, generation(), current_txn());
  });
}

Status JournaledFile::place_staged() {
  return guarded([&] { return place_staged_below(UINT64_MAX); });
}

// --- the steps of the collective commit --------------------------------------

Result<PreparedIndex> JournaledFile::step1_follower_prepare() {
  return guarded([&]() -> Result<PreparedIndex> {
    H5J_RETURN_IF_ERROR(make_writes_durable(false));
    // A rank of a job that opened the file read-only takes part too, with
    // nothing to hand over.
    if (!follower_) return PreparedIndex{{}, 0};
    return follower_->prepare(data_logs_.generation_bytes());
  });
}

Result<bool> JournaledFile::step2_owner_commit(const PreparedIndex& followers, bool closing) {
  return guarded([&]() -> Result<bool> {
    if (!followers.records.empty() && txn_) {
      H5J_RETURN_IF_ERROR(txn_->begin());
      for (const DataPayload& d : followers.records) {
        H5J_RETURN_IF_ERROR(txn_->records().append_data(d));
        image_.logged(d.pattern, d.log, d.log_offset);
      }
      txn_->changed();
    }
    followers_log_bytes_ = followers.log_bytes;
    H5J_RETURN_IF_ERROR(commit_transaction());
    peers_.clear();  // the followers' extents are in the raw layer now
    // Every rank writes its share of a rewrite (step 4): it begins here.
    bool rewrite = closing && txn_ && opts_.materialize_at_close && first_commit_done_;
    if (!closing && checkpoint_due()) {
      auto deferred = defer_checkpoint();
      if (!deferred) return deferred.status();
      rewrite = !*deferred;
    }
    if (rewrite) H5J_RETURN_IF_ERROR(begin_rewrite(/*wait=*/closing));
    return rewrite;
  });
}

Status JournaledFile::step3_follower_follow() {
  return guarded([&] {
    auto changed = follower_->generation_changed();
    if (!changed) return changed.status();
    Status s = *changed ? follow_generation() : catch_up();
    peers_.clear();
    return s;
  });
}

// The overlay, which may lie over any bucket, is rank 0's, laid after every
// rank's share (step 5).
Status JournaledFile::step4_write_raw_share() {
  return guarded([&] {
    base_->begin_rewrite();  // rank 0 began the rewrite at step 2, for every rank
    uint32_t me = opts_.data_log;
    auto mine = [&](uint64_t bucket) {
      uint32_t log = image_.raw.sole_log(bucket);
      return log == me || (me == 0 && log >= opts_.ranks);
    };
    H5J_RETURN_IF_ERROR(apply_raw_layer(
        image_.raw, image_.committed_size,
        [this](uint32_t log, uint64_t off, std::span<std::byte> out) { return data_logs_.read(log, off, out); },
        *base_, GapFill::kLeave, mine, &apply_run_));  // other ranks write beside these buckets
    return opts_.ring.durable ? base_->sync_data() : Status::ok();
  });
}

Status JournaledFile::step5_owner_materialize(bool materialize, bool closing) {
  if (!materialize) return closing ? close() : guarded([] { return Status::ok(); });
  return guarded([&] {
    const RawLayer written;  // every rank's share is in the file
    H5J_RETURN_IF_ERROR(write_image_to_base(written));
    if (closing) return end_close();  // which syncs the file with the binding's removal
    if (opts_.ring.durable) H5J_RETURN_IF_ERROR(base_->sync_data());
    return end_checkpoint();
  });
}

}  // namespace h5j
