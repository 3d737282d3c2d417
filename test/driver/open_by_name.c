/* A serial program that opens a file with H5P_DEFAULT, so that the driver is
 * whatever HDF5_DRIVER names (test/driver/no_mpi_test.sh).  It writes, commits with
 * H5Fflush (the journal must exist then: the journal driver was used),
 * closes, reads the file back as a tool would, and, against a parallel
 * HDF5, checks that nothing initialised MPI: the driver leaves MPI to the
 * application. */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *what) {
    fprintf(stderr, "FAIL: %s\n", what);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 2) return fail("usage: open_by_name FILE");
    char journal[4096];
    snprintf(journal, sizeof journal, "%s.jnl", argv[1]);
    hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) return fail("H5Fcreate");
    hsize_t n = 1000;
    hid_t space = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(f, "values", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int v[1000];
    for (int i = 0; i < 1000; i++) v[i] = i;
    if (d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) return fail("H5Dwrite");
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) return fail("H5Fflush");
    if (access(journal, F_OK) != 0) return fail("no journal beside the file: the journal driver was not used");
    H5Dclose(d);
    H5Sclose(space);
    if (H5Fclose(f) < 0) return fail("H5Fclose");
    /* And read back, as a tool such as h5ls or h5dump would. */
    f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    d = f < 0 ? -1 : H5Dopen2(f, "values", H5P_DEFAULT);
    int back[1000];
    if (d < 0 || H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) < 0) return fail("reading back");
    if (memcmp(v, back, sizeof v) != 0) return fail("the values read back differ");
    H5Dclose(d);
    if (H5Fclose(f) < 0) return fail("H5Fclose after reading");
#ifdef H5_HAVE_PARALLEL
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (initialised) return fail("MPI was initialised in a program that never called MPI_Init");
    printf("MPI not initialised by the driver\n");
#endif
    printf("wrote %s through HDF5_DRIVER=journal\n", argv[1]);
    return 0;
}
