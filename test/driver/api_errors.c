/* h5journal.h's functions, called wrongly, report as HDF5's own do: the
 * error stack printed by HDF5's automatic handler, naming the problem, and
 * nothing printed once the program turned the handler off
 * (api_errors_test.sh).  Each failure leaves errno EINVAL, whatever it was
 * before, with the handler on or off.
 *   api_errors print FILE   the handler on (HDF5's default)
 *   api_errors quiet FILE   the handler off (as h5py sets it)
 * Exits 0 when every call failed as it should. */
#include <hdf5.h>
#include <h5journal.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Whether a call failed, leaving errno EINVAL. */
static int failed_with_einval(herr_t status) {
    int e = errno;
    errno = 0;
    if (status >= 0) return 0;
    if (e != EINVAL) fprintf(stderr, "errno %d (%s) after a failed call, not EINVAL\n", e, strerror(e));
    return e == EINVAL;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    if (strcmp(argv[1], "quiet") == 0) H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    int wrong = 0;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5FD_journal_fapl_t config;
    H5Pget_fapl_journal_defaults(&config);
    config.ring_buffers = 1;
    errno = 0;
    wrong += !failed_with_einval(H5Pset_fapl_journal(fapl, &config));
    wrong += !failed_with_einval(H5Pget_fapl_journal(fapl, &config)); /* a sec2 property list */
    hid_t f = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5FD_journal_stats_t stats;
    wrong += !failed_with_einval(H5Fget_journal_stats(f, &stats)); /* a file under sec2 */
    wrong += !failed_with_einval(H5Fwait_journal_durable(f));
    wrong += !failed_with_einval(H5Fwait_journal_durable(fapl)); /* not a file's id */
    H5Fclose(f);
    H5Pclose(fapl);
    printf("%d call(s) that should have failed did not\n", wrong);
    return wrong == 0 ? 0 : 1;
}
