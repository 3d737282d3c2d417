/* A writer that changes its working directory while its file is open, as a
 * job script's program may (test/driver/changed_directory_test.sh).  It
 * creates FILE, a name relative to where it starts, commits, changes to
 * DIR, and commits 300 more steps, one dataset each, checkpoints among
 * them; then closes.  The driver's names for the file and its journal must
 * still lead where they led at the open. */
#include <hdf5.h>
#include <stdio.h>
#include <unistd.h>

static int fail(const char *what) {
    fprintf(stderr, "FAIL: %s\n", what);
    return 1;
}

static int step(hid_t f, int i) {
    char name[16];
    snprintf(name, sizeof name, "step%03d", i);
    hsize_t n = 256;
    int v[256];
    for (int k = 0; k < 256; k++) v[k] = i;
    hid_t space = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(f, name, H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int ok = d >= 0 && H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
    if (d >= 0) H5Dclose(d);
    H5Sclose(space);
    return ok && H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0;
}

int main(int argc, char **argv) {
    if (argc != 3) return fail("usage: changed_directory FILE DIR");
    hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) return fail("H5Fcreate");
    if (!step(f, 0)) return fail("the step before the change of directory");
    if (chdir(argv[2]) != 0) return fail("chdir");
    for (int i = 1; i <= 300; i++)
        if (!step(f, i)) return fail("a step after the change of directory");
    if (H5Fclose(f) < 0) return fail("H5Fclose");
    return 0;
}
