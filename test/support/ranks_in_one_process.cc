#include "ranks_in_one_process.h"

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace h5j::test {
namespace {

// The baton: `turn` is the rank that may run.  A rank runs until its next
// exchange, leaves its input there and passes the baton on; the last rank
// to arrive completes the round (computes every rank's output) and gives
// the baton back to rank 0.  A rank reads a round's output at its next
// turn, before it leaves the next round's input.
class Baton {
  const int ranks_;

 public:
  explicit Baton(int ranks) : ranks_(ranks), statuses_(size_t(ranks)), indexes_(size_t(ranks)) {}

  // Blocks until it is `rank`'s turn in round `round`.
  void wait_turn(int rank, uint64_t round) {
    std::unique_lock lock(mutex_);
    bool ok = changed_.wait_for(lock, std::chrono::seconds(60), [&] { return round_ == round && turn_ == rank; });
    if (!ok) {
      std::fprintf(stderr, "ranks_in_one_process: rank %d waited 60 s for its turn: the ranks' calls differ\n", rank);
      std::abort();
    }
  }
  // Ends `rank`'s turn; `leave` stores its input.
  template <typename Leave>
  void end_turn(int rank, Leave&& leave) {
    std::lock_guard lock(mutex_);
    leave();
    if (rank + 1 < ranks_) {
      turn_ = rank + 1;
    } else {
      complete_round();
      turn_ = 0;
      ++round_;
    }
    changed_.notify_all();
  }
  void finish(int rank) {
    std::lock_guard lock(mutex_);
    if (rank + 1 < ranks_) turn_ = rank + 1;
    changed_.notify_all();
  }

  // Inputs of the round in progress, outputs of the last one completed.
  std::vector<Status> statuses_;
  int rank0_value_in_ = 0, rank0_value_out_ = 0;
  Status agreed_;
  std::vector<PreparedIndex> indexes_;
  PreparedIndex gathered_;
  bool gathering_ = false;

 private:
  void complete_round() {
    if (gathering_) {
      gathered_ = {};
      for (const PreparedIndex& i : indexes_) gathered_.add(i);
      return;
    }
    agreed_ = Status::ok();
    for (const Status& s : statuses_)
      if (!s) {
        agreed_ = s;
        break;
      }
    rank0_value_out_ = rank0_value_in_;
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  int turn_ = 0;
  uint64_t round_ = 0;
};

class RankInProcess final : public RankExchange {
 public:
  RankInProcess(Baton& baton, int rank) : baton_(baton), rank_(rank) {}
  int rank() const override { return rank_; }
  bool broken() const override { return false; }
  const Status& fault() const override { return ok_; }

  Status agree(const Status& local, int* rank0_value) override {
    exchange([&] {
      baton_.gathering_ = false;
      baton_.statuses_[size_t(rank_)] = local;
      if (rank_ == 0 && rank0_value) baton_.rank0_value_in_ = *rank0_value;
    });
    if (rank0_value) *rank0_value = baton_.rank0_value_out_;
    // The lowest failing rank's status, as MpiSession::agree names it.
    return baton_.agreed_;
  }
  Status gather_index(const PreparedIndex& mine, PreparedIndex& all) override {
    exchange([&] {
      baton_.gathering_ = true;
      baton_.indexes_[size_t(rank_)] = mine;
    });
    if (rank_ == 0) all = baton_.gathered_;
    return Status::ok();
  }

  void start() { baton_.wait_turn(rank_, round_); }
  void finish() { baton_.finish(rank_); }

 private:
  template <typename Leave>
  void exchange(Leave&& leave) {
    baton_.end_turn(rank_, leave);
    baton_.wait_turn(rank_, ++round_);
  }
  Baton& baton_;
  int rank_;
  uint64_t round_ = 0;
  Status ok_;
};

// `step` on every rank, each on a thread of its own.
template <typename Step>
Status in_one_process(std::span<JournaledFile* const> ranks, Step&& step) {
  Baton baton(int(ranks.size()));
  std::vector<Status> outcomes(ranks.size());
  std::vector<std::thread> threads;
  for (size_t r = 0; r < ranks.size(); ++r)
    threads.emplace_back([&, r] {
      RankInProcess me(baton, int(r));
      me.start();
      outcomes[r] = step(*ranks[r], me);
      me.finish();
    });
  for (std::thread& t : threads) t.join();
  for (const Status& s : outcomes)
    if (!s) return s;
  return Status::ok();
}

}  // namespace

Status commit_in_one_process(std::span<JournaledFile* const> ranks, bool closing) {
  return in_one_process(ranks, [closing](JournaledFile& f, RankExchange& r) { return collective_commit(f, r, closing); });
}

Status wait_durable_in_one_process(std::span<JournaledFile* const> ranks) {
  return in_one_process(ranks, [](JournaledFile& f, RankExchange& r) { return collective_wait_durable(f, r); });
}

}  // namespace h5j::test
