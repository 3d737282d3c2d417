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
  hsize_t offset() const { return off_[at_]; }
  size_t length() const { return len_[at_]; }
  void take(size_t n) {
    if (n == len_[at_]) {
      ++at_;
    } else {
      off_[at_] += n;
      len_[at_] -= n;
    }
  }

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
  std::vector<std::byte>& gathered = scratch.gathered;
  if (gathered.size() < kGatherBytes) gathered.resize(kGatherBytes);
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
    size_t n = std::min(file->length(), mem->length());
    uint64_t addr = file_offset + file->offset();
    const std::byte* from = bytes + mem->offset();
    file->take(n);
    mem->take(n);
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
      H5J_RETURN_IF_ERROR(flush());  // the gather buffer is full: its pieces go first
    }
    pieces.push_back({addr, std::span(from, n)});
    last_gathered = false;
    if (pieces.size() == kSelectionBatch) H5J_RETURN_IF_ERROR(flush());
  }
  if (file->exhausted() != mem->exhausted())
    return Status(Code::kInvalid, "the memory and file selections of a write differ in size");
  return flush();
}

}  // namespace h5j
