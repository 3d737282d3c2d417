#include "background_sync.h"

#include <algorithm>

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

BackgroundSync::~BackgroundSync() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  taken_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BackgroundSync::written(uint64_t txn, uint64_t commits, uint64_t bytes) {
  {
    std::unique_lock lock(mu_);
    written_ = {txn, commits};
    unsynced_bytes_ += bytes;
    if (thread_.joinable()) {
      if (unsynced_bytes_ > budget_) {  // the disk is behind: wait for a sync to take them
        hurry_ = true;
        wake_.notify_all();
        taken_.wait(lock, [this] { return stop_ || !failure_.is_ok() || unsynced_bytes_ <= budget_; });
      }
      return;
    }
    if (commits % kInlineEvery != 0 && !hurry_) return;
    hurry_ = false;
    take_unsynced();
  }
  Status s = sync_through({txn, commits});
  std::lock_guard lock(mu_);
  if (!s && failure_.is_ok()) failure_ = s;
}

uint64_t BackgroundSync::take_unsynced() {
  uint64_t bytes = unsynced_bytes_;
  unsynced_bytes_ = 0;
  taken_.notify_all();
  return bytes;
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
  if (upto.txn > durable_.txn) durable_ = upto;
}

void BackgroundSync::new_generation(uint64_t first_txn) {
  std::lock_guard lock(mu_);
  written_.txn = durable_.txn = first_txn - 1;
  durable_.commits = written_.commits;
  take_unsynced();  // the checkpoint made them durable
  ++generation_;
}

Status BackgroundSync::sync_now() {
  Durable upto;
  {
    std::lock_guard lock(mu_);
    if (!failure_.is_ok()) return failure_;
    upto = written_;
    take_unsynced();
  }
  return sync_through(upto);
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
// while something written is not yet durable.  A failed sync ends the
// syncing: the writer reports it at its next call and stops.
void BackgroundSync::run() {
  using Clock = std::chrono::steady_clock;
  std::unique_lock lock(mu_);
  Clock::time_point began = Clock::now();
  while (!stop_) {
    wake_.wait_until(lock, began + interval_, [this] { return stop_ || hurry_; });
    hurry_ = false;
    if (written_.txn <= durable_.txn) take_unsynced();  // durable already: nobody waits for them
    if (stop_ || !failure_.is_ok() || written_.txn <= durable_.txn) {
      began = Clock::now();  // nothing was due: the next look is an interval away
      continue;
    }
    Durable upto = written_;
    uint64_t bytes = take_unsynced();
    began = Clock::now();
    lock.unlock();
    Status s = sync_through(upto);
    std::chrono::duration<double> took = Clock::now() - began;
    lock.lock();
    if (!s && failure_.is_ok()) {
      failure_ = s;
      taken_.notify_all();
    }
    if (s && bytes >= kMeasuredMin && took.count() > 0) {
      double per_interval = double(bytes) / took.count() * std::chrono::duration<double>(interval_).count();
      budget_ = std::max<uint64_t>(kLeastBudget, uint64_t(per_interval));
    }
  }
}

Status BackgroundSync::sync_through(Durable upto) {
  std::lock_guard one_at_a_time(sync_mu_);
  uint64_t generation;
  {
    std::lock_guard lock(mu_);
    if (upto.txn <= durable_.txn) return Status::ok();
    generation = generation_;
  }
  H5J_RETURN_IF_ERROR(journal_ ? sync_in_commit_order(*file_, *journal_) : file_->sync_data());
  std::lock_guard lock(mu_);
  if (generation == generation_ && upto.txn > durable_.txn) durable_ = upto;
  return Status::ok();
}

}  // namespace h5j
