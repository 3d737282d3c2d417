/* A dataset rewritten whole in one H5Dwrite, as a simulation overwrites its
 * state each step: every byte of the rewrite lies under the last commit,
 * so all of it is journaled, in one transaction.
 *
 *   large_rewrite write FILE MIB [kill]  a contiguous dataset of MIB MiB of
 *       uint32, written with i and committed, then rewritten with 3i + 1
 *       and committed; "rewrite committed" on stderr; then killed (SIGKILL)
 *       with "kill", else closed.
 *   large_rewrite check FILE MIB         every element is 3i + 1.
 */
#include <hdf5.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rewritten(size_t i) { return (uint32_t)(3 * i + 1); }

static int write_file(const char* path, size_t n, int kill_after) {
  uint32_t* v = malloc(n * sizeof *v);
  if (v == NULL) return 2;
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims = n;
  hid_t space = H5Screate_simple(1, &dims, NULL);
  hid_t d = H5Dcreate2(f, "state", H5T_NATIVE_UINT32, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0 || d < 0) return 3;
  for (size_t i = 0; i < n; ++i) v[i] = (uint32_t)i;
  if (H5Dwrite(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) return 4;
  if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) return 5;
  for (size_t i = 0; i < n; ++i) v[i] = rewritten(i);
  if (H5Dwrite(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) return 6;
  if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) return 7;
  fprintf(stderr, "rewrite committed\n");
  if (kill_after) raise(SIGKILL);
  free(v);
  H5Dclose(d);
  H5Sclose(space);
  return H5Fclose(f) < 0 ? 8 : 0;
}

static int check_file(const char* path, size_t n) {
  uint32_t* v = malloc(n * sizeof *v);
  if (v == NULL) return 2;
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = f < 0 ? -1 : H5Dopen2(f, "state", H5P_DEFAULT);
  if (d < 0 || H5Dread(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) return 3;
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) wrong += v[i] != rewritten(i);
  if (wrong > 0) fprintf(stderr, "%zu of %zu elements are not the rewrite's\n", wrong, n);
  free(v);
  H5Dclose(d);
  H5Fclose(f);
  return wrong > 0 ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  size_t n = (size_t)strtoull(argv[3], NULL, 10) * (1 << 20) / sizeof(uint32_t);
  if (strcmp(argv[1], "write") == 0) return write_file(argv[2], n, argc > 4 && strcmp(argv[4], "kill") == 0);
  if (strcmp(argv[1], "check") == 0) return check_file(argv[2], n);
  return 2;
}
