#include "file_match.h"

#include <array>

namespace h5j {
namespace {

Result<uint16_t> sample_at(File& file, uint64_t offset) {
  std::array<std::byte, kFingerprintSampleSize> sample{};
  auto n = file.read_at(offset, sample);
  if (!n) return n.status();
  return sample_fingerprint(std::span(sample.data(), *n));
}

std::string what_to_do(const File& file, const std::string& journal) {
  return ". Nothing was changed. Restore the file the journal belongs to; or recover what the journal alone holds "
         "with h5recover --mode salvage --output COPY " + file.path() + "; or, to keep the file as it now is and "
         "lose the commits in " + journal + ", run h5recover --discard-journal " + file.path();
}

// Whether nothing but new writes has touched the file since the
// fingerprint: it is bound (so it has extended attributes) and carries no
// kApplyingXattr.
Result<bool> untouched_since_fingerprint(File& file) {
  auto binding = file.get_xattr(kBindingXattr);
  if (!binding) return binding.status();
  auto applying = file.get_xattr(kApplyingXattr);
  if (!applying) return applying.status();
  return binding->has_value() && !applying->has_value();
}

}  // namespace

Result<std::vector<uint16_t>> fingerprint_file(File& file, uint64_t size) {
  std::vector<uint16_t> out;
  unsigned samples = fingerprint_samples(size);
  for (unsigned i = 0; i < samples; ++i) {
    auto f = sample_at(file, fingerprint_sample_at(size, samples, i));
    if (!f) return f.status();
    out.push_back(*f);
  }
  return out;
}

Status check_file_matches(File& file, const std::string& journal, const JournalHeader& h, const ReplayPlan& plan) {
  auto size = file.size();
  if (!size) return size.status();
  uint64_t on_disk = plan.committed_file_size != 0 ? plan.committed_file_size : h.base_size;
  uint64_t needed = std::min(plan.logical_size, on_disk);
  if (*size < needed)
    return Status(Code::kBaseMismatch, file.path() + " is shorter than its journal needs: " + std::to_string(*size) +
                                           " bytes, but its last commit needs " + std::to_string(needed) +
                                           " from the file itself (it was cut short, or replaced)" + what_to_do(file, journal));
  unsigned samples = unsigned(h.fingerprint.size());
  if (samples == 0 || samples != fingerprint_samples(h.base_size)) return Status::ok();
  auto all = untouched_since_fingerprint(file);
  if (!all) return all.status();
  for (unsigned i = 0; i < samples; ++i) {
    uint64_t at = fingerprint_sample_at(h.base_size, samples, i), end = at + kFingerprintSampleSize;
    if (end > needed || plan.placeable.intersects(at, end)) continue;
    if (!*all && (plan.overlay.intersects(at, end) || plan.raw.touches(at, end))) continue;
    auto f = sample_at(file, at);
    if (!f) return f.status();
    if (*f != h.fingerprint[i])
      return Status(Code::kBaseMismatch, file.path() + " is not the file its journal was written against: its bytes at " +
                                             std::to_string(at) + " to " + std::to_string(end) +
                                             " differ from the journal's fingerprint of them (the file was replaced, "
                                             "or written by a program without the driver after the crash)" +
                                             what_to_do(file, journal));
  }
  return Status::ok();
}

}  // namespace h5j
