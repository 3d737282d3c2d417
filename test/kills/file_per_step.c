/* A file per time step, as a simulation's output often is: each step a new
 * file, created with H5P_DEFAULT (the driver comes from HDF5_DRIVER), given
 * a dataset, a group and an attribute, and closed with no H5Fflush, so that
 * its close is its only commit.
 *
 *   file_per_step write DIR KIB    writes DIR/s000000.h5, ... until killed;
 *                                  prints each step whose H5Fclose returned
 *   file_per_step check FILE STEP  prints "whole", "no-hdf5" (no HDF5 file
 *                                  opens) or "damaged" (one opens, but its
 *                                  contents are not step STEP's)
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double value(int step, size_t i) { return step * 1e6 + (double)i; }

static int write_steps(const char* dir, size_t kib) {
  size_t n = kib * 128;
  double* data = malloc(n * sizeof *data);
  hid_t scalar = H5Screate(H5S_SCALAR);
  for (int step = 0;; ++step) {
    char name[4096];
    snprintf(name, sizeof name, "%s/s%06d.h5", dir, step);
    for (size_t i = 0; i < n; ++i) data[i] = value(step, i);
    hid_t f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims = n;
    hid_t space = H5Screate_simple(1, &dims, NULL);
    hid_t ds = H5Dcreate2(f, "field", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t g = H5Gcreate2(f, "diagnostics", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t a = H5Acreate2(ds, "step", H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0 || ds < 0 || g < 0 || a < 0 || H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0 ||
        H5Awrite(a, H5T_NATIVE_INT, &step) < 0)
      return 1;
    H5Aclose(a);
    H5Gclose(g);
    H5Dclose(ds);
    H5Sclose(space);
    if (H5Fclose(f) < 0) return 1;
    printf("%d\n", step);
    fflush(stdout);
  }
}

static const char* check(const char* file, int step) {
  hid_t f;
  H5E_BEGIN_TRY { f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT); }
  H5E_END_TRY
  if (f < 0) return "no-hdf5";
  int whole = 0, got = -1;
  H5E_BEGIN_TRY {
    hid_t ds = H5Dopen2(f, "field", H5P_DEFAULT);
    hid_t space = ds >= 0 ? H5Dget_space(ds) : -1;
    hssize_t n = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    double* data = n > 0 ? malloc((size_t)n * sizeof *data) : NULL;
    hid_t a = ds >= 0 ? H5Aopen(ds, "step", H5P_DEFAULT) : -1;
    whole = data && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0 && a >= 0 &&
            H5Aread(a, H5T_NATIVE_INT, &got) >= 0 && got == step && H5Lexists(f, "diagnostics", H5P_DEFAULT) > 0;
    for (hssize_t i = 0; whole && i < n; ++i) whole = data[i] == value(step, (size_t)i);
    free(data);
    if (a >= 0) H5Aclose(a);
    if (space >= 0) H5Sclose(space);
    if (ds >= 0) H5Dclose(ds);
  }
  H5E_END_TRY
  H5Fclose(f);
  return whole ? "whole" : "damaged";
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "write") == 0) return write_steps(argv[2], (size_t)atoi(argv[3]));
  if (argc == 4 && strcmp(argv[1], "check") == 0) return puts(check(argv[2], atoi(argv[3]))) < 0;
  fprintf(stderr, "usage: file_per_step write DIR KIB | check FILE STEP\n");
  return 2;
}
