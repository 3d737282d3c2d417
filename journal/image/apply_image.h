// Applying an image to the file: the data-log extents of a raw layer, then
// the journal bytes of an overlay over them, in address order and coalesced
// into large writes.  Replay's plan (recovery/replay.h), checkpoints, the
// MPI checkpoint's shares and staged writes all write through here, and
// add_to_image is the one way an image is built.
#pragma once

#include <cstdint>
#include <functional>

#include "aligned_buffer.h"
#include "extent_map.h"
#include "file.h"
#include "gathered_reads.h"
#include "huge_pages.h"
#include "raw_layer.h"

namespace h5j {

// Told how many of the bytes to apply are done, as they are written.
using Progress = std::function<void(uint64_t done)>;

// Adds one committed record to an image: a DATA record's pattern to `raw`
// (erasing what `overlay` holds there, which it supersedes), any other to
// `overlay`.  The one way both replay and the live writer build an image,
// so its invariant (raw_layer.h) holds in both.
void add_to_image(RawLayer& raw, ExtentMap& overlay, const RawPattern& data, uint32_t log, uint64_t offset);
// Erases from `overlay` the runs `data` writes.
void erase_runs(ExtentMap& overlay, const RawPattern& data);

// Whether the bytes between the runs an apply writes may be read back from
// the file and written with them, or must be left alone.  Only bytes that
// hold nothing committed may be rewritten: a write torn by a crash may
// leave garbage in what it covers, and no record could bring a committed
// gap byte back (the crash-state explorer's torn writes found this when
// replay filled gaps).  So: kFromFile for staged bytes placed serially
// (their gaps lie in new space, and the commit that covers them syncs them
// first); kLeave everywhere else, and under MPI, where another rank may be
// writing a gap.
enum class GapFill { kFromFile, kLeave };

// The longest write an apply makes, and so the most its `run` buffer
// grows to (apply_image.cc, RunWriter): one huge page (huge_pages.h).
// Longer writes save nothing: a write of 1 MiB costs its system call once
// per 250 us of copying.  The buffer is new pages to the process, each a
// fault at first touch (13 us on the benchmark's virtual machines): in
// small pages, doubling from 64 KiB to 1 MiB took 496 faults, 6 ms of a
// session of W4's 64 KiB steps; as one huge page it takes one.
inline constexpr size_t kLongestApplyWrite = kHugePage;

// The buffers an apply works in.  A caller that applies often (a live
// writer's checkpoints, early write-backs and placings of staged bytes)
// keeps one and passes it to every apply: their pages are faulted in once
// per session, not at every apply.  Allocated as an apply first needs
// them.
struct ApplyBuffers {
  AlignedBuffer run;       // the writes, gathered (RunWriter)
  GatheredReads gathered;  // the journal bytes of small extents (gathered_reads.h)
};

// Bytes of the image its caller holds in memory: the image's bytes
// [addr, addr + len) if it holds them all, else an empty span
// (LastWrites::held).  An overlay extent held is written from there, and
// its journal bytes are not read.
using HeldBytes = std::function<std::span<const std::byte>(uint64_t addr, uint64_t len)>;

// Writes the image into `base` in address order, adjacent bytes coalesced
// into large writes, only the bytes the image covers: first the data-log extents of `raw`, then the journal
// bytes of `overlay` over them; then sets the size to `logical_size`.  Does
// not sync.  Idempotent: applying the same plan twice gives the same file.
// A caller that applies often passes the buffers it keeps (ApplyBuffers).
// `held`, if given, serves what it holds of the overlay.
Status apply_image(const RawLayer& raw, const ExtentMap& overlay, uint64_t logical_size, const ByteSource& journal,
                   const DataLogSource& data_log, File& base, const Progress& progress = nullptr,
                   ApplyBuffers* kept = nullptr, const HeldBytes& held = nullptr);
// Writes `overlay`'s bytes in [from, logical_size) into `base` as
// apply_image does, and nothing else: no raw layer, and no change of size
// beyond what the writes extend.  Does not sync.
Status write_overlay(const ExtentMap& overlay, uint64_t from, uint64_t logical_size, const ByteSource& journal,
                     File& base, ApplyBuffers* kept = nullptr);
// Given a bucket's address (RawLayer::for_each_bucket), whether this writer
// writes it: the writers of an MPI checkpoint split the buckets.
using BucketFilter = std::function<bool(uint64_t bucket)>;
// apply_image for a raw layer alone, its bytes below `limit`, in the
// buckets `mine` picks (all without it), gaps as `gaps` says; the file's
// size is left as it is.
// `kept` as for apply_image.
Status apply_raw_layer(const RawLayer& raw, uint64_t limit, const DataLogSource& data_log, File& base, GapFill gaps,
                       const BucketFilter& mine = nullptr, ApplyBuffers* kept = nullptr);

}  // namespace h5j
