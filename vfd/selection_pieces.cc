#include "selection_pieces.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>

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
  std::array<hsize_t, kList> off_{};
  std::array<size_t, kList> len_{};
  size_t count_ = 0, at_ = 0;
  bool done_ = false;
};

}  // namespace

Status for_each_selection_batch(hid_t mem_space, hid_t file_space, haddr_t file_offset, size_t element_size,
                                const void* buf, SelectionScratch& scratch,
                                const std::function<Status(std::span<const RawPiece>)>& batch) {
  auto file = std::make_unique<SequenceWalk>(file_space, element_size);
  auto mem = std::make_unique<SequenceWalk>(mem_space, element_size);
  if (!file->valid() || !mem->valid()) return Status(Code::kInvalid, "H5Ssel_iter_create failed");
  const auto* bytes = static_cast<const std::byte*>(buf);
  std::vector<RawPiece>& pieces = scratch.pieces;
  if (!scratch.gathered) scratch.gathered.reset(new std::byte[kGatherBytes]);
  std::span<std::byte> gathered(scratch.gathered.get(), kGatherBytes);
  pieces.clear();
  size_t used = 0;             // bytes of `gathered` the pieces hold
  bool last_gathered = false;  // the last piece's bytes are in `gathered`
  auto flush = [&]() -> Status {
    Status s = pieces.empty() ? Status::ok() : batch(pieces);
    pieces.clear();
    used = 0;
    last_gathered = false;
    return s;
  };
  for (;;) {
    H5J_RETURN_IF_ERROR(file->fill());
    H5J_RETURN_IF_ERROR(mem->fill());
    if (file->exhausted() || mem->exhausted()) break;
    SequenceWalk::Cursor f = file->cursor(), m = mem->cursor();
    Status s;
    while (s && f.left() && m.left()) {
      size_t n = std::min(f.length(), m.length());
      uint64_t addr = file_offset + f.offset();
      const std::byte* from = bytes + m.offset();
      f.take(n);
      m.take(n);
      RawPiece* last = pieces.empty() ? nullptr : &pieces.back();
      bool follows = last != nullptr && last->addr + last->bytes.size() == addr;
      if (follows && !last_gathered && last->bytes.data() + last->bytes.size() == from) {
        last->bytes = std::span(last->bytes.data(), last->bytes.size() + n);  // contiguous in both
        continue;
      }
      if (follows && n <= kGatherPiece) {
        size_t need = n + (last_gathered ? 0 : last->bytes.size());
        if (used + need <= gathered.size()) {
          if (!last_gathered) {
            std::memcpy(gathered.data() + used, last->bytes.data(), last->bytes.size());
            last->bytes = std::span(gathered.data() + used, last->bytes.size());
            used += last->bytes.size();
            last_gathered = true;
          }
          std::memcpy(gathered.data() + used, from, n);
          used += n;
          last->bytes = std::span(last->bytes.data(), last->bytes.size() + n);
          continue;
        }
        s = flush();  // the gather buffer is full: its pieces go first
        if (!s) break;
      }
      pieces.push_back({addr, std::span(from, n)});
      last_gathered = false;
      if (pieces.size() == kSelectionBatch) s = flush();
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
