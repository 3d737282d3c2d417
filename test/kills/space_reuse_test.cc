// The write-ahead rule under space reuse.  A child commits dataset A, then,
// in the next (uncommitted) transaction, deletes A and creates B, which HDF5
// places in A's freed space, writes B, and dies by SIGKILL before any flush.
// Through the journal driver the file must still hold A, intact, and no B.
// The same steps through sec2 must damage A: proof that the scenario bites.
#include <hdf5.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "h5journal.h"

namespace {

constexpr hsize_t kElems = 64 * 1024;

hid_t fapl_for(bool journal) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (journal) H5Pset_fapl_journal(fapl, nullptr);
  else H5Pset_fapl_sec2(fapl);
  return fapl;
}

haddr_t write_dataset(hid_t f, const char* name, double value) {
  hid_t space = H5Screate_simple(1, &kElems, nullptr);
  hid_t ds = H5Dcreate2(f, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<double> v(kElems, value);
  H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
  haddr_t where = H5Dget_offset(ds);
  H5Dclose(ds);
  H5Sclose(space);
  return where;
}

// Child: commit A, reuse its space for B, die.  Reports both addresses.
[[noreturn]] void child(const std::string& file, bool journal, int report_fd) {
  hid_t fapl = fapl_for(journal);
  hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  haddr_t a = write_dataset(f, "A", 1.0);
  H5Fflush(f, H5F_SCOPE_GLOBAL);  // commit
  H5Ldelete(f, "A", H5P_DEFAULT);
  haddr_t b = write_dataset(f, "B", 2.0);
  haddr_t both[2] = {a, b};
  if (write(report_fd, both, sizeof both) != sizeof both) _exit(3);
  kill(getpid(), SIGKILL);
  _exit(4);
}

// 0: A intact and no B; 1: damaged; 2: unreadable.
int inspect(const std::string& file, bool journal) {
  hid_t fapl = fapl_for(journal);
  int result = 2;
  H5E_BEGIN_TRY {
    hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl);
    if (f >= 0) {
      hid_t ds = H5Dopen2(f, "A", H5P_DEFAULT);
      std::vector<double> v(kElems);
      bool a_ok = ds >= 0 && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0 &&
                  v == std::vector<double>(kElems, 1.0);
      if (ds >= 0) H5Dclose(ds);
      bool no_b = H5Lexists(f, "B", H5P_DEFAULT) <= 0;
      result = a_ok && no_b ? 0 : 1;
      H5Fclose(f);
    }
  }
  H5E_END_TRY
  H5Pclose(fapl);
  return result;
}

int run(const std::string& file, bool journal, haddr_t* a, haddr_t* b) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    child(file, journal, fds[1]);
  }
  close(fds[1]);
  haddr_t both[2] = {HADDR_UNDEF, HADDR_UNDEF};
  ssize_t n = read(fds[0], both, sizeof both);
  close(fds[0]);
  int status;
  waitpid(pid, &status, 0);
  if (n != sizeof both || !WIFSIGNALED(status)) return -1;
  *a = both[0];
  *b = both[1];
  return inspect(file, journal);
}

bool overlaps(haddr_t a, haddr_t b) {
  constexpr haddr_t kBytes = kElems * sizeof(double);
  return a != HADDR_UNDEF && b != HADDR_UNDEF && a < b + kBytes && b < a + kBytes;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : ".";
  haddr_t a, b;
  int sec2 = run(dir + "/reuse_sec2.h5", false, &a, &b);
  std::printf("sec2: A at %llu, B at %llu, after the kill: %s\n", (unsigned long long)a, (unsigned long long)b,
              sec2 == 0 ? "A intact" : sec2 == 1 ? "A damaged" : "unreadable");
  if (!overlaps(a, b)) {
    std::printf("FAIL: HDF5 did not reuse A's space for B, so this test proves nothing\n");
    return 1;
  }
  if (sec2 == 0) {
    std::printf("FAIL: sec2 kept A intact: the scenario does not reach the disk\n");
    return 1;
  }
  int jnl = run(dir + "/reuse_journal.h5", true, &a, &b);
  std::printf("journal: A at %llu, B at %llu, after the kill: %s\n", (unsigned long long)a, (unsigned long long)b,
              jnl == 0 ? "A intact, no B" : jnl == 1 ? "A damaged" : "unreadable");
  if (!overlaps(a, b)) {
    std::printf("FAIL: no space reuse through the journal driver\n");
    return 1;
  }
  return jnl == 0 ? 0 : 1;
}
