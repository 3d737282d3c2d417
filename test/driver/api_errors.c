/* h5journal.h's functions, called wrongly, report as HDF5's own do: the
 * error stack printed by HDF5's automatic handler, naming the problem, and
 * nothing printed once the program turned the handler off
 * (api_errors_test.sh).
 *   api_errors print FILE   the handler on (HDF5's default)
 *   api_errors quiet FILE   the handler off (as h5py sets it)
 * Exits 0 when every call failed as it should. */
#include <hdf5.h>
#include <h5journal.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    if (strcmp(argv[1], "quiet") == 0) H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    int wrong = 0;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5FD_journal_fapl_t config;
    H5Pget_fapl_journal_defaults(&config);
    config.ring_buffers = 1;
    wrong += H5Pset_fapl_journal(fapl, &config) >= 0;
    wrong += H5Pget_fapl_journal(fapl, &config) >= 0; /* a sec2 property list */
    hid_t f = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5FD_journal_stats_t stats;
    wrong += H5Fget_journal_stats(f, &stats) >= 0; /* a file under sec2 */
    wrong += H5Fwait_journal_durable(f) >= 0;
    H5Fclose(f);
    H5Pclose(fapl);
    printf("%d call(s) that should have failed did not\n", wrong);
    return wrong == 0 ? 0 : 1;
}
