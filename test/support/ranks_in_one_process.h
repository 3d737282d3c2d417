// The collective commit (journal/collective/collective_commit.h) for ranks that share
// one process: the crash-state explorer's, the fault sweep's and the unit
// tests' executor of the same step code MpiSession runs over MPI.
#pragma once

#include <span>

#include "collective_commit.h"
#include "journaled_file.h"

namespace h5j::test {

// Runs collective_commit on every rank, each on a thread of its own.  One
// thread runs at a time, in rank order between two exchanges, so the
// file operations come in the same order at every run: the explorer
// replays them.  ranks[0] is rank 0.
Status commit_in_one_process(std::span<JournaledFile* const> ranks, bool closing);
// collective_wait_durable on every rank, in the same way.
Status wait_durable_in_one_process(std::span<JournaledFile* const> ranks);

}  // namespace h5j::test
