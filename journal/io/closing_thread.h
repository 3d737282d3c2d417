// Files closed on a thread of their own, for a caller that should not wait
// for their close: a journal whose name a close has just removed.
//
// Why: the last close of a file whose name is gone frees its blocks, and
// on a file system mounted with `discard` (ext4 on many cloud images)
// the kernel discards them before that close returns.  Here that costs
// 0.7 ms a MiB: 12 ms for a durable journal of 16 MiB, where a durable
// sec2 close costs 0.5 ms; 1.3 ms without `discard`.  Removing the name
// first and closing the handle here moves that cost off H5Fclose, into
// the time the program computes next.  Nothing on disk depends on when
// the blocks are freed: the name is gone, and a crash before the close
// leaves an orphan inode that the file system frees at its next mount.
//
// Ownership: close_later() takes the file; from then on only this thread
// touches it.  At most kMaxWaiting files wait: past that the caller closes
// its own (a program closing files faster than the disk frees them waits
// as it would without this thread, and holds a bounded number of
// descriptors).  The destructor closes every waiting file before it
// returns, so a program that exits at once pays the frees at its exit.
//
// fork(): a child inherits the object but not the thread, and may inherit
// the mutex locked.  In a child the object closes each file at once and
// never touches its state; its destructor leaves that state to the exit.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "file.h"

namespace h5j {

class ClosingThread {
 public:
  static constexpr size_t kMaxWaiting = 4;

  ClosingThread();
  ~ClosingThread();
  ClosingThread(const ClosingThread&) = delete;
  ClosingThread& operator=(const ClosingThread&) = delete;

  // Closes `file` on the thread, started at the first call; at once when
  // kMaxWaiting files wait, the thread cannot start, or in a forked child.
  void close_later(std::unique_ptr<File> file);

 private:
  struct State {
    std::mutex mu;
    std::condition_variable wake;  // a file waits, or stop
    std::deque<std::unique_ptr<File>> waiting;
    bool stop = false;
    std::thread thread;
  };
  void run();
  bool in_creator() const;

  pid_t creator_;
  std::unique_ptr<State> state_;
};

}  // namespace h5j
