// Whether this process is the one that opened a handle, or a child that
// fork() copied it into (driver_file.h, refuse_if_forked).
//
// Asked on every write, so it must cost no system call: getpid() is one
// (145 ns here, about 6 a step for W4's 8 KiB steps, 3% of a durable=false
// step).  A page marked MADV_WIPEONFORK (Linux 4.14) reads as zeros in a
// forked child, so a load answers.  Where the kernel lacks it, getpid().
//
// One page for the process, not one a handle: a page's mmap, first touch
// and munmap (through UCX's hooks, in an MPICH program) were 11% of the
// time of creating, writing and closing a 64 KiB file with durable=false.
// The page holds a random token the process drew at its first open, and a
// handle the token of its opener.  In a forked child the page reads 0
// until the child opens a handle of its own and draws a token, which no
// inherited handle holds.  A token, not the pid: a worker that outlives
// its crashed parent may fork a child that, after the pids wrap, gets the
// parent's pid.  The page lives as long as the process; it is state of
// the process, as its pid is, and nothing else writes it.
#pragma once

#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace h5j {

class OpenerProcess {
 public:
  OpenerProcess() : pid_(::getpid()), mark_(process_mark()) {
    if (mark_ != nullptr) token_ = this_process_token(*mark_);
  }
  OpenerProcess(const OpenerProcess&) = delete;
  OpenerProcess& operator=(const OpenerProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool is_this_process() const {
    return mark_ != nullptr ? std::atomic_ref<uint64_t>(*mark_).load(std::memory_order_relaxed) == token_
                            : ::getpid() == pid_;
  }

 private:
  static constexpr size_t kPage = 4096;
  // The process's page, made at the first open; null without WIPEONFORK.
  static uint64_t* process_mark() {
    static uint64_t* const page = []() -> uint64_t* {
      void* p = ::mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) return nullptr;
      if (::madvise(p, kPage, MADV_WIPEONFORK) != 0) {
        ::munmap(p, kPage);
        return nullptr;
      }
      return static_cast<uint64_t*>(p);
    }();
    return page;
  }
  // The page's token, drawn if this process has none yet (0: a new
  // process, or a forked child).  Two threads opening at once agree on one.
  static uint64_t this_process_token(uint64_t& mark) {
    std::atomic_ref<uint64_t> page(mark);
    uint64_t token = page.load();
    if (token != 0) return token;
    uint64_t drawn = 0;
    if (::getrandom(&drawn, sizeof drawn, 0) != ssize_t(sizeof drawn) || drawn == 0)
      drawn = uint64_t(::getpid()) << 20 | 1;  // no entropy: the pid, nonzero
    return page.compare_exchange_strong(token, drawn) ? drawn : token;
  }

  pid_t pid_;
  uint64_t* mark_;
  uint64_t token_ = 0;  // the process's token when this handle was opened
};

}  // namespace h5j
