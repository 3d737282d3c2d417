// The commit of one flush (design.md §9; transaction.h, THE ORDER OF
// DURABILITY).
//
// A durable commit with bytes in place would take two device cache
// flushes: the file's fdatasync, then the journal's.  This takes one.  The
// COMMIT names the in-place bytes in INPLACE records with their CRCs; the
// journal is written back to the device without a flush (sync_file_range);
// then the file's fdatasync flushes the device's cache, the journal's bytes
// with it.  Recovery checks the INPLACE CRCs of the generation's last
// transaction and refuses it if the file fails them (replay.h).
//
// A commit left to the background's sync (durable_within: background_sync.h)
// names its in-place bytes the same way, and applies under the first
// conditions below that concern what INPLACE can vouch for, and unless it
// is a close's or one that every MPI rank makes durable (durable_now_:
// OwnerWord).  An MPI follower names its own bytes so too, for rank 0's
// COMMIT (rank_steps.cc).
//
// When it applies; otherwise the file is synced before the COMMIT:
//  - durable, serial (FileSharing), and the journal and the file on one
//    device under a file system whose fdatasync always flushes its cache
//    (FileSystem::shares_cache_flush): decided at open, one_flush_;
//  - something was written in place (else the journal's own sync is the
//    one flush);
//  - not the first commit, whose fsync makes the binding durable too;
//  - nothing in the data log: it grows, and its size needs its own sync;
//  - no cut of the file since the last commit: INPLACE vouches for bytes,
//    not for a size;
//  - the records fit in journal space whose allocation is durable
//    (JournalWriter::fits_in_durable_space): written back, they need none
//    of the journal's metadata;
//  - at most InPlaceWrites::kMaxExtents extents and kMaxBytes bytes in
//    place: past that a second flush costs less than the CRCs;
//  - the file no longer, as commits record it (size_for_commits), than its
//    last sync left it or than the end of the last range INPLACE names:
//    recovery's check of the file's size (file_match.h) must hold whenever
//    the INPLACE CRCs do.
//
// WHICH BYTES AN INPLACE RECORD NAMES: only what the file alone holds in
// the commit's image.  A later write of the transaction journaled over
// in-place bytes (the overlay, the raw layer), and gap bytes a staged run
// wrote back where this commit declares ZERO, are left out; so is anything
// past the logical size.  Recovery reads the INPLACE ranges through its
// plan, which a replay, whole or cut short, writes into the file unchanged,
// so the answer does not depend on how far an earlier recovery got.
#include <algorithm>

#include "crc32c.h"
#include "journaled_file.h"

namespace h5j {
namespace {

// The parts of [e.addr, e.end()) outside `ranges` (sorted, disjoint).
std::vector<InPlaceWrites::Extent> outside(const InPlaceWrites::Extent& e,
                                           const std::vector<UnwrittenSpace::Range>& ranges) {
  std::vector<InPlaceWrites::Extent> out;
  uint64_t at = e.addr;
  for (const UnwrittenSpace::Range& r : ranges) {
    if (r.addr + r.len <= at) continue;
    if (r.addr >= e.end()) break;
    if (r.addr > at) out.push_back({at, r.addr - at, 0, false});
    at = std::max(at, r.addr + r.len);
  }
  if (at < e.end()) out.push_back({at, e.end() - at, 0, false});
  if (out.size() == 1 && out[0].addr == e.addr && out[0].len == e.len) out[0] = e;  // untouched: keeps its CRC
  return out;
}

}  // namespace

std::vector<InPlaceWrites::Extent> JournaledFile::only_in_file(const InPlaceWrites::Extent& e,
                                                              const std::vector<UnwrittenSpace::Range>& unwritten) const {
  InPlaceWrites::Extent below = e;
  if (below.addr >= image_.logical_size) return {};
  if (below.end() > image_.logical_size) below = {e.addr, image_.logical_size - e.addr, 0, false};
  std::vector<UnwrittenSpace::Range> covered;
  image_.overlay.for_each_piece(below.addr, below.len, [&](uint64_t a, uint64_t n, std::optional<uint64_t> src) {
    if (src || image_.raw.touches(a, a + n)) covered.push_back({a, n});
  });
  for (const UnwrittenSpace::Range& r : unwritten)
    if (r.addr < below.end() && r.addr + r.len > below.addr) covered.push_back(r);
  std::sort(covered.begin(), covered.end(), [](auto& x, auto& y) { return x.addr < y.addr; });
  return outside(below, covered);
}

Result<std::optional<std::vector<InPlacePayload>>> JournaledFile::in_place_records(
    const std::vector<UnwrittenSpace::Range>& unwritten) {
  using None = std::optional<std::vector<InPlacePayload>>;
  const InPlaceWrites& writes = base_->in_place();
  if (!(one_flush_ || background_) || !first_commit_done_ || pending_.has_logged() || base_->cut_in_place() ||
      writes.too_many())
    return None();
  // The journal's own sync is a commit's one flush when nothing went in
  // place; a close commits durably whatever the setting.
  if (one_flush_ && !pending_.has_in_place()) return None();
  if (background_ && (closed_ || durable_now_)) return None();
  std::vector<InPlacePayload> out;
  auto from_file = [this](uint64_t offset, std::span<std::byte> bytes) -> Result<bool> {
    auto got = base_->read_at(offset, bytes);
    if (!got) return got.status();
    return *got == bytes.size();
  };
  for (const InPlaceWrites::Extent& e : writes.extents()) {
    for (const InPlaceWrites::Extent& piece : only_in_file(e, unwritten)) {
      uint32_t crc = piece.crc;
      if (!piece.exact) {
        auto read = crc_of_range(piece.addr, piece.len, from_file);
        if (!read) return read.status();
        if (!*read) return None();  // the file is shorter than its writes: sync it
        crc = **read;
      }
      out.push_back({piece.addr, piece.len, mask_crc(crc)});
    }
  }
  if (background_) return None(std::move(out));  // its COMMIT records the size vouched for (size_vouched_for)
  auto size = base_->size_for_commits();
  if (!size) return size.status();
  uint64_t vouched = out.empty() ? 0 : out.back().address + out.back().length;
  if (*size > std::max(vouched, base_->synced_size().value_or(0))) return None();
  uint64_t records = out.size() * record_span(kInPlacePayloadSize) + unwritten.size() * record_span(kZeroPayloadSize) +
                     record_span(kCommitPayloadSize);
  if (!txn_->records().fits_in_durable_space(records)) return None();
  return None(std::move(out));
}

}  // namespace h5j
