// The commit across MPI ranks, written once as its steps (docs/design.md
// §10).  Two executors run this same code: MpiSession over MPI (vfd/mpi/),
// and, in test/, ranks that share one process, for the crash-state
// explorer, the fault sweep and the unit tests.
//
// Rank 0 (the owner) holds the journal; every other rank (a follower) has
// its own data log.  Each step below is some ranks' local work, then an
// exchange after which every rank knows the same outcome; a failure
// anywhere stops the steps that follow on every rank.
//
//  1. Followers place their staged bytes, make their in-place writes and
//     data logs durable, and send rank 0 the DATA records that index their
//     logs (and their logs' sizes).  Under durable_within a follower may
//     instead name its in-place bytes in INPLACE records, left to its own
//     background sync, and says how far that sync has come.  Rank 0 then
//     says whether every rank must sync its writes now after all
//     (OwnerWord::sync_now), and if so they do.
//  2. Rank 0 journals those records with its own transaction and commits.
//     Its word (OwnerWord) says whether the image goes into the file now (a
//     checkpoint is due, or a close of a file that has a journal), and
//     whether the next commit must be durable on every rank.
//  3. Followers follow the journal to the commit.  Without step 4 this is
//     the end.
//  4. Every rank writes its share of the raw layer's buckets into the file
//     and syncs it (JournaledFile::step4_write_raw_share).
//  5. Rank 0 lays the journal overlay over them, syncs, and starts a new
//     generation, or removes the journal when closing.  Then the followers
//     follow it into the new generation, or close.
//
// A crash at any point leaves the file at its last commit: before the
// COMMIT of step 2 is durable, the previous one; after it, this one, and
// steps 4 and 5 only write bytes that the journal still holds until step 5
// starts the new generation.
#pragma once

#include <cstdint>
#include <vector>

#include "rank_exchange.h"
#include "status.h"

namespace h5j {

class JournaledFile;

// The collective commit of `file` on this rank; with `closing`, the
// collective close.
Status collective_commit(JournaledFile& file, RankExchange& ranks, bool closing);

// H5Fwait_journal_durable under MPI: every commit so far durable on every
// rank (design.md §9a).  Collective, as a commit is.
Status collective_wait_durable(JournaledFile& file, RankExchange& ranks);

}  // namespace h5j
