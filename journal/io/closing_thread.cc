#include "closing_thread.h"

#include <unistd.h>

#include <system_error>

namespace h5j {

ClosingThread::ClosingThread() : creator_(::getpid()), state_(std::make_unique<State>()) {}

ClosingThread::~ClosingThread() {
  if (!in_creator()) {
    (void)state_.release();  // the parent's thread and files: left to this process's exit
    return;
  }
  {
    std::lock_guard lock(state_->mu);
    state_->stop = true;
  }
  state_->wake.notify_all();
  if (state_->thread.joinable()) state_->thread.join();
}

bool ClosingThread::in_creator() const { return ::getpid() == creator_; }

void ClosingThread::close_later(std::unique_ptr<File> file) {
  if (!in_creator()) return;  // `file` closes here, on return
  std::unique_lock lock(state_->mu);
  if (state_->waiting.size() >= kMaxWaiting) return;
  if (!state_->thread.joinable()) {
    try {
      state_->thread = std::thread([this] { run(); });
    } catch (const std::system_error&) {
      return;  // no thread (EAGAIN): closed here
    }
  }
  state_->waiting.push_back(std::move(file));
  lock.unlock();
  state_->wake.notify_one();
}

// Closes one file at a time, outside the lock: a close may take many
// milliseconds, and close_later() must not wait for it.  At stop, closes
// what still waits before it ends.
void ClosingThread::run() {
  std::unique_lock lock(state_->mu);
  for (;;) {
    state_->wake.wait(lock, [this] { return state_->stop || !state_->waiting.empty(); });
    if (state_->waiting.empty()) return;  // stop, and nothing waits
    std::unique_ptr<File> file = std::move(state_->waiting.front());
    state_->waiting.pop_front();
    lock.unlock();
    file.reset();
    lock.lock();
  }
}

}  // namespace h5j
