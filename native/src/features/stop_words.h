#pragma once
// The stop list (Snowball English) as two lookup tables with the same answers: StopTable for any
// token, PaddedStopTable (SSE2, branch-free) for tokens followed by at least 16 readable bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace rg::features {

// The stop list (Snowball English) as an open-addressing table of words packed into two 64-bit
// words (the longest stop word, "yourselves", has 10 bytes), so a lookup is a few integer ops.
struct StopTable {
  static constexpr size_t kMaxLen = 10;
  static constexpr size_t kSlots = 1024;
  struct Slot {
    uint64_t lo = 0;
    uint64_t hi = 0;  // 0 in an empty slot's len marks it empty
    uint32_t len = 0;
  };
  Slot slots[kSlots];

  // Little-endian packing of p[0..n), n <= 10, zero-padded: lo = bytes 0-7, hi = bytes 8-9.
  // Built from fixed-size, possibly overlapping loads (overlapping bytes are equal, so OR-ing
  // them is exact) instead of a byte loop.
  static void Pack(const char* p, size_t n, uint64_t* lo, uint64_t* hi) {
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    uint64_t a, b = 0;
    if (n >= 8) {
      a = Load(u, 8);
      if (n > 8) b = static_cast<uint64_t>(u[8]) | (static_cast<uint64_t>(u[n - 1]) << (8 * (n - 9)));
    } else if (n >= 4) {
      a = Load(u, 4) | (Load(u + n - 4, 4) << (8 * (n - 4)));
    } else {
      a = static_cast<uint64_t>(u[0]) | (static_cast<uint64_t>(u[n / 2]) << (8 * (n / 2))) |
          (static_cast<uint64_t>(u[n - 1]) << (8 * (n - 1)));
    }
    *lo = a;
    *hi = b;
  }
  // Little-endian value of 4 or 8 bytes (one load; a byte swap on big-endian machines).
  static uint64_t Load(const unsigned char* u, int bytes) {
    if (bytes == 8) {
      uint64_t v;
      std::memcpy(&v, u, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
      v = __builtin_bswap64(v);
#endif
      return v;
    }
    uint32_t v;
    std::memcpy(&v, u, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
  }
  static uint64_t Mix(uint64_t lo, uint64_t hi, size_t n) {
    uint64_t h = (lo ^ (hi << 17) ^ n) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29) * 0xBF58476D1CE4E5B9ull;
  }
  uint64_t filter[64] = {};  // 4096-bit filter on the top 12 hash bits
  // Lengths (bit n) of the stop words whose first two bytes share the key, so most non-stop
  // tokens are rejected with one table load before packing and hashing. Exact superset test.
  uint16_t prefix_lengths[1024] = {};
  static size_t PrefixKey(const char* p, size_t n) {
    const auto c0 = static_cast<unsigned char>(p[0]);
    const unsigned c1 = n >= 2 ? static_cast<unsigned char>(p[1]) : 0u;
    return ((c0 & 31u) << 5) | (c1 & 31u);
  }
  bool Contains(const char* p, size_t n) const {
    if (n == 0 || n > kMaxLen) return false;
    if (((prefix_lengths[PrefixKey(p, n)] >> n) & 1u) == 0) return false;
    uint64_t lo, hi;
    Pack(p, n, &lo, &hi);
    const uint64_t h = Mix(lo, hi, n);
    // 512-byte filter first: most non-stop tokens stop here without touching the table.
    const size_t bit = static_cast<size_t>(h >> 52);
    if (((filter[bit >> 6] >> (bit & 63)) & 1u) == 0) return false;
    size_t i = static_cast<size_t>(h >> 54);
    while (slots[i].len != 0) {
      if (slots[i].lo == lo && slots[i].hi == hi && slots[i].len == n) return true;
      i = (i + 1) & (kSlots - 1);
    }
    return false;
  }
};
extern const StopTable kStopTable __attribute__((visibility("hidden")));

// kKeepBytes.v[k]: 0xFF in bytes [0, k), 0 in the others (k = 0..16), to mask a 16-byte load
// to a token's length.
struct KeepBytesTable {
  alignas(16) unsigned char v[17][16];
  constexpr KeepBytesTable() : v() {
    for (int k = 0; k <= 16; ++k) {
      for (int b = 0; b < 16; ++b) v[k][b] = b < k ? 0xFF : 0;
    }
  }
};
inline constexpr KeepBytesTable kKeepBytes{};

// The same stop list as a collision-free direct-mapped table, for tokens followed by at least
// 16 readable bytes: the word's first 16 bytes are loaded at once and masked to its length, and
// the answer is computed without branches (whether a token is a stop word is unpredictable, and a
// mispredicted branch per token costs more than the whole lookup). Same answers as
// StopTable::Contains.
struct PaddedStopTable {
  static constexpr size_t kSlotBits = 12;
  struct alignas(16) Word {
    unsigned char bytes[16] = {};  // the word, zero-padded (all zero in entry 0: no word)
    uint64_t len = 0;              // 0 in entry 0, which a non-empty token never matches
  };
  uint64_t seed = 0;
  uint8_t index[size_t{1} << kSlotBits] = {};
  Word words[256];
  // The first 8 bytes place a word (no two stop words share them); the lookup still compares
  // all 16 bytes and the length.
  static size_t Slot(uint64_t lo, uint64_t seed) { return static_cast<size_t>((lo * seed) >> (64 - kSlotBits)); }
#if defined(__SSE2__)
  // p[0..16) must be readable (only p[0..n) affects the answer).
  bool Contains(const char* p, size_t n) const {
    const size_t k = n < 16 ? n : 16;  // a table lookup instead of (mispredicted) branches on n
    const __m128i keep = _mm_load_si128(reinterpret_cast<const __m128i*>(kKeepBytes.v[k]));
    const __m128i v = _mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), keep);
    const uint64_t lo = static_cast<uint64_t>(_mm_cvtsi128_si64(v));  // x86: little-endian, as Pack
    const Word& w = words[index[Slot(lo, seed)]];
    const __m128i same = _mm_cmpeq_epi8(v, _mm_load_si128(reinterpret_cast<const __m128i*>(w.bytes)));
    return (_mm_movemask_epi8(same) == 0xFFFF) & (w.len == n);
  }
#else
  bool Contains(const char* p, size_t n) const {
    if (n == 0 || n > 16) return false;
    const Word& w = words[index[Slot(Lo(p, n), seed)]];
    return w.len == n && std::memcmp(w.bytes, p, n) == 0;
  }
  static uint64_t Lo(const char* p, size_t n) {
    unsigned char b[8] = {};
    std::memcpy(b, p, n < 8 ? n : 8);
    return StopTable::Load(b, 8);
  }
#endif
};
extern const PaddedStopTable kPaddedStopTable __attribute__((visibility("hidden")));

// True when the folded token is on the stop list (Snowball English stop list).
inline bool IsStopWord(const char* p, size_t n) { return kStopTable.Contains(p, n); }

}  // namespace rg::features
