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
// The page holds the pid of the process that marked it, and a handle the
// pid of its opener: in a forked child the page reads 0 until the child
// opens a handle of its own and marks it with its pid, which no inherited
// handle holds.  The page lives as long as the process; it is state of the
// process, as its pid is, and nothing else writes it.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>

namespace h5j {

class OpenerProcess {
 public:
  OpenerProcess() : pid_(::getpid()), mark_(process_mark()) {
    if (mark_ != nullptr && std::atomic_ref<pid_t>(*mark_).load() != pid_) std::atomic_ref<pid_t>(*mark_).store(pid_);
  }
  OpenerProcess(const OpenerProcess&) = delete;
  OpenerProcess& operator=(const OpenerProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool is_this_process() const {
    return mark_ != nullptr ? std::atomic_ref<pid_t>(*mark_).load(std::memory_order_relaxed) == pid_
                            : ::getpid() == pid_;
  }

 private:
  static constexpr size_t kPage = 4096;
  // The process's page, made at the first open; null without WIPEONFORK.
  static pid_t* process_mark() {
    static pid_t* const page = [] () -> pid_t* {
      void* p = ::mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) return nullptr;
      if (::madvise(p, kPage, MADV_WIPEONFORK) != 0) {
        ::munmap(p, kPage);
        return nullptr;
      }
      return static_cast<pid_t*>(p);
    }();
    return page;
  }

  pid_t pid_;
  pid_t* mark_;  // the process's page: pid_ while this process is the opener
};

}  // namespace h5j
