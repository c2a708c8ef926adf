#pragma once
// The 64-bit term hash that keys corpus statistics, query plans and the term cache.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rg::features {

// 64-bit hash of a term's bytes; never 0 (0 marks empty hash-table slots). Reads exactly n bytes
// (fixed-size loads only, no overread). Values may differ between platforms: they are never
// stored (statistics files hold the terms and are re-hashed at load).
inline uint64_t HashTerm(const char* p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(n) * 0xC2B2AE3D27D4EB4Full);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
    h = (h ^ v) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 29;
  }
  const size_t r = n - i;
  if (r > 0) {
    const auto* t = reinterpret_cast<const unsigned char*>(p + i);
    uint64_t v;
    if (r >= 4) {
      uint32_t a, b;
      std::memcpy(&a, t, 4);
      std::memcpy(&b, t + r - 4, 4);
      v = (static_cast<uint64_t>(a) << 32) | b;
    } else {
      v = static_cast<uint64_t>(t[0]) | (static_cast<uint64_t>(t[r / 2]) << 8) |
          (static_cast<uint64_t>(t[r - 1]) << 16);
    }
    h = (h ^ v) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 29;
  }
  // splitmix64 finaliser
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 31;
  return h == 0 ? 1 : h;
}

}  // namespace rg::features
