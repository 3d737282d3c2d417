// Where each write goes.
//
// THE WRITE-AHEAD RULE.  No write may change, before its transaction is
// durable, a byte that the last committed state could reference: a byte
// below the protected end (image_layers.h).  Writes below it go to the
// journal and the overlay; writes at or above it go in place, unless they
// are shorter than inplace_min(): those are journaled too, because in
// place they would cost a durable commit a second fdatasync.  Commit makes
// in-place bytes durable first, then the journal's COMMIT record.
//
// One exception below the protected end: space HDF5 allocated in this
// session and never wrote, declared at the last commit, takes a write in
// place under a PLACED record (unwritten_space.h).
//
// Raw data may instead go to the data log (RawMode), indexed by DATA
// records in the journal, or be staged (staged_writes.h) when it is small
// and in new space.
#include <algorithm>
#include <cstring>

#include "copy_run.h"
#include "journaled_file.h"

namespace h5j {

static_assert(JournaledFile::kMaxRecordBytes + kWritePayloadHeader <= kMaxPayload);

// What one pass over a vector's pieces tells its routing: a strided write
// of small elements is a million pieces, so each further pass over them
// costs as much as the sieve's copy of their bytes.
struct PieceShape {
  uint64_t bytes = 0;                  // in all
  uint64_t lowest = UINT64_MAX;        // the lowest address
  uint64_t highest_end = 0;            // the end of the highest byte
  bool sorted_and_disjoint = true;     // in address order, none overlapping
  uint64_t widest_gap = 0;             // between neighbours, when sorted and disjoint
};

namespace {

// Sieve spans: what HDF5's sieve buffer does for a driver without vector
// writes.  A sieve span is read, patched and written whole, so it only spans
// gaps of up to kSieveGap, and at most kSieveMax bytes.
constexpr uint64_t kSieveGap = 64 << 10;
constexpr uint64_t kSieveMax = 1 << 20;
// Staging costs about as much per piece as a sieve span costs for this many
// bytes of its span (read, patched, written: about 0.25 ns a byte here,
// against about 70 ns to stage a piece and place it).  So a vector whose
// span holds fewer bytes than this per piece goes in sieve spans even in new
// space: 8-byte elements at a stride of 4 are 8x faster so.
constexpr uint64_t kStagedPieceCost = 256;

PieceShape shape_of(std::span<const RawPiece> pieces) {
  PieceShape shape;
  uint64_t end = pieces.empty() ? 0 : pieces.front().addr;  // of the piece before
  for (const RawPiece& p : pieces) {
    shape.bytes += p.bytes.size();
    shape.lowest = std::min(shape.lowest, p.addr);
    shape.highest_end = std::max(shape.highest_end, p.addr + p.bytes.size());
    if (p.addr < end) shape.sorted_and_disjoint = false;
    else shape.widest_gap = std::max(shape.widest_gap, p.addr - end);
    end = p.addr + p.bytes.size();
  }
  return shape;
}

// Whether the pieces are dense enough in their span that sieve spans cost less
// than staging them (they are sorted: HDF5 gives a selection in order).
bool sieve_cheaper(std::span<const RawPiece> pieces, const PieceShape& shape) {
  if (pieces.size() < 2 || !shape.sorted_and_disjoint) return false;
  uint64_t span = pieces.back().addr + pieces.back().bytes.size() - pieces.front().addr;
  return span / pieces.size() < kStagedPieceCost;
}

// The end j of the sieve span that starts at piece i: pieces [i, j) span at
// most kSieveMax bytes, with no gap over kSieveGap between them.  Sorted
// and disjoint pieces end in address order, so the first bound is a binary
// search; the gaps need a look only when some gap of the vector is wider.
size_t sieve_span_end(std::span<const RawPiece> pieces, size_t i, const PieceShape& shape) {
  uint64_t start = pieces[i].addr;
  auto fits = [&](const RawPiece& p) { return p.addr + p.bytes.size() - start <= kSieveMax; };
  size_t j = size_t(std::partition_point(pieces.begin() + i + 1, pieces.end(), fits) - pieces.begin());
  if (shape.widest_gap <= kSieveGap) return j;
  for (size_t k = i + 1; k < j; ++k)
    if (pieces[k].addr - (pieces[k - 1].addr + pieces[k - 1].bytes.size()) > kSieveGap) return k;
  return j;
}

}  // namespace

Status JournaledFile::write(uint64_t addr, std::span<const std::byte> data, uint32_t tag) {
  H5J_RETURN_IF_ERROR(write_refusal());
  // Metadata is rank 0's to write (PROCESS_0_ONLY, which the driver sets):
  // a follower's copy, taken at its commit, would land after rank 0's newer
  // one.  No HDF5 path reaches a follower with one; one that did would be
  // rank 0's bytes again.
  if (data.empty() || follower_) return guarded([] { return Status::ok(); });  // only the poison to report
  return guarded([&] {
    H5J_RETURN_IF_ERROR(txn_->begin());
    H5J_RETURN_IF_ERROR(write_by_rule(addr, data, tag, inplace_min()));
    // After a failed write the file is poisoned (guarded), and no write
    // will compare with a copy again.
    if (sharing_.journals_changes_only()) last_writes_.keep(addr, data, image_.committed_size);
    tell_background_in_place();
    return txn_->publish_to_followers();
  });
}

Status JournaledFile::write_raw(std::span<const RawPiece> pieces, uint32_t tag) {
  H5J_RETURN_IF_ERROR(write_refusal());
  PieceShape shape = shape_of(pieces);
  return guarded([&] {
    if (shape.bytes == 0) return Status::ok();
    last_writes_.forget(shape.lowest, shape.highest_end);
    // A follower's writes are in rank 0's transaction, which only rank 0 opens.
    H5J_RETURN_IF_ERROR(follower_ ? catch_up() : txn_->begin());
    H5J_RETURN_IF_ERROR(write_raw_by_mode(pieces, shape, tag));
    tell_background_in_place();
    return follower_ ? Status::ok() : txn_->publish_to_followers();
  });
}

void JournaledFile::tell_background_in_place() {
  if (background_ && base_->in_place().untold_bytes() >= kTellInPlaceEvery)
    background_->wrote(base_->take_untold_in_place_bytes());
}

Status JournaledFile::write_by_rule(uint64_t addr, std::span<const std::byte> data, uint32_t tag, uint64_t inplace_min) {
  uint64_t floor = image_.protected_end();
  if (txn_->placed_allowed() && addr < floor && data.size() >= inplace_min && unwritten_.declared(addr, addr + data.size())) {
    H5J_RETURN_IF_ERROR(write_placed(addr, data));
  } else {
    size_t journaled = addr >= floor ? 0 : size_t(std::min<uint64_t>(data.size(), floor - addr));
    if (data.size() - journaled < inplace_min) journaled = data.size();
    // Over staged bytes, in place would be overwritten by them at the commit.
    if (staged_.touches(addr + journaled, addr + data.size())) journaled = data.size();
    if (journaled > 0) H5J_RETURN_IF_ERROR(journal_changes(addr, data.subspan(0, journaled), tag));
    if (journaled < data.size()) H5J_RETURN_IF_ERROR(write_in_place(addr + journaled, data.subspan(journaled)));
  }
  unwritten_.written(addr, data.size());
  image_.logical_size = std::max<uint64_t>(image_.logical_size, addr + data.size());
  txn_->changed();
  return Status::ok();
}

Status JournaledFile::write_placed(uint64_t addr, std::span<const std::byte> data) {
  // A declared range was never written, so no layer holds its bytes (the
  // commit's ZERO records stay out of the live overlay).
  assert(!image_.overlay.intersects(addr, addr + data.size()) && !image_.raw.touches(addr, addr + data.size()));
  H5J_RETURN_IF_ERROR(write_in_place(addr, data));
  return txn_->append_placed(addr, data.size());
}

Status JournaledFile::write_in_place(uint64_t addr, std::span<const std::byte> data) {
  // Large writes start on their way to the disk now, while HDF5 produces
  // the next ones, instead of all at the commit's fdatasync.  Not under
  // durable_within: its syncs measure the disk's rate by their time, which
  // bytes already written back would shorten (background_sync.h).
  bool early = opts_.ring.durable && !background_ && pending_.starts_writeback(addr, data.size());
  H5J_RETURN_IF_ERROR(early ? base_->write_starting_writeback(addr, data) : base_->write_at(addr, data));
  pending_.wrote_in_place();
  return Status::ok();
}

Status JournaledFile::journal_bytes(uint64_t addr, std::span<const std::byte> data, uint32_t tag) {
  for (uint64_t done = 0; done < data.size();) {
    auto piece = data.subspan(done, std::min<uint64_t>(data.size() - done, kMaxRecordBytes));
    auto at = txn_->records().append_write(addr + done, tag, piece);
    if (!at) return at.status();
    image_.journaled(addr + done, piece.size(), *at);
    done += piece.size();
  }
  return Status::ok();
}

Status JournaledFile::journal_changes(uint64_t addr, std::span<const std::byte> data, uint32_t tag) {
  if (!last_writes_.changed_runs(addr, data, changed_runs_)) return journal_bytes(addr, data, tag);
  for (const LastWrites::Run& run : changed_runs_)
    H5J_RETURN_IF_ERROR(journal_bytes(addr + run.offset, data.subspan(run.offset, run.length), tag));
  return Status::ok();
}

Status JournaledFile::write_raw_by_mode(std::span<const RawPiece> pieces, const PieceShape& shape, uint32_t tag) {
  if (opts_.raw_mode == RawMode::kLog) return append_raw(pieces);
  if (sharing_.lands_single_pieces_at_once() && pieces.size() == 1) return write_piece_under_mpi(pieces[0], tag);
  // Serially, kInPlace gathers sieve spans, unless every piece is in new space
  // and the pieces are sparse: then staging (stages()) coalesces them at
  // placing, across calls, with no read of the gaps.  Under MPI a sieve span's
  // gaps may hold other ranks' bytes, which writing the sieve span back would
  // overwrite with stale ones (why HDF5 turns its sieve buffer off in
  // parallel), so every rank does what kAuto does, and stages its small
  // pieces in new space.
  if (opts_.raw_mode == RawMode::kInPlace && sharing_.may_write_gaps() &&
      (pieces.size() == 1 || shape.lowest < image_.protected_end() || sieve_cheaper(pieces, shape)))
    return write_sieved(pieces, shape, tag);
  // kAuto: large pieces in new space in place, runs of the others to the log.
  uint64_t min = std::max<uint64_t>(opts_.inplace_min_bytes, 1);
  return log_all_but(
      pieces,
      [&](const RawPiece& p) {
        return p.addr >= image_.protected_end() && p.bytes.size() >= min &&
               !staged_.touches(p.addr, p.addr + p.bytes.size());
      },
      [&](const RawPiece& p) { return write_by_rule(p.addr, p.bytes, tag, inplace_min()); });
}

// A write of one piece lands at once, never staged: HDF5 has rank 0 write
// a dataset's fill values alone, then an MPI_Barrier the driver cannot see,
// then every rank its data; a staged fill could land after that data.
// Rank 0 journals it if small; a follower writes it in place if it can.
Status JournaledFile::write_piece_under_mpi(const RawPiece& p, uint32_t tag) {
  if (!follower_) return write_by_rule(p.addr, p.bytes, tag, inplace_min());
  uint64_t end = p.addr + p.bytes.size();
  if (p.addr < image_.protected_end() || staged_.touches(p.addr, end)) return append_raw(std::span(&p, 1));
  image_.logical_size = std::max(image_.logical_size, end);
  return write_in_place(p.addr, p.bytes);
}

Status JournaledFile::log_all_but(std::span<const RawPiece> pieces, const std::function<bool(const RawPiece&)>& in_place,
                                  const std::function<Status(const RawPiece&)>& write_in_place) {
  size_t from = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (!in_place(pieces[i])) continue;
    H5J_RETURN_IF_ERROR(append_raw(pieces.subspan(from, i - from)));
    H5J_RETURN_IF_ERROR(write_in_place(pieces[i]));
    from = i + 1;
  }
  return append_raw(pieces.subspan(from));
}

// The vector's pieces are in place (above the protected end) if the vector
// as a whole is worth its own fdatasync: many small pieces of one large
// write must not each count as small.
Status JournaledFile::write_sieved(std::span<const RawPiece> pieces, const PieceShape& shape, uint32_t tag) {
  assert(sharing_.may_write_gaps());  // a sieve span's gaps are this process's alone
  uint64_t inplace_min = shape.bytes >= this->inplace_min() ? 0 : this->inplace_min();
  if (!shape.sorted_and_disjoint) {
    for (const RawPiece& p : pieces) H5J_RETURN_IF_ERROR(write_by_rule(p.addr, p.bytes, tag, inplace_min));
    return Status::ok();
  }
  for (size_t i = 0; i < pieces.size();) {
    size_t j = sieve_span_end(pieces, i, shape);
    uint64_t start = pieces[i].addr;
    if (j == i + 1) {
      H5J_RETURN_IF_ERROR(write_by_rule(start, pieces[i].bytes, tag, inplace_min));
    } else {
      if (!sieve_span_) sieve_span_.reset(new std::byte[kSieveMax]);  // default-initialized: not zeroed
      std::span<std::byte> span_bytes(sieve_span_.get(), pieces[j - 1].addr + pieces[j - 1].bytes.size() - start);
      H5J_RETURN_IF_ERROR(read_layers(start, span_bytes));
      for (const RawPiece& p : pieces.subspan(i, j - i))
        copy_run(span_bytes.data() + (p.addr - start), p.bytes.data(), p.bytes.size());
      H5J_RETURN_IF_ERROR(write_by_rule(start, span_bytes, tag, inplace_min));
    }
    i = j;
  }
  return Status::ok();
}

// Raw data in the data log: the bytes there, their index (DATA records,
// one per pattern, with their CRC) in the journal's open transaction, and
// the raw layer pointing at them.
Status JournaledFile::append_raw(std::span<const RawPiece> pieces) {
  PatternBuilder builder;
  std::vector<std::span<const std::byte>>& gathered = raw_gathered_;
  gathered.clear();
  uint64_t gathered_bytes = 0;
  auto emit = [&]() -> Status {
    size_t used = 0;
    for (const RawPattern& p : builder.take()) {
      // Each pattern takes the next p.bytes() gathered bytes: pieces
      // [used, last], the last one cut to what the pattern needs and its rest
      // left for the next pattern.
      size_t last = used;
      uint64_t need = p.bytes();
      for (; need > gathered[last].size(); ++last) need -= gathered[last].size();
      std::span<const std::byte> rest = gathered[last].subspan(size_t(need));
      gathered[last] = gathered[last].subspan(0, size_t(need));
      H5J_RETURN_IF_ERROR(append_pattern(p, Gather(gathered).subspan(used, last - used + 1)));
      gathered[last] = rest;
      used = rest.empty() ? last + 1 : last;
    }
    gathered.clear();
    gathered_bytes = 0;
    return Status::ok();
  };
  for (const RawPiece& piece : pieces) {
    for (uint64_t done = 0; done < piece.bytes.size();) {
      auto chunk = piece.bytes.subspan(done, std::min<uint64_t>(piece.bytes.size() - done, kMaxRecordBytes));
      uint64_t addr = piece.addr + done;
      if (gathered_bytes + chunk.size() > kMaxRecordBytes || !builder.add(addr, chunk.size())) {
        H5J_RETURN_IF_ERROR(emit());
        builder.add(addr, chunk.size());
      }
      gathered.push_back(chunk);
      gathered_bytes += chunk.size();
      done += chunk.size();
    }
  }
  return emit();
}

Status JournaledFile::append_pattern(const RawPattern& pattern, Gather bytes) {
  image_.logical_size = std::max<uint64_t>(image_.logical_size, pattern.end());
  unwritten_.written(pattern);
  if (txn_) txn_->changed();  // a follower's changes are in rank 0's transaction
  if (stages(pattern)) {
    assert(!image_.overlay.intersects(pattern.addr, pattern.end()));  // the overlay ends below the protected end
    staged_.add(pattern, bytes);
    // Placed early, the staged bytes reach the disk while HDF5 produces the
    // next ones, instead of all at the commit's sync; by then runs have
    // coalesced into large writes.  It also bounds the memory staging takes.
    return staged_.full() ? place_staged_below(UINT64_MAX) : Status::ok();
  }
  auto index = data_logs_.writer().append_extent(current_txn(), opts_.data_log, pattern, bytes);
  if (!index) return index.status();
  if (follower_) follower_->hand_to_owner(*index);  // rank 0 journals it at the commit
  else H5J_RETURN_IF_ERROR(txn_->records().append_data(*index));
  image_.logged(pattern, index->log, index->log_offset);
  pending_.logged();
  // Under MPI the other ranks read the record from the file (refresh_peers).
  if (sharing_.publishes_records()) H5J_RETURN_IF_ERROR(data_logs_.writer().publish());
  stats_.raw_bytes_logged += pattern.bytes();
  stats_.raw_index_peak_bytes = std::max<uint64_t>(stats_.raw_index_peak_bytes, image_.raw.memory_bytes());
  return Status::ok();
}

// raw=log keeps every byte in the log, as asked, and serial raw=auto logs
// small pieces.  When staged bytes are placed, and what other ranks see
// before: design.md §10.
bool JournaledFile::stages(const RawPattern& pattern) const {
  return sharing_.stages(opts_.raw_mode) && pattern.addr >= image_.protected_end();
}

Status JournaledFile::place_staged_below(uint64_t limit) {
  if (staged_.empty()) return Status::ok();
  // Serially the gaps between staged runs are new space, this transaction's
  // alone; under MPI they may be another rank's (replay.h).
  H5J_RETURN_IF_ERROR(staged_.place(*base_, limit, sharing_.gaps(), opts_.ring.durable, *apply_buffers().take()));
  pending_.wrote_in_place();
  return Status::ok();
}

Status JournaledFile::set_size(uint64_t size) {
  return guarded([&] {
    // Cut bytes must read as zeros if the file grows again: staged bytes
    // beyond the new end are dropped, the rest go in place now.  (Every rank
    // cuts to the same size in HDF5's collective truncate, and no rank writes
    // at or past it here, so this races with no rank's ftruncate.)
    if (size < image_.logical_size) H5J_RETURN_IF_ERROR(place_staged_below(size));
    if (follower_) {  // rank 0 sizes the file
      image_.logical_size = size;
      return Status::ok();
    }
    if (!txn_ || size == image_.logical_size) return Status::ok();  // read-only or passive
    H5J_RETURN_IF_ERROR(resize(size));
    return txn_->publish_to_followers();
  });
}

Status JournaledFile::resize(uint64_t size) {
  uint64_t old_size = image_.logical_size;
  image_.logical_size = size;
  txn_->changed();
  if (size > old_size) return Status::ok();
  last_writes_.forget(size, old_size);
  // Cut bytes read as zeros through the overlay (below), not the file: a
  // write there must not go in place as if never written.
  unwritten_.written(size, old_size - size);
  // Shrinking: the cut bytes must read as zeros if the file grows again, as
  // after ftruncate.  Below the protected end the file still holds bytes the
  // committed state needs, so the zeroing is journaled (a ZERO record);
  // above it, the file is cut for real.
  uint64_t floor = image_.protected_end();
  uint64_t zero_end = std::min(old_size, floor);
  if (size < zero_end) {
    H5J_RETURN_IF_ERROR(txn_->begin());
    H5J_RETURN_IF_ERROR(txn_->records().append_zero(size, zero_end - size));
    image_.zeroed(size, zero_end - size);
  }
  auto physical = base_->size();
  if (!physical) return physical.status();
  uint64_t cut = std::max(size, image_.protected_end());
  if (*physical > cut) H5J_RETURN_IF_ERROR(base_->truncate(cut));
  return Status::ok();
}

}  // namespace h5j
