/* A second read-write open of a file that another process is writing
 * through the driver (test/driver/second_open_test.sh).
 *   second_open hold FILE    creates FILE, writes (one dataset large enough
 *                            to go in place) and commits (H5Fflush), says
 *                            "ready" on stdout, waits for a line on stdin,
 *                            writes once more and closes;
 *   second_open open FILE    H5Fopen(FILE, RDWR): must be refused; prints
 *                            HDF5's error stack and exits 0 if it was;
 *   second_open create FILE  the same for H5Fcreate(FILE, H5F_ACC_TRUNC), a
 *                            second copy of the job;
 *   second_open check FILE   exits 0 if FILE holds everything "hold" wrote;
 *   second_open committed FILE  exits 0 if FILE holds what "hold" committed
 *                            before it said "ready";
 *   second_open unflushed FILE  writes as "hold" does but never commits, says
 *                            "ready" and waits to be killed (a file that
 *                            never committed: test/recovery/h5recover_test.sh);
 *   second_open two FILE     as "hold" without waiting, and between its
 *                            commit and its last write H5Fcreate of a
 *                            second file, FILE.second.h5, which must be
 *                            refused (a journal_path naming one file serves
 *                            both: test/driver/second_open_test.sh); prints
 *                            HDF5's error stack and exits 0 if it was;
 *   second_open read FILE    opens FILE read-only, says "ready", waits for a
 *                            line on stdin, then reads what "hold" committed
 *                            (a live reader that stays open); exits 0 if
 *                            it read it all, else prints HDF5's errors. */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#define SMALL 4096
#define LARGE (1 << 18) /* 1 MiB of ints: written in place, not journaled */

static int v[LARGE];

static int write_values(hid_t f, const char *name, int value, hsize_t n) {
    for (hsize_t i = 0; i < n; i++) v[i] = value;
    hid_t space = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(f, name, H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int ok = d >= 0 && H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
    H5Dclose(d);
    H5Sclose(space);
    return ok;
}

static int has_values(hid_t f, const char *name, int value, hsize_t n) {
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    int ok = d >= 0 && H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
    for (hsize_t i = 0; ok && i < n; i++) ok = v[i] == value;
    if (d >= 0) H5Dclose(d);
    if (!ok) fprintf(stderr, "FAIL: dataset %s does not hold %d everywhere\n", name, value);
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    int unflushed = strcmp(argv[1], "unflushed") == 0;
    if (strcmp(argv[1], "hold") == 0 || unflushed) {
        hid_t f = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        if (f < 0 || !write_values(f, "first", 1, SMALL) || !write_values(f, "large", 3, LARGE) ||
            (!unflushed && H5Fflush(f, H5F_SCOPE_GLOBAL) < 0))
            return 1;
        printf("ready\n");
        fflush(stdout);
        char line[16];
        if (fgets(line, sizeof line, stdin) == NULL) return 1;
        if (!write_values(f, "second", 2, SMALL) || H5Fclose(f) < 0) return 1;
        return 0;
    }
    if (strcmp(argv[1], "two") == 0) {
        char second[4096];
        snprintf(second, sizeof second, "%s.second.h5", argv[2]);
        hid_t f = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        if (f < 0 || !write_values(f, "first", 1, SMALL) || !write_values(f, "large", 3, LARGE) ||
            H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
            return 1;
        hid_t g = -1;
        H5E_BEGIN_TRY { g = H5Fcreate(second, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT); }
        H5E_END_TRY
        if (g >= 0) {
            fprintf(stderr, "FAIL: the create of %s beside %s succeeded\n", second, argv[2]);
            return 1;
        }
        H5Eprint2(H5E_DEFAULT, stdout);
        return write_values(f, "second", 2, SMALL) && H5Fclose(f) >= 0 ? 0 : 1;
    }
    if (strcmp(argv[1], "read") == 0) {
        hid_t f = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
        if (f < 0) return 1;
        printf("ready\n");
        fflush(stdout);
        char line[16];
        if (fgets(line, sizeof line, stdin) == NULL) return 1;
        /* HDF5's errors are printed where the read fails, before the next
         * call clears them. */
        hid_t d = H5Dopen2(f, "large", H5P_DEFAULT);
        int ok = d >= 0 && H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
        if (!ok) H5Eprint2(H5E_DEFAULT, stdout);
        for (hsize_t i = 0; ok && i < LARGE; i++) ok = v[i] == 3;
        if (d >= 0) H5Dclose(d);
        H5Fclose(f);
        return ok ? 0 : 1;
    }
    int committed = strcmp(argv[1], "committed") == 0;
    if (strcmp(argv[1], "check") == 0 || committed) {
        hid_t f = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
        int ok = f >= 0 && has_values(f, "first", 1, SMALL) && has_values(f, "large", 3, LARGE) &&
                 (committed || has_values(f, "second", 2, SMALL));
        if (f >= 0) H5Fclose(f);
        return ok ? 0 : 1;
    }
    int create = strcmp(argv[1], "create") == 0;
    hid_t f = -1;
    H5E_BEGIN_TRY {
        f = create ? H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)
                   : H5Fopen(argv[2], H5F_ACC_RDWR, H5P_DEFAULT);
    }
    H5E_END_TRY
    if (f >= 0) {
        fprintf(stderr, "FAIL: a second read-write %s of %s succeeded\n", argv[1], argv[2]);
        H5Fclose(f);
        return 1;
    }
    H5Eprint2(H5E_DEFAULT, stdout);
    return 0;
}
