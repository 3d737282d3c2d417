#include "last_writes.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace h5j {

namespace {

constexpr size_t kWord = 8, kLine = 64;

bool same_word(const std::byte* a, const std::byte* b, size_t n) {
  if (n != kWord) return std::memcmp(a, b, n) == 0;
  uint64_t x, y;
  std::memcpy(&x, a, kWord);
  std::memcpy(&y, b, kWord);
  return x == y;
}

}  // namespace

bool LastWrites::changed_runs(uint64_t addr, std::span<const std::byte> data, std::vector<Run>& runs) const {
  runs.clear();
  auto it = copies_.find(addr);
  if (it == copies_.end() || it->second.length != data.size()) return false;
  const std::byte* old = it->second.bytes.get();
  for (size_t i = 0; i < data.size(); i += kWord) {
    // Most of a block is the same: a line of it at a time by memcmp first.
    if (i % kLine == 0 && i + kLine <= data.size() && std::memcmp(old + i, data.data() + i, kLine) == 0) {
      i += kLine - kWord;
      continue;
    }
    size_t n = std::min(kWord, data.size() - i);
    if (same_word(old + i, data.data() + i, n)) continue;
    if (!runs.empty() && i - (runs.back().offset + runs.back().length) <= kJoinGap)
      runs.back().length = i + n - runs.back().offset;
    else
      runs.push_back({i, n});
  }
  return true;
}

std::map<uint64_t, LastWrites::Copy>::iterator LastWrites::first_overlapping(uint64_t from) {
  auto it = copies_.upper_bound(from);
  if (it != copies_.begin() && std::prev(it)->first + std::prev(it)->second.length > from) --it;
  return it;
}

void LastWrites::forget(uint64_t from, uint64_t to) {
  if (copies_.empty() || from >= to) return;
  auto first = first_overlapping(from), last = first;
  for (; last != copies_.end() && last->first < to; ++last) bytes_ -= last->second.length;
  copies_.erase(first, last);
}

std::span<const std::byte> LastWrites::held(uint64_t addr, uint64_t len) const {
  auto it = copies_.upper_bound(addr);
  if (it == copies_.begin()) return {};
  --it;
  const uint64_t offset = addr - it->first;
  if (offset + len > it->second.length) return {};
  return std::span<const std::byte>(it->second.bytes.get() + offset, size_t(len));
}

void LastWrites::keep(uint64_t addr, std::span<const std::byte> data, uint64_t committed_size) {
  auto same = copies_.find(addr);
  if (same != copies_.end() && same->second.length == data.size()) {  // the common case: no allocation
    std::memcpy(same->second.bytes.get(), data.data(), data.size());
    return;
  }
  forget(addr, addr + data.size());
  if (data.empty() || data.size() > kMaxCopy || addr >= committed_size) return;
  if (bytes_ + data.size() > kMaxBytes) {
    copies_.clear();
    bytes_ = 0;
  }
  Copy copy{std::make_unique_for_overwrite<std::byte[]>(data.size()), data.size()};
  std::memcpy(copy.bytes.get(), data.data(), data.size());
  copies_.emplace(addr, std::move(copy));
  bytes_ += data.size();
  assert(bytes_ <= kMaxBytes);
}

}  // namespace h5j
