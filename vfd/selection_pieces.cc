#include "selection_pieces.h"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "copy_run.h"

namespace h5j {
namespace {

// One dataspace's selection, as offset/length sequences, a list at a time.
class SequenceWalk {
 public:
  SequenceWalk(hid_t space, size_t element_size) : iter_(H5Ssel_iter_create(space, element_size, 0)) {}
  ~SequenceWalk() {
    if (iter_ >= 0) H5Ssel_iter_close(iter_);
  }
  SequenceWalk(const SequenceWalk&) = delete;
  SequenceWalk& operator=(const SequenceWalk&) = delete;

  bool valid() const { return iter_ >= 0; }
  bool exhausted() const { return done_; }
  // The current sequence: offset and length in bytes; `take` consumes n of
  // its bytes.  Refills the list when it runs out.
  Status fill() {
    if (at_ < count_ || done_) return Status::ok();
    size_t elements = 0;
    if (H5Ssel_iter_get_seq_list(iter_, kList, SIZE_MAX, &count_, &elements, off_.data(), len_.data()) < 0)
      return Status(Code::kInvalid, "H5Ssel_iter_get_seq_list failed");
    at_ = 0;
    done_ = count_ == 0;
    return Status::ok();
  }
  // The current list from its current sequence, walked by value: a loop
  // over a local cursor keeps its place in registers, where one through
  // the walk would reload it after every store into the pieces.
  struct Cursor {
    hsize_t* off;
    size_t* len;
    size_t at, count;
    bool left() const { return at < count; }
    hsize_t offset() const { return off[at]; }
    size_t length() const { return len[at]; }
    void take(size_t n) {  // n of the current sequence's bytes
      if (n == len[at]) {
        ++at;
      } else {
        off[at] += n;
        len[at] -= n;
      }
    }
  };
  Cursor cursor() { return {off_.data(), len_.data(), at_, count_}; }
  void moved_to(const Cursor& c) { at_ = c.at; }

 private:
  static constexpr size_t kList = 1024;
  hid_t iter_;
  // Not zeroed: fill() reads only what H5Ssel_iter_get_seq_list wrote, and
  // zeroing 16 KiB cost a small dataset's write more than its bytes.
  std::array<hsize_t, kList> off_;
  std::array<size_t, kList> len_;
  size_t count_ = 0, at_ = 0;
  bool done_ = false;
};

// No piece yet: no run's address is this, so nothing follows it.
constexpr uint64_t kNoPiece = UINT64_MAX;

// The loop a strided selection of a contiguous buffer spends its time in,
// a million elements a write: file runs that the current memory sequence
// holds whole, none following the piece before in the file, each a piece
// of its own.  It keeps its place in locals, not in the cursors: a store
// into `out` could alias their arrays and force a reload after each piece.
// Stops at the first run that needs the general step, or when `out` is
// full; returns the pieces made, and `last_end` where the last one ends.
size_t whole_runs(SequenceWalk::Cursor& f, SequenceWalk::Cursor& m, uint64_t file_offset, const std::byte* bytes,
                  std::span<RawPiece> out, uint64_t& last_end) {
  const hsize_t* off = f.off;
  const size_t* len = f.len;
  size_t at = f.at, made = 0;
  const size_t held = m.length();
  hsize_t from = m.offset();
  size_t room = held;
  uint64_t end = last_end;
  while (at < f.count && made < out.size() && len[at] <= room && file_offset + off[at] != end) {
    size_t n = len[at];
    uint64_t addr = file_offset + off[at];
    out[made++] = {addr, std::span(bytes + from, n)};
    from += n;
    room -= n;
    end = addr + n;
    ++at;
  }
  if (made == 0) return 0;
  f.at = at;
  m.take(held - room);
  last_end = end;
  return made;
}

// The loop an array of structs written a member at a time spends its time
// in (h5bench's IC): memory runs of up to kGatherPiece bytes, shorter than
// what is left of the current file run, copied one after another into
// `into`.  Returns the bytes copied, which the file run has given.
size_t gather_runs(SequenceWalk::Cursor& f, SequenceWalk::Cursor& m, const std::byte* bytes,
                   std::span<std::byte> into) {
  const hsize_t* off = m.off;
  const size_t* len = m.len;
  size_t at = m.at, got = 0;
  const size_t want = std::min(f.length(), into.size());
  while (at < m.count && len[at] <= kGatherPiece && len[at] <= want - got) {
    copy_run(into.data() + got, bytes + off[at], len[at]);
    got += len[at];
    ++at;
  }
  if (got == 0) return 0;
  m.at = at;
  f.take(got);
  return got;
}

// The bytes of a dataset written whole (H5S_ALL: both selections "all"),
// one run from the start of `buf` and of the dataset; nullopt for any other
// selection.  Two iterators would cost a small dataset's write more than
// the engine's work on it.
std::optional<size_t> whole_selection(hid_t mem_space, hid_t file_space, size_t element_size) {
  if (H5Sget_select_type(file_space) != H5S_SEL_ALL || H5Sget_select_type(mem_space) != H5S_SEL_ALL)
    return std::nullopt;
  hssize_t n = H5Sget_select_npoints(file_space);
  if (n < 0 || n != H5Sget_select_npoints(mem_space)) return std::nullopt;  // the walk reports it
  return size_t(n) * element_size;
}

}  // namespace

Status for_each_selection_batch(hid_t mem_space, hid_t file_space, haddr_t file_offset, size_t element_size,
                                const void* buf, SelectionScratch& scratch,
                                const std::function<Status(std::span<const RawPiece>)>& batch) {
  if (std::optional<size_t> whole = whole_selection(mem_space, file_space, element_size)) {
    if (*whole == 0) return Status::ok();
    RawPiece piece{file_offset, std::span(static_cast<const std::byte*>(buf), *whole)};
    return batch(std::span(&piece, 1));
  }
  auto file = std::make_unique<SequenceWalk>(file_space, element_size);
  auto mem = std::make_unique<SequenceWalk>(mem_space, element_size);
  if (!file->valid() || !mem->valid()) return Status(Code::kInvalid, "H5Ssel_iter_create failed");
  const auto* bytes = static_cast<const std::byte*>(buf);
  // A RawPiece is an implicit-lifetime aggregate: an array of bytes gives
  // it storage, and a piece lives once it is assigned.
  static_assert(std::is_aggregate_v<RawPiece> && std::is_trivially_destructible_v<RawPiece> &&
                alignof(RawPiece) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
  if (!scratch.batch) scratch.batch = std::make_unique_for_overwrite<std::byte[]>(kSelectionBatch * sizeof(RawPiece));
  if (!scratch.gathered) scratch.gathered.reset(new std::byte[kGatherBytes]);
  RawPiece* const pieces = reinterpret_cast<RawPiece*>(scratch.batch.get());
  std::span<std::byte> gathered(scratch.gathered.get(), kGatherBytes);
  size_t count = 0;                 // pieces in the batch
  uint64_t last_end = kNoPiece;     // where pieces[count - 1] ends in the file
  size_t used = 0;                  // bytes of `gathered` the pieces hold
  bool last_gathered = false;       // the last piece's bytes are in `gathered`
  auto flush = [&]() -> Status {
    Status s = count == 0 ? Status::ok() : batch(std::span<const RawPiece>(pieces, count));
    count = 0;
    last_end = kNoPiece;
    used = 0;
    last_gathered = false;
    return s;
  };
  // `got` bytes of the run at `addr` were just copied to gathered[used...]:
  // more of the last piece if that is gathered too and the run follows it
  // in the file, else a piece of their own.
  auto took_gathered = [&](uint64_t addr, size_t got) {
    if (addr == last_end && last_gathered) {
      RawPiece& last = pieces[count - 1];
      last.bytes = std::span(last.bytes.data(), last.bytes.size() + got);
    } else {
      pieces[count++] = {addr, std::span(gathered.data() + used, got)};
      last_gathered = true;
    }
    used += got;
    last_end = addr + got;
  };
  for (;;) {
    H5J_RETURN_IF_ERROR(file->fill());
    H5J_RETURN_IF_ERROR(mem->fill());
    if (file->exhausted() || mem->exhausted()) break;
    SequenceWalk::Cursor f = file->cursor(), m = mem->cursor();
    Status s;
    while (s && f.left() && m.left()) {
      if (f.length() <= m.length()) {
        std::span<RawPiece> room(pieces + count, kSelectionBatch - count);
        size_t made = whole_runs(f, m, file_offset, bytes, room, last_end);
        if (made > 0) {
          count += made;
          last_gathered = false;
          if (count == kSelectionBatch) s = flush();
          continue;
        }
      } else if (uint64_t addr = file_offset + f.offset();
                 size_t got = gather_runs(f, m, bytes, gathered.subspan(used))) {
        took_gathered(addr, got);
        if (count == kSelectionBatch) s = flush();
        continue;
      }
      size_t n = std::min(f.length(), m.length());
      uint64_t addr = file_offset + f.offset();
      const std::byte* from = bytes + m.offset();
      f.take(n);
      m.take(n);
      if (addr == last_end) {  // the run follows the last piece in the file
        RawPiece& last = pieces[count - 1];
        if (!last_gathered && last.bytes.data() + last.bytes.size() == from) {
          last.bytes = std::span(last.bytes.data(), last.bytes.size() + n);  // contiguous in both
          last_end = addr + n;
          continue;
        }
        if (n <= kGatherPiece) {
          if (used + n <= gathered.size()) {
            copy_run(gathered.data() + used, from, n);
            took_gathered(addr, n);
            if (count == kSelectionBatch) s = flush();
            continue;
          }
          s = flush();  // the gather buffer is full: its pieces go first
          if (!s) break;
        }
      }
      pieces[count++] = {addr, std::span(from, n)};
      last_end = addr + n;
      last_gathered = false;
      if (count == kSelectionBatch) s = flush();
    }
    file->moved_to(f);
    mem->moved_to(m);
    H5J_RETURN_IF_ERROR(s);
  }
  if (file->exhausted() != mem->exhausted())
    return Status(Code::kInvalid, "the memory and file selections of a write differ in size");
  return flush();
}

}  // namespace h5j
