// An MPI rank's part of a shared file (docs/design.md §10): how a follower
// follows rank 0's journal, how every rank sees the others' data logs, and
// each rank's work in the steps of the collective commit
// (collective_commit.h, which runs them).
#include <algorithm>

#include "journaled_file.h"

namespace h5j {

// --- a follower --------------------------------------------------------------

// Rank 0 opened (and recovered) the file before any follower opens it, so
// the journal and its header are there.
Status JournaledFile::open_as_follower() {
  auto journal = opts_.fs->open(opts_.journal_path, OpenMode::kReadOnly, IoEngine::kSync);
  if (!journal) return journal.status();
  journal_ = std::move(*journal);
  H5J_RETURN_IF_ERROR(follow_generation());
  // durable_within: this rank's own writes synced by a thread of its own
  // (followers_durable.h).
  if (!opts_.ring.durable || opts_.durable_within.count() == 0) return Status::ok();
  H5J_RETURN_IF_ERROR(start_background_sync(false));
  base_->track_in_place(true);
  return Status::ok();
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

Result<PreparedIndex> JournaledFile::step1_follower_prepare(bool closing) {
  return guarded([&]() -> Result<PreparedIndex> {
    ++commit_seq_;
    durable_now_ = closing || sync_next_commit_;
    PreparedIndex mine;
    H5J_RETURN_IF_ERROR(hand_over_writes(mine));
    // A rank of a job that opened the file read-only takes part too, with
    // nothing to hand over.
    if (!follower_) return mine;
    PreparedIndex records = follower_->prepare(data_logs_.generation_bytes());
    mine.records = std::move(records.records);
    mine.log_bytes = records.log_bytes;
    return mine;
  });
}

// Under durable_within a follower's in-place bytes need no sync before rank
// 0's COMMIT when INPLACE records name them (with the conditions of
// in_place_records); its thread syncs them within the interval.  Its data
// log, and any commit rank 0 wants durable everywhere, it syncs now; rank
// 0 still learns where its bytes are, to check that no other rank's
// INPLACE records name them (ranks_may_vouch).
Status JournaledFile::hand_over_writes(PreparedIndex& mine) {
  left_to_background_ = false;
  if (!background_) return make_writes_durable(false);
  H5J_RETURN_IF_ERROR(background_->failure());  // a sync of its own that failed stops the job here
  H5J_RETURN_IF_ERROR(place_staged_below(UINT64_MAX));
  auto in_place = in_place_records({});
  if (!in_place) return in_place.status();
  first_commit_done_ = true;  // the job's first commit is durable on every rank (sync_next_commit_)
  if (*in_place) {
    mine.in_place = std::move(**in_place);
    left_to_background_ = true;
    const uint64_t told = base_->in_place().told_bytes();
    base_->forget_in_place();
    pending_.committed_unsynced();
    background_->written(commit_seq_, commit_seq_, untold_of(mine.in_place, told));
    mine.durable_through = background_->durable().txn;
    return Status::ok();
  }
  const InPlaceWrites& writes = base_->in_place();
  mine.in_place_unknown = writes.too_many();
  for (const InPlaceWrites::Extent& e : writes.extents()) mine.in_place_synced.push_back({e.addr, e.len, 0});
  mine.durable_through = commit_seq_;
  return sync_own_writes();
}

Status JournaledFile::sync_own_writes() {
  H5J_RETURN_IF_ERROR(make_writes_durable(false));
  base_->forget_in_place();
  background_->made_durable({commit_seq_, commit_seq_});
  return Status::ok();
}

Status JournaledFile::step1_follower_sync() {
  return guarded([&] {
    if (!left_to_background_) return Status::ok();
    left_to_background_ = false;
    return sync_own_writes();
  });
}

Result<OwnerWord> JournaledFile::step1_owner_hear(const PreparedIndex& followers, bool closing) {
  return guarded([&]() -> Result<OwnerWord> {
    ++commit_seq_;
    OwnerWord word;
    if (background_) {
      H5J_RETURN_IF_ERROR(place_staged_below(UINT64_MAX));
      word.sync_now = !ranks_may_vouch(followers);
    }
    durable_now_ = closing || sync_next_commit_ || word.sync_now;
    return word;
  });
}

// A CRC one rank took is of the bytes it wrote.  Where another rank wrote
// the same bytes in this transaction (HDF5 has rank 0 fill a chunk, then
// another rank write its data over the fill), or rank 0 journaled a write
// over them, the file or the image no longer holds what the CRC says, and
// recovery would refuse a commit whose bytes are all there.  Each rank's
// extents are disjoint, so any overlap in their union is two ranks'.
bool JournaledFile::ranks_may_vouch(const PreparedIndex& followers) const {
  const InPlaceWrites& own = base_->in_place();
  if (followers.in_place_unknown || own.too_many()) return false;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [first, end) of every rank's in-place bytes
  for (const InPlaceWrites::Extent& e : own.extents()) ranges.emplace_back(e.addr, e.end());
  for (const auto* list : {&followers.in_place, &followers.in_place_synced})
    for (const InPlacePayload& p : *list) ranges.emplace_back(p.address, p.address + p.length);
  std::sort(ranges.begin(), ranges.end());
  uint64_t end = 0;
  for (const auto& [first, last] : ranges) {
    if (first < end) return false;
    end = std::max(end, last);
  }
  for (const InPlacePayload& p : followers.in_place) {
    auto pieces = only_in_file({p.address, p.length, 0, true}, {});
    if (pieces.size() != 1 || pieces[0].addr != p.address || pieces[0].len != p.length) return false;
  }
  return true;
}

Result<OwnerWord> JournaledFile::step2_owner_commit(const PreparedIndex& followers, bool closing) {
  return guarded([&]() -> Result<OwnerWord> {
    H5J_RETURN_IF_ERROR(commit_with_followers(followers));
    peers_.clear();  // the followers' extents are in the raw layer now
    return owner_word(closing);
  });
}

// Their DATA records journaled with rank 0's transaction; their INPLACE
// records in its COMMIT unless they synced their writes for it.
Status JournaledFile::commit_with_followers(const PreparedIndex& followers) {
  if ((!followers.records.empty() || !followers.in_place.empty()) && txn_) {
    H5J_RETURN_IF_ERROR(txn_->begin());
    for (const DataPayload& d : followers.records) {
      H5J_RETURN_IF_ERROR(txn_->records().append_data(d));
      image_.logged(d.pattern, d.log, d.log_offset);
    }
    txn_->changed();
  }
  followers_log_bytes_ = followers.log_bytes;
  followers_in_place_ = followers.in_place;
  followers_synced_ = durable_now_ || followers.durable_through >= commit_seq_;
  Status committed = commit_transaction();
  followers_in_place_.clear();
  followers_synced_ = true;
  H5J_RETURN_IF_ERROR(committed);
  if (txn_) followers_durable_.ended(commit_seq_, {txn_->records().last_committed_txn(), stats_.commits});
  if (followers.durable_through != UINT64_MAX) followers_durable_.through(followers.durable_through);
  return Status::ok();
}

// Every rank writes its share of a rewrite (step 4): it begins here.  A
// checkpoint overwrites committed bytes in place: under durable_within
// only once every commit is durable on every rank, so one found due while
// some are not makes the next commit so first.
Result<OwnerWord> JournaledFile::owner_word(bool closing) {
  OwnerWord word;
  word.rewrite = closing && txn_ && opts_.materialize_at_close && first_commit_done_;
  bool due = !closing && checkpoint_due();
  if (due && all_commits_durable()) {
    auto deferred = defer_checkpoint();
    if (!deferred) return deferred.status();
    word.rewrite = !*deferred;
  }
  if (word.rewrite) H5J_RETURN_IF_ERROR(begin_rewrite(/*wait=*/closing));
  word.next_durable = !first_commit_done_ || (due && !all_commits_durable());
  sync_next_commit_ = word.next_durable;
  return word;
}

Status JournaledFile::wait_durable_after_followers() {
  followers_durable_.through(commit_seq_);
  return wait_durable();
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
        *base_, GapFill::kLeave, mine, apply_buffers().take().get()));  // other ranks write beside these buckets
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
