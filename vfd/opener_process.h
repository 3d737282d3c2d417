// Whether this process is the one that opened a handle, or a child that
// fork() copied it into (driver_file.h, refuse_if_forked).
//
// Asked on every write, so it must cost no system call: getpid() is one
// (145 ns here, about 6 a step for W4's 8 KiB steps, 3% of a durable=false
// step).  A page marked MADV_WIPEONFORK (Linux 4.14) reads as zeros in a
// forked child, so a load answers.  Where the kernel lacks it, getpid().
#pragma once

#include <sys/mman.h>
#include <unistd.h>


namespace h5j {

class OpenerProcess {
 public:
  OpenerProcess() {
    void* p = ::mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    if (::madvise(p, kPage, MADV_WIPEONFORK) != 0) {
      ::munmap(p, kPage);
      return;
    }
    page_ = static_cast<volatile int*>(p);
    *page_ = 1;
  }
  ~OpenerProcess() {
    if (page_ != nullptr) ::munmap(const_cast<int*>(page_), kPage);
  }
  OpenerProcess(const OpenerProcess&) = delete;
  OpenerProcess& operator=(const OpenerProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool is_this_process() const { return page_ != nullptr ? *page_ != 0 : ::getpid() == pid_; }

 private:
  static constexpr size_t kPage = 4096;
  pid_t pid_ = ::getpid();
  volatile int* page_ = nullptr;  // 1 in the opener, 0 in a forked child
};

}  // namespace h5j
