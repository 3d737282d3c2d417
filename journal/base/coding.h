// Little-endian fixed-width encoding.  The journal is little-endian on every
// host; these helpers are the only place that knows it.
//
// On a little-endian host a field is one copy of its bytes, which the
// compiler makes a single load or store.  The byte loop, which it does not
// merge at -O2, cost a COMMIT's payload 356 instructions for six fields.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace h5j {

template <class T>
inline void put_le(std::byte* p, T v) {
  static_assert(std::is_unsigned_v<T>);
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &v, sizeof v);
  } else {
    for (size_t i = 0; i < sizeof v; ++i) p[i] = std::byte(v >> (8 * i));
  }
}

template <class T>
inline T get_le(const std::byte* p) {
  static_assert(std::is_unsigned_v<T>);
  T v = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, p, sizeof v);
  } else {
    for (size_t i = sizeof v; i-- > 0;) v = T(v << 8) | T(p[i]);
  }
  return v;
}

inline void put_u16(std::byte* p, uint16_t v) { put_le(p, v); }
inline void put_u32(std::byte* p, uint32_t v) { put_le(p, v); }
inline void put_u64(std::byte* p, uint64_t v) { put_le(p, v); }
inline uint16_t get_u16(const std::byte* p) { return get_le<uint16_t>(p); }
inline uint32_t get_u32(const std::byte* p) { return get_le<uint32_t>(p); }
inline uint64_t get_u64(const std::byte* p) { return get_le<uint64_t>(p); }

}  // namespace h5j
