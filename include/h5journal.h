/* h5journal: a crash-safe HDF5 virtual file driver.
 *
 * Metadata and overwrites of committed data go to a write-ahead journal
 * beside the file; every H5Fflush and H5Fclose is a durable transaction.
 * After a crash the file comes back exactly as it was at the last commit.
 *
 * Three ways to use it:
 *   1. H5Pset_fapl_journal(fapl, &config) in code linked with -lh5journal;
 *   2. H5Pset_driver_by_name(fapl, "journal", "key=value;...");
 *   3. HDF5_PLUGIN_PATH=<dir> HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="key=value;..."
 * The keys are documented in docs/configuration.md.
 */
#ifndef H5JOURNAL_H
#define H5JOURNAL_H

#include <hdf5.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define H5JOURNAL_API __attribute__((visibility("default")))
#else
#define H5JOURNAL_API
#endif

#define H5FD_JOURNAL_NAME "journal"
/* Third-party driver values are 256-511 for unregistered drivers. */
#define H5FD_JOURNAL_VALUE ((H5FD_class_value_t)(420))
#define H5FD_JOURNAL_FAPL_VERSION 5
#define H5FD_JOURNAL_PATH_MAX 4096

typedef enum H5FD_journal_io_t {
    H5FD_JOURNAL_IO_AUTO = 0, /* io_uring, falling back to pwrite if unavailable */
    H5FD_JOURNAL_IO_URING = 1,
    H5FD_JOURNAL_IO_SYNC = 2
} H5FD_journal_io_t;

typedef enum H5FD_journal_recovery_t {
    H5FD_JOURNAL_RECOVERY_AUTO = 0,  /* replay committed transactions at open */
    H5FD_JOURNAL_RECOVERY_REFUSE = 1 /* fail the open and name h5recover */
} H5FD_journal_recovery_t;

typedef enum H5FD_journal_raw_t {
    H5FD_JOURNAL_RAW_INPLACE = 0, /* raw data under the write-ahead rule, like metadata */
    H5FD_JOURNAL_RAW_LOG = 1,     /* raw data appended to the data log, indexed in the journal */
    H5FD_JOURNAL_RAW_AUTO = 2     /* large writes in new space in place, the rest to the data log */
} H5FD_journal_raw_t;

typedef enum H5FD_journal_materialize_t {
    H5FD_JOURNAL_MATERIALIZE_CLOSE = 0, /* at close the file becomes a plain HDF5 file */
    H5FD_JOURNAL_MATERIALIZE_NEVER = 1  /* close leaves it in log form, guarded against plain HDF5 */
} H5FD_journal_materialize_t;

/* The communicator of a file whose FAPL sets none with H5Pset_mpi_params,
 * when the driver is chosen by name (HDF5_DRIVER) in a program that has
 * initialised MPI itself (the driver never does).  H5Pset_fapl_journal
 * without a communicator always opens serially. */
typedef enum H5FD_journal_mpi_comm_t {
    H5FD_JOURNAL_MPI_COMM_WORLD = 0, /* every rank opens the file together */
    H5FD_JOURNAL_MPI_COMM_SELF = 1   /* each process opens it alone, as a serial file */
} H5FD_journal_mpi_comm_t;

typedef struct H5FD_journal_fapl_t {
    int32_t  version;                              /* H5FD_JOURNAL_FAPL_VERSION */
    char     journal_path[H5FD_JOURNAL_PATH_MAX];  /* "" = "<file>.jnl" */
    uint32_t ring_buffers;                         /* >= 2; default 4 */
    uint64_t buffer_size;                          /* bytes, >= 4096; default 1 MiB */
    H5FD_journal_io_t io_engine;                   /* default AUTO */
    hbool_t  durable;                              /* fdatasync at commits; default true */
    uint64_t checkpoint_bytes;                     /* journal size that triggers a checkpoint; default 0:
                                                      16 MiB when durable, 1 MiB when not */
    H5FD_journal_recovery_t recovery;              /* default AUTO */
    H5FD_journal_raw_t raw;                        /* default INPLACE (since version 2) */
    H5FD_journal_materialize_t materialize;        /* default CLOSE (since version 2) */
    H5FD_journal_mpi_comm_t mpi_comm;              /* default SELF (since version 3) */
    uint32_t mpi_timeout;                          /* seconds a rank waits for the others in the
                                                      driver's collective steps; 0 = forever;
                                                      default 600 (since version 3) */
    uint32_t reader_wait;                          /* milliseconds live readers' snapshots may hold
                                                      off a checkpoint, close or recovery;
                                                      default 5000 (since version 4) */
    uint32_t durable_within_ms;                    /* with durable: 0 = each commit is durable when
                                                      H5Fflush returns; N = commits become durable
                                                      in the background, in order, within N ms
                                                      (1 to 3600000); default 0 (since version 5) */
} H5FD_journal_fapl_t;

/* The driver id, registered on first use. */
#define H5FD_JOURNAL (H5FD_journal_init())

/* Registers the driver (once) and returns its id, or H5I_INVALID_HID. */
H5JOURNAL_API hid_t H5FD_journal_init(void);

/* Fills *config with the defaults. */
H5JOURNAL_API herr_t H5Pget_fapl_journal_defaults(H5FD_journal_fapl_t *config);

/* Selects the driver on a file access property list.  config may be NULL
 * for the defaults. */
H5JOURNAL_API herr_t H5Pset_fapl_journal(hid_t fapl_id, const H5FD_journal_fapl_t *config);

/* Copies the driver's configuration out of a file access property list. */
H5JOURNAL_API herr_t H5Pget_fapl_journal(hid_t fapl_id, H5FD_journal_fapl_t *config /*out*/);

/* What an open file has done through the driver in this session. */
typedef struct H5FD_journal_stats_t {
    uint64_t commits;              /* transactions committed */
    uint64_t checkpoints;          /* generations checkpointed into the file */
    uint64_t raw_bytes_logged;     /* raw data appended to the data log */
    uint64_t raw_index_bytes;      /* memory of the data log's index, now */
    uint64_t raw_index_peak_bytes; /* and at its largest */
    uint64_t durable_commits;      /* of commits, those durable (all of them with durable=true;
                                      with durable_within_ms, those the background syncs covered;
                                      under MPI, rank 0's count is the job's) */
} H5FD_journal_stats_t;

/* Fills *stats for file_id, a file open through the journal driver.  On
 * failure HDF5's error stack says why, as for every function here, and
 * errno is EINVAL: stats is NULL, or file_id is not a file open through
 * the driver. */
H5JOURNAL_API herr_t H5Fget_journal_stats(hid_t file_id, H5FD_journal_stats_t *stats /*out*/);

/* Waits until every commit of file_id so far is durable: the file and its
 * journal synced, in that order.  With durable_within_ms, before telling
 * anyone a checkpoint is safe; with durable=false, it makes the commits so
 * far survive a power loss.  Returns the sync's error if one failed, now
 * or in the background, with errno set to the system's (EIO, ENOSPC, ...);
 * errno is EINVAL when file_id is not a file open through the driver.
 * Under MPI it is collective, as H5Fflush is: every rank's writes are made
 * durable, then rank 0's journal. */
H5JOURNAL_API herr_t H5Fwait_journal_durable(hid_t file_id);

#ifdef __cplusplus
}
#endif

#endif /* H5JOURNAL_H */
