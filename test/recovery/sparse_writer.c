/* sparse_writer write FILE: a writer killed with a sparse file, as a job
 * that allocates a large contiguous dataset and writes it in a few places
 * leaves one.  FILE gets a contiguous dataset of 1 GiB with no fill value
 * written (HDF5 leaves its space a hole); its last MiB is written and
 * committed; then one MiB in its middle is written, not committed, and the
 * process kills itself.
 *
 * sparse_writer check FILE: the committed MiB holds its values, and the
 * uncommitted one reads as zeros (recovery laid the commit's ZERO record
 * over it). */
#include <hdf5.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MIB_ELEMS ((hsize_t)1 << 17) /* uint64s in a MiB */
#define ELEMS (1024 * MIB_ELEMS)    /* 1 GiB */

static uint64_t block[MIB_ELEMS];

static int block_io(hid_t d, hsize_t start, int write) {
    hsize_t count = MIB_ELEMS;
    hid_t file_space = H5Dget_space(d), mem_space = H5Screate_simple(1, &count, NULL);
    herr_t e = H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, NULL, &count, NULL);
    if (e >= 0)
        e = write ? H5Dwrite(d, H5T_NATIVE_UINT64, mem_space, file_space, H5P_DEFAULT, block)
                  : H5Dread(d, H5T_NATIVE_UINT64, mem_space, file_space, H5P_DEFAULT, block);
    H5Sclose(file_space);
    H5Sclose(mem_space);
    return e >= 0;
}

static int holds_only(uint64_t value) {
    for (hsize_t i = 0; i < MIB_ELEMS; i++)
        if (block[i] != value) return 0;
    return 1;
}

static int write_and_die(const char *path) {
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t n = ELEMS;
    hid_t space = H5Screate_simple(1, &n, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    hid_t d = H5Dcreate2(f, "d", H5T_NATIVE_UINT64, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (d < 0) return 2;
    for (hsize_t i = 0; i < MIB_ELEMS; i++) block[i] = 1;
    if (!block_io(d, ELEMS - MIB_ELEMS, 1) || H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) return 2;
    for (hsize_t i = 0; i < MIB_ELEMS; i++) block[i] = 2;
    if (!block_io(d, ELEMS / 2, 1)) return 2;
    raise(SIGKILL);
    return 2;
}

static int check(const char *path) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f < 0 ? -1 : H5Dopen2(f, "d", H5P_DEFAULT);
    if (d < 0) {
        fprintf(stderr, "%s: no dataset d\n", path);
        return 1;
    }
    if (!block_io(d, ELEMS - MIB_ELEMS, 0) || !holds_only(1)) {
        fprintf(stderr, "%s: the committed MiB is not there\n", path);
        return 1;
    }
    if (!block_io(d, ELEMS / 2, 0) || !holds_only(0)) {
        fprintf(stderr, "%s: the uncommitted MiB is not zeros\n", path);
        return 1;
    }
    H5Dclose(d);
    H5Fclose(f);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "write") == 0) return write_and_die(argv[2]);
    if (argc == 3 && strcmp(argv[1], "check") == 0) return check(argv[2]);
    fprintf(stderr, "usage: sparse_writer write|check FILE\n");
    return 2;
}
