#include "raw_pattern.h"

namespace h5j {

bool PatternBuilder::add(uint64_t a, uint64_t len) {
  if (len == 0) return true;
  if (empty()) {
    p_ = RawPattern::contiguous(a, len);
    last_group_runs_ = 1;
    return true;
  }
  if (p_.runs() == 1 && a == p_.addr + p_.run_len) {  // still one run: it grows
    p_.run_len += len;
    return true;
  }
  if (len != p_.run_len || p_.runs() == std::numeric_limits<uint32_t>::max()) return false;
  if (p_.count2 == 1) {
    uint64_t last_end = p_.addr + uint64_t(p_.count1 - 1) * p_.stride1 + p_.run_len;
    if (p_.count1 == 1 && a >= last_end) {  // the second run fixes stride1
      p_.stride1 = a - p_.addr;
      p_.count1 = last_group_runs_ = 2;
      return true;
    }
    if (p_.count1 > 1 && a == p_.addr + uint64_t(p_.count1) * p_.stride1 && p_.count1 < UINT32_MAX) {
      p_.count1 = ++last_group_runs_;
      return true;
    }
    if (p_.count1 > 1 && a >= last_end) {  // the first run of a second group fixes stride2
      p_.stride2 = a - p_.addr;
      p_.count2 = 2;
      last_group_runs_ = 1;
      return true;
    }
    return false;
  }
  uint64_t group = p_.addr + uint64_t(p_.count2 - 1) * p_.stride2;
  if (last_group_runs_ < p_.count1 && a == group + uint64_t(last_group_runs_) * p_.stride1) {
    ++last_group_runs_;
    return true;
  }
  if (last_group_runs_ == p_.count1 && a == group + p_.stride2 && p_.count2 < UINT32_MAX) {
    ++p_.count2;
    last_group_runs_ = 1;
    return true;
  }
  return false;
}

std::vector<RawPattern> PatternBuilder::take() {
  std::vector<RawPattern> out;
  if (empty()) return out;
  RawPattern p = p_;
  if (p.count2 > 1 && last_group_runs_ < p.count1) {
    RawPattern tail = p;
    tail.addr = p.addr + uint64_t(p.count2 - 1) * p.stride2;
    tail.count1 = last_group_runs_;
    tail.count2 = 1;
    tail.stride2 = 0;
    if (tail.count1 == 1) tail.stride1 = 0;
    p.count2 -= 1;
    if (p.count2 == 1) p.stride2 = 0;
    out = {p, tail};
  } else {
    out = {p};
  }
  *this = PatternBuilder();
  return out;
}

}  // namespace h5j
