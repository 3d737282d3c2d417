#include "selection_pieces.h"

#include <algorithm>
#include <array>
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
                                const void* buf, std::vector<RawPiece>& scratch,
                                const std::function<Status(std::span<const RawPiece>)>& batch) {
  auto file = std::make_unique<SequenceWalk>(file_space, element_size);
  auto mem = std::make_unique<SequenceWalk>(mem_space, element_size);
  if (!file->valid() || !mem->valid()) return Status(Code::kInvalid, "H5Ssel_iter_create failed");
  const auto* bytes = static_cast<const std::byte*>(buf);
  scratch.clear();
  for (;;) {
    H5J_RETURN_IF_ERROR(file->fill());
    H5J_RETURN_IF_ERROR(mem->fill());
    if (file->exhausted() || mem->exhausted()) break;
    size_t n = std::min(file->length(), mem->length());
    scratch.push_back({file_offset + file->offset(), std::span(bytes + mem->offset(), n)});
    file->take(n);
    mem->take(n);
    if (scratch.size() == kSelectionBatch) {
      H5J_RETURN_IF_ERROR(batch(scratch));
      scratch.clear();
    }
  }
  if (file->exhausted() != mem->exhausted())
    return Status(Code::kInvalid, "the memory and file selections of a write differ in size");
  return scratch.empty() ? Status::ok() : batch(scratch);
}

}  // namespace h5j
