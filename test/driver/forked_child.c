/* A process that forks while it writes a file through the driver
 * (test/driver/forked_child_test.sh).
 *   forked_child write CHILD FILE  creates FILE, appends 10 steps with a
 *       commit (H5Fflush) after each, forks, waits for the child, appends
 *       10 more steps, says "committed 20" and kills itself (SIGKILL).  The
 *       child, by CHILD:
 *         exit   calls exit(): HDF5's atexit handler closes the file;
 *         flush  reads the 10 steps, writes an eleventh and calls H5Fflush,
 *                which must fail (HDF5's error stack goes to stderr), then
 *                H5Fclose and _exit;
 *         linger a worker that outlives the parent (Python's multiprocessing
 *                after a crash): sleeps 60 s, unwaited for; the parent says
 *                "worker PID" first;
 *         own    creates a file of its own (FILE.child), commits 20 steps
 *                into it, then does as flush does with the inherited file
 *                while its own is open, and closes its own;
 *   forked_child check FILE        exits 0 if FILE holds the 20 steps. */
#include <hdf5.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define STEP 1024
#define STEPS 20

static int buf[STEP * STEPS];

static int append_step(hid_t f, hid_t d, int step) {
    for (int i = 0; i < STEP; i++) buf[i] = step * STEP + i;
    hsize_t size = (hsize_t)(step + 1) * STEP, offset = (hsize_t)step * STEP, count = STEP;
    if (H5Dset_extent(d, &size) < 0) return 0;
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &count, NULL);
    int ok = H5Sselect_hyperslab(fs, H5S_SELECT_SET, &offset, NULL, &count, NULL) >= 0 &&
             H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, buf) >= 0;
    H5Sclose(ms);
    H5Sclose(fs);
    return ok && H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0;
}

static int holds_steps(hid_t d, int steps) {
    hid_t fs = H5Dget_space(d);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(fs, &n, NULL);
    H5Sclose(fs);
    if (n < (hsize_t)steps * STEP) return fprintf(stderr, "FAIL: %llu values, not %d\n", (unsigned long long)n, steps * STEP), 0;
    hsize_t count = (hsize_t)steps * STEP, offset = 0;
    hid_t sel = H5Dget_space(d), ms = H5Screate_simple(1, &count, NULL);
    int ok = H5Sselect_hyperslab(sel, H5S_SELECT_SET, &offset, NULL, &count, NULL) >= 0 &&
             H5Dread(d, H5T_NATIVE_INT, ms, sel, H5P_DEFAULT, buf) >= 0;
    for (int i = 0; ok && i < steps * STEP; i++)
        if (buf[i] != i) ok = 0, fprintf(stderr, "FAIL: value %d is %d\n", i, buf[i]);
    H5Sclose(ms);
    H5Sclose(sel);
    return ok;
}

/* A file of 20 steps, each committed, left open: 0 on failure. */
static hid_t write_steps(const char *name, hid_t *d) {
    hid_t f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk = STEP;
    hid_t space = H5Screate_simple(1, &zero, &unlimited), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, &chunk);
    *d = f < 0 ? -1 : H5Dcreate2(f, "steps", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    for (int step = 0; *d >= 0 && step < STEPS; step++)
        if (!append_step(f, *d, step)) return 0;
    return *d >= 0 ? f : 0;
}

static void child(const char *how, const char *name, hid_t f, hid_t d) {
    if (strcmp(how, "exit") == 0) exit(0);
    if (strcmp(how, "linger") == 0) {
        sleep(60);
        _exit(0);
    }
    hid_t own = 0, own_d = -1;
    char own_name[4096];
    snprintf(own_name, sizeof own_name, "%s.child", name);
    if (strcmp(how, "own") == 0 && !(own = write_steps(own_name, &own_d))) _exit(5);
    if (!holds_steps(d, 10)) _exit(3);
    printf("child read 10 steps\n");
    fflush(stdout);
    if (append_step(f, d, 10)) _exit(4); /* its commit must be refused */
    printf("child's commit refused\n");
    fflush(stdout);
    H5Dclose(d);
    H5Fclose(f);
    if (own && (H5Dclose(own_d) < 0 || H5Fclose(own) < 0)) _exit(6);
    _exit(0);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "check") == 0) {
        hid_t f = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
        hid_t d = f < 0 ? -1 : H5Dopen2(f, "steps", H5P_DEFAULT);
        return d >= 0 && holds_steps(d, STEPS) ? 0 : 1;
    }
    if (argc != 4 || strcmp(argv[1], "write") != 0) return 2;
    hid_t f = H5Fcreate(argv[3], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk = STEP;
    hid_t space = H5Screate_simple(1, &zero, &unlimited), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, &chunk);
    hid_t d = H5Dcreate2(f, "steps", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (d < 0) return 1;
    for (int step = 0; step < STEPS; step++) {
        if (step == 10) {
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) child(argv[2], argv[3], f, d);
            int status = 0;
            if (strcmp(argv[2], "linger") == 0)
                printf("worker %d\n", (int)pid);
            else if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return fprintf(stderr, "FAIL: the child ended with status %d\n", status), 1;
        }
        if (!append_step(f, d, step)) return fprintf(stderr, "FAIL: step %d\n", step), 1;
    }
    printf("committed %d\n", STEPS);
    fflush(stdout);
    kill(getpid(), SIGKILL);
    return 1;
}
