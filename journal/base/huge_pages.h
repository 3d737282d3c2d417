// Advice that a large buffer about to be filled be backed by transparent
// huge pages (madvise(MADV_HUGEPAGE)): the staging buffer (staged_writes.h).
//
// Why: a buffer's pages are new to the process, and each 4 KiB page costs
// a fault at its first touch.  On the benchmark's virtual machines a fault
// costs about 13 us, so filling the 16 MiB staging buffer cost 4,096
// faults, 53 ms of W2's 110 ms at 256^3 with durable=false; in 2 MiB pages
// it takes 8 (docs/performance.md).  Only for buffers that fill: a huge
// page is zeroed whole at its first touch, so a buffer mostly left
// untouched (the journal's ring, whose commits each use the start of one
// buffer) would pay more, and hold more memory, than in small pages.
//
// Only the 2 MiB-aligned part of the buffer is advised: the buffer itself
// need not be aligned, and is better not page-aligned when it is copied
// into one that is (apply_image.cc's write buffer): copies between
// addresses equal modulo 4 KiB stall on the CPU's store forwarding, and
// W2 with an aligned staging buffer took 78 ms of user time against 53.
//
// The opposite advice (madvise(MADV_NOHUGEPAGE)) is for the buffers that
// are mostly left untouched, on systems whose transparent huge pages are
// "always" (Red Hat's default): there, the journal's 4 MiB ring, aligned to
// 2 MiB, cost its session's first commit a 2 MiB page zeroed (about 0.2 ms
// here) and 2 MiB of RSS, for the few hundred bytes a small commit writes.
//
// The advice is only advice: with transparent huge pages off or "never",
// madvise fails or is ignored, and the buffer keeps small pages.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

namespace h5j {

inline constexpr size_t kHugePage = size_t(2) << 20;

inline void advise_huge_pages(void* buffer, size_t length) {
  const auto start = reinterpret_cast<uintptr_t>(buffer);
  const uintptr_t from = (start + kHugePage - 1) / kHugePage * kHugePage;
  const uintptr_t to = (start + length) / kHugePage * kHugePage;
  if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);  // its failure is harmless
}

// Keeps the whole pages of a buffer out of huge pages.
inline void advise_small_pages(void* buffer, size_t length) {
  const auto start = reinterpret_cast<uintptr_t>(buffer);
  const uintptr_t from = (start + 4095) / 4096 * 4096;
  const uintptr_t to = (start + length) / 4096 * 4096;
  if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_NOHUGEPAGE);  // its failure is harmless
}

// The pages an I/O buffer asks for (AlignedBuffer).
enum class Pages {
  kSystem,  // whatever the system gives: reads' windows, copies
  kHuge,    // filled whole soon after it is made: aligned to a huge page and advised into them
  kSmall,   // mostly left untouched (the journal's ring): never huge pages
};

}  // namespace h5j
