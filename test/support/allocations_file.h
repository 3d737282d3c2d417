// A PosixFile that records the size of every buffer asked of it, and
// refuses them while told to: for tests of who allocates what, and when
// (the read-ahead window, the journal's ring).
#pragma once

#include <vector>

#include "posix_file.h"

namespace h5j::test {

class AllocationsFile : public PosixFile {
 public:
  using PosixFile::PosixFile;
  Result<AlignedBuffer> allocate_buffer(size_t size, Pages pages) override {
    asked.push_back(size);
    pages_asked.push_back(pages);
    if (refuse) return Status(Code::kNoSpace, "buffer allocation refused");
    return PosixFile::allocate_buffer(size, pages);
  }
  std::vector<size_t> asked;       // each buffer's size, in order
  std::vector<Pages> pages_asked;  // and its pages
  bool refuse = false;
};

}  // namespace h5j::test
