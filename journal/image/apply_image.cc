#include "apply_image.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <span>

#include "aligned_buffer.h"
#include "gathered_reads.h"

namespace h5j {

void erase_runs(ExtentMap& overlay, const RawPattern& data) {
  if (overlay.intersects(data.addr, data.end()))
    data.for_each_run([&](uint64_t a, uint64_t n, uint64_t) { overlay.erase(a, n); });
}

void add_to_image(RawLayer& raw, ExtentMap& overlay, const RawPattern& data, uint32_t log, uint64_t offset) {
  erase_runs(overlay, data);
  raw.insert(data, log, offset);
}

namespace {

// Coalesces bytes given in increasing address order into writes of up to
// kLongestApplyWrite bytes.  The caller fills the room next() gives and
// names what it filled with keep(): only kept bytes are written, because a
// raw bucket's gaps may hold bytes that are not the layer's (committed
// ones, or another rank's).  With GapFill::kFromFile, kept ranges less
// than kFillGap apart are written as one, their gaps read back from the
// file first, as HDF5's sieve buffer does: 8-byte runs 512 bytes apart
// are one write, not one each.  Only where the gaps hold nothing committed
// (replay.h).
class RunWriter {
 public:
  // A gap costs its bytes read and written again; a separate write costs a
  // system call, about as much as 4 KiB of copying.
  static constexpr uint64_t kFillGap = 4 << 10;
  // The buffer starts this small, then grows once, to kLongestApplyWrite:
  // a close or checkpoint of a few KiB of metadata takes its buffer from
  // the heap, where a larger one would be a mapping of its own, a page
  // fault to make and a TLB flush to undo (about 0.1 ms each here); a
  // longer run takes the one huge page that serves every run after it.
  static constexpr size_t kFirstRun = 64 << 10;
  // `run` is the caller's buffer to gather the writes in, allocated on
  // first use if empty and left to the caller.
  RunWriter(File& base, const Progress& progress, AlignedBuffer& run, GapFill gaps)
      : base_(base), progress_(progress), run_(run), gaps_(gaps) {}

  // The file written: also where the apply's buffers come from.
  File& file() const { return base_; }
  // Room for n <= kLongestApplyWrite bytes at `addr`, above the last room.
  Result<std::span<std::byte>> next(uint64_t addr, size_t n) {
    assert(n <= kLongestApplyWrite);
    if (len_ > 0 && (addr_ + len_ != addr || len_ + n > kLongestApplyWrite)) H5J_RETURN_IF_ERROR(flush());
    if (len_ + n > run_.size()) H5J_RETURN_IF_ERROR(grow(len_ + n));
    if (len_ == 0) addr_ = addr;
    std::span<std::byte> room(run_.data() + len_, n);
    len_ += n;
    return room;
  }
  // Bytes [addr, addr + n) of the last room are to be written; called in
  // increasing address order.
  void keep(uint64_t addr, uint64_t n) {
    assert(addr >= addr_ && addr + n <= addr_ + len_);
    reach_ = std::max(reach_, addr + n);
    if (!kept_.empty() && kept_.back().addr + kept_.back().len == addr) kept_.back().len += n;
    else kept_.push_back({addr, n});
  }
  // [addr, addr + len) in rooms of up to kLongestApplyWrite bytes, each
  // filled by fill(room, its offset in the range) and kept once filled: a
  // room `fill` fails to fill is not kept.
  template <class Fill>
  Status put(uint64_t addr, uint64_t len, const Fill& fill) {
    for (uint64_t done = 0; done < len;) {
      size_t n = size_t(std::min<uint64_t>(len - done, kLongestApplyWrite));
      auto room = next(addr + done, n);
      if (!room) return room.status();
      H5J_RETURN_IF_ERROR(fill(*room, done));
      keep(addr + done, n);
      done += n;
    }
    return Status::ok();
  }
  // The end of the highest byte kept so far.
  uint64_t reach() const { return reach_; }
  // The file's next run of data at or after `addr` (File::data_run), with
  // what this writer holds there written first: bytes it was given are
  // data too, though the file has not had them yet.
  Result<File::DataRun> data_run(uint64_t addr) {
    if (len_ > 0 && addr_ + len_ > addr) H5J_RETURN_IF_ERROR(flush());
    return base_.data_run(addr);
  }
  Status flush() {
    Status s;
    for (size_t i = 0; i < kept_.size() && s;) {
      size_t j = i + 1;  // kept_[i, j) are written as one
      while (gaps_ == GapFill::kFromFile && j < kept_.size() && kept_[j].addr - end(kept_[j - 1]) <= kFillGap) ++j;
      if (j > i + 1) s = fill_gaps(i, j);
      uint64_t from = kept_[i].addr, to = end(kept_[j - 1]);
      if (s) s = base_.write_at(from, std::span<const std::byte>(run_.data() + (from - addr_), to - from));
      i = j;
    }
    for (const RawLayer::Range& r : kept_) done_ += r.len;
    kept_.clear();
    len_ = 0;
    if (progress_) progress_(done_);
    return s;
  }

 private:
  static uint64_t end(const RawLayer::Range& r) { return r.addr + r.len; }
  // A buffer of at least `need` <= kLongestApplyWrite bytes, holding the
  // run so far.
  Status grow(size_t need) {
    const size_t size = need <= kFirstRun ? kFirstRun : kLongestApplyWrite;
    auto bigger = base_.allocate_buffer(size, size == kLongestApplyWrite ? Pages::kHuge : Pages::kSystem);
    if (!bigger) return bigger.status();
    if (len_ > 0) std::memcpy(bigger->data(), run_.data(), len_);
    run_ = std::move(*bigger);
    return Status::ok();
  }
  // The gaps between kept_[i, j), from the file (zeros past its end).
  Status fill_gaps(size_t i, size_t j) {
    uint64_t from = kept_[i].addr;
    gap_bytes_.resize(end(kept_[j - 1]) - from);
    auto got = base_.read_at(from, gap_bytes_);
    if (!got) return got.status();
    std::fill(gap_bytes_.begin() + ptrdiff_t(*got), gap_bytes_.end(), std::byte(0));
    for (size_t k = i; k + 1 < j; ++k) {
      uint64_t a = end(kept_[k]), n = kept_[k + 1].addr - a;
      std::memcpy(run_.data() + (a - addr_), gap_bytes_.data() + (a - from), n);
    }
    return Status::ok();
  }

  File& base_;
  const Progress& progress_;
  AlignedBuffer& run_;
  GapFill gaps_;
  std::vector<RawLayer::Range> kept_;
  std::vector<std::byte> gap_bytes_;
  uint64_t addr_ = 0, done_ = 0, reach_ = 0;
  size_t len_ = 0;
};

// Each bucket of the layer is laid onto the writer's room, and the ranges
// its extents cover are kept.
Status apply_raw(const RawLayer& raw, uint64_t logical_size, const DataLogSource& data_log, RunWriter& out,
                 const BucketFilter& mine = nullptr) {
  std::vector<RawLayer::Range> covered;
  Status status;
  raw.for_each_bucket([&](uint64_t addr, uint64_t len) {
    if (!status || addr >= logical_size) return;  // beyond the end: dropped by the size
    if (mine && !mine(addr)) return;
    auto room = out.next(addr, size_t(std::min(len, logical_size - addr)));
    if (!room) {
      status = room.status();
      return;
    }
    if (status = raw.lay_onto(addr, *room, data_log, &covered); !status) return;  // unread: nothing to keep
    for (const RawLayer::Range& r : covered) out.keep(r.addr, r.len);
  });
  return status;
}

// Zeros over [addr, end), written only where the file holds data: a hole
// reads as zeros already.  A contiguous dataset is allocated whole and may
// be written in a few places (HDF5 leaves the rest as holes when it has no
// fill value to write), so a ZERO record of its unwritten space may span
// gigabytes of which a few MiB hold bytes an uncommitted write left.
// Writing all of it would take the sparse file's whole size on disk, and
// fail on a disk with room for what it holds.
Status write_zeros(uint64_t addr, uint64_t end, RunWriter& out) {
  while (addr < end) {
    auto run = out.data_run(addr);
    if (!run) return run.status();
    uint64_t from = std::max(addr, run->first), to = std::min(end, run->end);
    if (from >= to) return Status::ok();  // a hole to the end, or no data past `addr`
    H5J_RETURN_IF_ERROR(out.put(from, to - from, [](std::span<std::byte> room, uint64_t) {
      std::fill(room.begin(), room.end(), std::byte(0));
      return Status::ok();
    }));
    addr = to;
  }
  return Status::ok();
}

// An overlay extent's bytes from the journal, into the writer: a small
// one from `gathered`, as its range `*next`, a large one read now.
Status put_journaled(const ExtentMap::Extent& e, const ByteSource& journal, const GatheredReads& gathered,
                     size_t* next, RunWriter& out) {
  if (!GatheredReads::gathers(e.len))
    return out.put(e.addr, e.len, [&](std::span<std::byte> room, uint64_t done) {
      return journal(ExtentMap::source_at(e.src, done), room);
    });
  std::span<const std::byte> bytes = gathered.range((*next)++);
  return out.put(e.addr, e.len, [&](std::span<std::byte> room, uint64_t done) {
    std::memcpy(room.data(), bytes.data() + done, room.size());
    return Status::ok();
  });
}

// Writes a slice of the overlay, its extents in address order, each cut to
// start at or after `from` and, if journaled, to end by logical_size.
// Zeros past the file's end are not written: no byte there was written
// (`physical_end`, and nothing this apply keeps reaches past out.reach()),
// so they read as zeros once the size is set.  A ZERO record of space
// never written may span gigabytes that the file never reached.
// An overlay extent, and its bytes if the caller holds them (HeldBytes).
struct SlicePiece {
  ExtentMap::Extent e;
  std::span<const std::byte> held;
};

Status put_held(const SlicePiece& p, RunWriter& out) {
  return out.put(p.e.addr, p.e.len, [&](std::span<std::byte> room, uint64_t done) {
    std::memcpy(room.data(), p.held.data() + done, room.size());
    return Status::ok();
  });
}

Status apply_slice(std::span<const SlicePiece> slice, uint64_t logical_size, uint64_t physical_end,
                   const ByteSource& journal, GatheredReads& gathered, RunWriter& out) {
  H5J_RETURN_IF_ERROR(gathered.read_all(journal, out.file()));
  size_t next = 0;
  for (const SlicePiece& p : slice) {
    const ExtentMap::Extent& e = p.e;
    if (!p.held.empty()) {
      H5J_RETURN_IF_ERROR(put_held(p, out));
      continue;
    }
    if (e.src != ExtentMap::kZeroSource) {
      H5J_RETURN_IF_ERROR(put_journaled(e, journal, gathered, &next, out));
      continue;
    }
    uint64_t end = std::min(std::max(physical_end, out.reach()), logical_size);
    if (e.addr < end) H5J_RETURN_IF_ERROR(write_zeros(e.addr, std::min(e.addr + e.len, end), out));
  }
  gathered.clear();
  return Status::ok();
}

// The overlay's bytes in [from, logical_size), a slice at a time: the
// journal sources of a slice's small extents are read first, in journal
// order (gathered_reads.h), but for the bytes `held` serves.
Status apply_overlay(const ExtentMap& overlay, uint64_t from, uint64_t logical_size, uint64_t physical_end,
                     const ByteSource& journal, RunWriter& out, GatheredReads& gathered,
                     const HeldBytes& held = nullptr) {
  std::vector<SlicePiece> slice;
  gathered.clear();  // a failed apply may have left ranges queued
  Status status;
  overlay.for_each([&](const ExtentMap::Extent& whole) {
    uint64_t addr = std::max(whole.addr, from), end = std::min(whole.addr + whole.len, logical_size);
    if (!status || addr >= end) return;
    SlicePiece p{{addr, whole.addr + whole.len - addr, ExtentMap::source_at(whole.src, addr - whole.addr)}, {}};
    if (p.e.src != ExtentMap::kZeroSource) {
      p.e.len = end - addr;
      if (held) p.held = held(p.e.addr, p.e.len);
      if (p.held.empty() && GatheredReads::gathers(p.e.len)) gathered.add(p.e.src, p.e.len);
    }
    slice.push_back(p);
    if (gathered.full() || slice.size() >= GatheredReads::kMaxRanges) {
      status = apply_slice(slice, logical_size, physical_end, journal, gathered, out);
      slice.clear();
    }
  });
  return status ? apply_slice(slice, logical_size, physical_end, journal, gathered, out) : status;
}

// The caller's buffers (ApplyBuffers), or `own` for a caller that keeps none.
ApplyBuffers& kept_or(ApplyBuffers* kept, ApplyBuffers& own) { return kept != nullptr ? *kept : own; }

}  // namespace

Status write_overlay(const ExtentMap& overlay, uint64_t from, uint64_t logical_size, const ByteSource& journal,
                     File& base, ApplyBuffers* kept) {
  auto physical_end = base.size();
  if (!physical_end) return physical_end.status();
  ApplyBuffers own;
  ApplyBuffers& buffers = kept_or(kept, own);
  const Progress none;  // RunWriter keeps a reference
  RunWriter out(base, none, buffers.run, GapFill::kLeave);
  H5J_RETURN_IF_ERROR(apply_overlay(overlay, from, logical_size, *physical_end, journal, out, buffers.gathered));
  return out.flush();
}

Status apply_raw_layer(const RawLayer& raw, uint64_t limit, const DataLogSource& data_log, File& base, GapFill gaps,
                       const BucketFilter& mine, ApplyBuffers* kept) {
  ApplyBuffers own;
  const Progress none;  // RunWriter keeps a reference
  RunWriter out(base, none, kept_or(kept, own).run, gaps);
  H5J_RETURN_IF_ERROR(apply_raw(raw, limit, data_log, out, mine));
  return out.flush();
}

Status apply_image(const RawLayer& raw, const ExtentMap& overlay, uint64_t logical_size, const ByteSource& journal,
                   const DataLogSource& data_log, File& base, const Progress& progress, ApplyBuffers* kept,
                   const HeldBytes& held) {
  auto physical_end = base.size();
  if (!physical_end) return physical_end.status();
  ApplyBuffers own;
  ApplyBuffers& buffers = kept_or(kept, own);
  RunWriter out(base, progress, buffers.run, GapFill::kLeave);
  // The overlay's bytes land over the raw layer's: RunWriter issues its
  // writes in the order it is given them.
  H5J_RETURN_IF_ERROR(apply_raw(raw, logical_size, data_log, out));
  H5J_RETURN_IF_ERROR(apply_overlay(overlay, 0, logical_size, *physical_end, journal, out, buffers.gathered, held));
  H5J_RETURN_IF_ERROR(out.flush());
  auto size = base.size();
  if (!size) return size.status();
  return *size != logical_size ? base.truncate(logical_size) : Status::ok();
}

}  // namespace h5j
