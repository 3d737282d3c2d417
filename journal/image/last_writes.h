// Copies of the metadata blocks HDF5 wrote last, so that a rewrite of a
// block journals only the bytes it changes.
//
// HDF5 writes a dirty metadata block whole at each flush.  W4's chunk
// index node, 4 KiB, is rewritten at every step for one new entry; the
// superblock for a new end of file.  Journaled whole, that is 4.6 KiB of
// WRITE records a commit, which the disk writes at every sync and the
// checkpoint reads back.  Compared with the copy, the rewrite journals a
// few runs of tens of bytes instead: WRITE records over part of the older
// record's range.  Nothing in the format changes: replay and readers lay
// the records of a generation in commit order (format.h), so a run lands
// over the bytes the older record gave, as the image reads them.
//
// THE INVARIANT.  A copy kept at [addr, addr + len) holds exactly what the
// image reads there.  Its owner keeps it so: a metadata write replaces the
// copies it overlaps with its own (keep), and every other change of the
// image's bytes drops the copies it overlaps (forget): a raw write, a cut.
// A checkpoint moves bytes from the journal into the file without changing
// what the image reads, so copies outlive it, and it writes a copy's bytes
// from the copy (held): the image of a block rewritten at every commit is
// hundreds of runs, each in another commit's records, and reading them back
// read nearly the whole journal (W4's close at 1,000 steps of 8 KiB: 530 KB
// of journal for 46 KB of image).  Under MPI other ranks'
// writes reach the image without passing this process's writes, so no
// copies are kept there (file_sharing.h).
//
// Worked example.  Commit 7 journals the node at 4096, 4,128 bytes, whole:
// no copy yet.  Step 8 adds an entry: bytes 4100..4101 (the entry count)
// and 4700..4731 change.  Compared with the copy, the write journals
// [4096, 4104) and [4696, 4736) (whole words), 48 bytes, in two records
// of 56 bytes of headers each, instead of 4,184.  A crash after commit 8
// replays 7's record, then 8's two: the node as step 8 wrote it.
//
// Only rewrites are kept: a block the last commit did not hold (new space,
// at or past the committed size) is, in most files, written once, as W3's
// thousands of new objects are.  Kept, its copy is memory the process
// touches for nothing: on these virtual machines a new page costs a fault
// of about 5 us, and W3's 50,000 operations took 2,300 more of them than
// sec2 (docs/performance.md).  A block's first rewrite is journaled whole,
// and from then on only its changes.
//
// Bounded: blocks of at most kMaxCopy bytes, kMaxBytes in all.  A write
// that would pass kMaxBytes drops every copy first: HDF5 rewrites the same
// few blocks at each flush, so they come back at the next one.  kMaxCopy
// is large because a group's local heap is one block, rewritten whole at
// each flush for the names added since: W3's root group holds 10,000
// names in 88 KiB, and with copies of at most 64 KiB that block was 19.6
// of the 20.6 MB its 500 commits journaled.  Comparing 2 MiB costs about
// what writing it once into the page cache does; journaling it costs that
// at every commit, and again on the disk.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

namespace h5j {

class LastWrites {
 public:
  // A changed run of a block: bytes [offset, offset + length) of the write.
  struct Run {
    size_t offset = 0, length = 0;
  };
  static constexpr size_t kMaxCopy = size_t(2) << 20;
  static constexpr size_t kMaxBytes = size_t(8) << 20;
  // Runs apart by at most this are journaled as one: a record costs its
  // header (56 bytes: format.h's record header and WRITE payload header).
  static constexpr size_t kJoinGap = 56;

  // Whether a copy of exactly [addr, addr + data.size()) is kept; if so,
  // `runs` gets the runs in which `data` differs from it, in order (none
  // when it is the same), in whole 8-byte words of the block.
  bool changed_runs(uint64_t addr, std::span<const std::byte> data, std::vector<Run>& runs) const;
  // The image now reads `data` at addr: copies it overlaps are dropped,
  // and it is kept if it is small enough and a rewrite, below
  // `committed_size` (the file's size at the last commit).
  void keep(uint64_t addr, std::span<const std::byte> data, uint64_t committed_size);
  // The image's bytes in [from, to) changed by other means.
  void forget(uint64_t from, uint64_t to);
  // The image's bytes [addr, addr + len) if one copy holds them all, else
  // an empty span: what a checkpoint or a close writes there, without
  // reading back the journal records a rewritten block's runs lie in.
  std::span<const std::byte> held(uint64_t addr, uint64_t len) const;
  size_t bytes() const { return bytes_; }

 private:
  struct Copy {
    std::unique_ptr<std::byte[]> bytes;
    size_t length = 0;
  };
  // The copies overlapping [from, to), in address order.
  std::map<uint64_t, Copy>::iterator first_overlapping(uint64_t from);

  std::map<uint64_t, Copy> copies_;  // by address, disjoint
  size_t bytes_ = 0;                 // of all copies
};

}  // namespace h5j
