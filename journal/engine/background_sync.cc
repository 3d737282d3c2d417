#include "background_sync.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace h5j {

Status sync_in_commit_order(File& file, File& journal) {
  H5J_RETURN_IF_ERROR(file.sync_data());
  return journal.sync_data();
}

BackgroundSync::BackgroundSync(std::unique_ptr<File> file, std::unique_ptr<File> journal,
                               std::chrono::milliseconds interval, bool threaded)
    : file_(std::move(file)), journal_(std::move(journal)), interval_(interval) {
  if (threaded) thread_ = std::thread([this] { run(); });
}

BackgroundSync::~BackgroundSync() { (void)stop(); }

std::vector<std::unique_ptr<File>> BackgroundSync::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  drained_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::vector<std::unique_ptr<File>> handles;
  if (file_) handles.push_back(std::move(file_));
  if (journal_) handles.push_back(std::move(journal_));
  return handles;
}

void BackgroundSync::written(uint64_t txn, uint64_t commits, uint64_t bytes, bool sealed) {
  Batch batch;
  {
    std::unique_lock lock(mu_);
    const bool hurried = hurry_;
    written_ = {txn, commits};
    records_follow_ = false;
    if (sealed) {
      sealed_ = written_;
      // A sync published less than it synced for want of this seal: the
      // next one publishes it.
      if (std::exchange(seal_next_commit_, false)) hurry_ = syncing_for_seal_ = true;
    }
    unsynced_bytes_ += bytes;
    if (thread_.joinable()) {
      if (unsynced_bytes_ >= budget_ / 2) hurry_ = true;  // half a budget: the disk can start on it
      if (hurry_ && !hurried) wake_.notify_all();
      if (behind()) drained_.wait(lock, [this] { return stop_ || !failure_.is_ok() || !behind(); });
      return;
    }
    if (commits % kInlineEvery != 0 && !hurry_) return;
    hurry_ = false;
    batch = take_unsynced();
  }
  sync_batch(batch);
}

void BackgroundSync::wrote(uint64_t bytes) {
  std::lock_guard lock(mu_);
  unsynced_bytes_ += bytes;
}

bool BackgroundSync::next_record_on_fresh_block() {
  std::lock_guard lock(mu_);
  records_follow_ = true;
  return std::exchange(seal_next_record_, false);
}

bool BackgroundSync::end_commit_block() {
  std::lock_guard lock(mu_);
  return seal_next_commit_;
}

void BackgroundSync::sealed_last_commit() {
  std::lock_guard lock(mu_);
  sealed_ = written_;
  seal_next_commit_ = false;
}

// What a sync takes: every byte written so far, and, to publish, the last
// sealed commit (SEALS), sealing the last written one if no record follows
// it, or else asking the next COMMIT for a seal, unless a seal hurried
// this sync.
BackgroundSync::Batch BackgroundSync::take_unsynced() {
  const bool for_seal = std::exchange(syncing_for_seal_, false);
  if (sealed_.txn < written_.txn) {
    if (!records_follow_) {
      sealed_ = written_;
      seal_next_record_ = true;
    } else if (!for_seal) {
      seal_next_commit_ = true;
    }
  }
  Batch batch{sealed_, unsynced_bytes_};
  syncing_bytes_ += unsynced_bytes_;
  unsynced_bytes_ = 0;
  return batch;
}

void BackgroundSync::forget_unsynced() {
  unsynced_bytes_ = 0;
  drained_.notify_all();
}

void BackgroundSync::hurry() {
  {
    std::lock_guard lock(mu_);
    hurry_ = true;
  }
  wake_.notify_all();
}

void BackgroundSync::made_durable(Durable upto) {
  std::lock_guard lock(mu_);
  if (upto.txn > written_.txn) written_ = upto;
  if (upto.txn > sealed_.txn) sealed_ = upto;  // a durable commit ends its block
  if (upto.txn > durable_.txn) durable_ = upto;
  if (upto.txn >= written_.txn) {  // the writer's sync took them, and placed nothing since
    forget_unsynced();
    records_follow_ = false;
  }
}

void BackgroundSync::new_generation(uint64_t first_txn) {
  std::lock_guard lock(mu_);
  written_.txn = durable_.txn = first_txn - 1;
  durable_.commits = written_.commits;
  sealed_ = written_;  // the generation's records start on a fresh block
  records_follow_ = seal_next_record_ = seal_next_commit_ = syncing_for_seal_ = false;
  forget_unsynced();  // the checkpoint made them durable
  ++generation_;
}

Status BackgroundSync::sync_now() {
  Batch batch;
  {
    std::lock_guard lock(mu_);
    if (!failure_.is_ok()) return failure_;
    batch = take_unsynced();
  }
  sync_batch(batch);
  return failure();
}

BackgroundSync::Durable BackgroundSync::durable() const {
  std::lock_guard lock(mu_);
  return durable_;
}

Status BackgroundSync::failure() const {
  std::lock_guard lock(mu_);
  return failure_;
}

// An interval after the last sync began, or at its end if it took longer,
// while something written is not yet durable: a commit, or bytes written
// ahead of one.  A failed sync ends the syncing: the writer reports it at
// its next call and stops.
void BackgroundSync::run() {
  std::unique_lock lock(mu_);
  Clock::time_point began = Clock::now();
  while (!stop_) {
    wake_.wait_until(lock, began + interval_, [this] { return stop_ || hurry_; });
    hurry_ = false;
    began = Clock::now();
    if (stop_ || !failure_.is_ok()) continue;
    if (written_.txn <= durable_.txn && unsynced_bytes_ == 0) continue;  // the next look is an interval away
    Batch batch = take_unsynced();
    lock.unlock();
    sync_batch(batch);
    lock.lock();
  }
}

void BackgroundSync::sync_batch(const Batch& batch) {
  Clock::time_point began = Clock::now();
  Result<bool> synced = sync_through(batch);
  std::chrono::duration<double> took = Clock::now() - began;
  std::lock_guard lock(mu_);
  assert(syncing_bytes_ >= batch.bytes);  // take_unsynced added them, and only this sync takes them back
  syncing_bytes_ -= batch.bytes;
  Status s = status_of(synced);
  if (!s && failure_.is_ok()) failure_ = s;
  if (s && *synced && batch.bytes > 0) {
    rate_.synced(batch.bytes, took);
    if (double rate = rate_.bytes_per_second(); rate > 0)
      budget_ = std::max<uint64_t>(kLeastBudget, uint64_t(rate * std::chrono::duration<double>(interval_).count()));
  }
  drained_.notify_all();
}

void BackgroundSync::DiskRate::synced(uint64_t bytes, std::chrono::duration<double> took) {
  window_[count_++ % kWindow] = {bytes, took.count()};
}

double BackgroundSync::DiskRate::bytes_per_second() const {
  uint64_t bytes = 0;
  double seconds = 0;
  for (size_t i = 0; i < std::min(count_, kWindow); ++i) {
    bytes += window_[i].bytes;
    seconds += window_[i].seconds;
  }
  return bytes >= kMeasuredMin && seconds > 0 ? double(bytes) / seconds : 0.0;
}

Result<bool> BackgroundSync::sync_through(const Batch& batch) {
  assert(file_ != nullptr);  // not stopped
  std::lock_guard one_at_a_time(sync_mu_);
  uint64_t generation;
  bool publishes;
  {
    std::lock_guard lock(mu_);
    publishes = batch.upto.txn > durable_.txn;
    generation = generation_;
  }
  if (!publishes) {  // bytes written ahead of any COMMIT: the file alone
    if (batch.bytes == 0) return false;
    H5J_RETURN_IF_ERROR(file_->sync_data());
    return true;
  }
  H5J_RETURN_IF_ERROR(journal_ ? sync_in_commit_order(*file_, *journal_) : file_->sync_data());
  std::lock_guard lock(mu_);
  if (generation == generation_ && batch.upto.txn > durable_.txn) durable_ = batch.upto;
  return true;
}

}  // namespace h5j
