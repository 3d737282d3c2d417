#include "syscalls.h"

#include <fcntl.h>
#include <unistd.h>

#include <cassert>
#include <cstdlib>

namespace h5j {

ssize_t Syscalls::pread(int fd, void* buf, size_t n, off_t off) { return ::pread(fd, buf, n, off); }
ssize_t Syscalls::pwrite(int fd, const void* buf, size_t n, off_t off) { return ::pwrite(fd, buf, n, off); }
int Syscalls::fdatasync(int fd) { return ::fdatasync(fd); }
int Syscalls::fsync(int fd) { return ::fsync(fd); }
int Syscalls::write_back(int fd) {
  return ::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
}
int Syscalls::start_writeback(int fd, off_t offset, off_t length) {
  return ::sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE);
}
int Syscalls::ftruncate(int fd, off_t size) { return ::ftruncate(fd, size); }
int Syscalls::uring_setup(unsigned entries, io_uring* ring) { return io_uring_queue_init(entries, ring, 0); }
void* Syscalls::alloc_buffer(size_t size, size_t alignment) {
  assert(alignment >= 4096 && (alignment & (alignment - 1)) == 0);
  return std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
}

Syscalls& real_syscalls() {
  static Syscalls sys;  // stateless
  return sys;
}

}  // namespace h5j
