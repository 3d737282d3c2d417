/* exiting_lock_holder FILE MIB: holds FILE's lock (flock, as h5journal
 * takes it) and MIB MiB of memory it has touched, prints "ready", and
 * waits to be killed.
 *
 * A killed process lets go of its locks only late in its exit, once it has
 * unmapped its memory (journal/io/file_lock.h).  The memory makes that
 * window long enough to test: after a `kill -9` of this process, its lock
 * is still held, by a process that is exiting, for tens of milliseconds. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: exiting_lock_holder FILE MIB\n");
    return 1;
  }
  int fd = open(argv[1], O_RDWR);
  if (fd < 0 || flock(fd, LOCK_EX) != 0) {  /* waits out a writer killed a moment ago */
    perror(argv[1]);
    return 2;
  }
  size_t bytes = (size_t)atol(argv[2]) << 20;
  if (mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0) == MAP_FAILED) {
    perror("mmap");
    return 2;
  }
  printf("ready\n");
  fflush(stdout);
  for (;;) pause();
}
