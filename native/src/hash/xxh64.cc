// XXH64 from the xxHash specification; see xxh64.h.
#include "hash/xxh64.h"

#include <cstring>

namespace rg::hash {
namespace {

constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kPrime3 = 0x165667B19E3779F9ULL;
constexpr uint64_t kPrime4 = 0x85EBCA77C2B2AE63ULL;
constexpr uint64_t kPrime5 = 0x27D4EB2F165667C5ULL;

inline uint64_t Rotl(uint64_t x, unsigned r) noexcept { return (x << r) | (x >> (64U - r)); }

inline bool HostIsLittleEndian() noexcept {
  const uint16_t probe = 1;
  unsigned char first = 0;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

// A little-endian byte source: either plain bytes or UTF-16 units serialised as LE pairs.
// Reads are assembled byte by byte from LE order, so the result is host-independent; compilers
// turn the byte assembly on LE hosts into a single load.
struct Bytes {
  const unsigned char* data;
  inline uint64_t Read64(size_t at) const noexcept {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    std::memcpy(&v, data + at, sizeof v);  // one unaligned load
    return v;
#else
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | data[at + static_cast<size_t>(i)];
    return v;
#endif
  }
  inline uint32_t Read32(size_t at) const noexcept {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t v;
    std::memcpy(&v, data + at, sizeof v);
    return v;
#else
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | data[at + static_cast<size_t>(i)];
    return v;
#endif
  }
  inline uint8_t Read8(size_t at) const noexcept { return data[at]; }
};

inline uint64_t Round(uint64_t acc, uint64_t lane) noexcept {
  acc += lane * kPrime2;
  acc = Rotl(acc, 31);
  return acc * kPrime1;
}

inline uint64_t MergeRound(uint64_t acc, uint64_t value) noexcept {
  acc ^= Round(0, value);
  return acc * kPrime1 + kPrime4;
}

template <typename Source>
uint64_t Xxh64Of(const Source& in, size_t size, uint64_t seed) noexcept {
  size_t at = 0;
  uint64_t h;
  if (size >= 32) {
    uint64_t v1 = seed + kPrime1 + kPrime2;
    uint64_t v2 = seed + kPrime2;
    uint64_t v3 = seed;
    uint64_t v4 = seed - kPrime1;
    const size_t limit = size - 32;
    do {
      v1 = Round(v1, in.Read64(at));
      v2 = Round(v2, in.Read64(at + 8));
      v3 = Round(v3, in.Read64(at + 16));
      v4 = Round(v4, in.Read64(at + 24));
      at += 32;
    } while (at <= limit);
    h = Rotl(v1, 1) + Rotl(v2, 7) + Rotl(v3, 12) + Rotl(v4, 18);
    h = MergeRound(h, v1);
    h = MergeRound(h, v2);
    h = MergeRound(h, v3);
    h = MergeRound(h, v4);
  } else {
    h = seed + kPrime5;
  }
  h += static_cast<uint64_t>(size);
  while (at + 8 <= size) {
    h ^= Round(0, in.Read64(at));
    h = Rotl(h, 27) * kPrime1 + kPrime4;
    at += 8;
  }
  if (at + 4 <= size) {
    h ^= static_cast<uint64_t>(in.Read32(at)) * kPrime1;
    h = Rotl(h, 23) * kPrime2 + kPrime3;
    at += 4;
  }
  while (at < size) {
    h ^= static_cast<uint64_t>(in.Read8(at)) * kPrime5;
    h = Rotl(h, 11) * kPrime1;
    ++at;
  }
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

// UTF-16 units as LE bytes, without materialising them: byte i is the low (even i) or high
// (odd i) byte of unit i / 2.
struct Utf16LeBytes {
  const char16_t* units;
  inline uint8_t Read8(size_t at) const noexcept {
    const uint16_t u = static_cast<uint16_t>(units[at >> 1]);
    return static_cast<uint8_t>((at & 1U) != 0 ? (u >> 8) : (u & 0xFFU));
  }
  inline uint64_t Read64(size_t at) const noexcept {
    // `at` is always even here (multiples of 8): four whole units.
    const size_t u = at >> 1;
    return static_cast<uint64_t>(static_cast<uint16_t>(units[u])) |
           (static_cast<uint64_t>(static_cast<uint16_t>(units[u + 1])) << 16) |
           (static_cast<uint64_t>(static_cast<uint16_t>(units[u + 2])) << 32) |
           (static_cast<uint64_t>(static_cast<uint16_t>(units[u + 3])) << 48);
  }
  inline uint32_t Read32(size_t at) const noexcept {
    const size_t u = at >> 1;
    return static_cast<uint32_t>(static_cast<uint16_t>(units[u])) |
           (static_cast<uint32_t>(static_cast<uint16_t>(units[u + 1])) << 16);
  }
};

}  // namespace

uint64_t Xxh64(const unsigned char* data, size_t size, uint64_t seed) noexcept {
  static const unsigned char kEmpty[1] = {0};
  return Xxh64Of(Bytes{data == nullptr ? kEmpty : data}, size, seed);
}

uint64_t Xxh64Utf16Le(const char16_t* units, size_t count, uint64_t seed) noexcept {
  static const char16_t kEmpty[1] = {0};
  if (units == nullptr) units = kEmpty;
  if (HostIsLittleEndian()) {
    // Same bytes as Utf16LeBytes; char types may alias any object, so this view is defined.
    return Xxh64Of(Bytes{reinterpret_cast<const unsigned char*>(units)}, count * 2, seed);
  }
  return Xxh64Of(Utf16LeBytes{units}, count * 2, seed);
}

void ToHex16(uint64_t value, char out[16]) noexcept {
  static const char kDigits[] = "0123456789abcdef";
  for (int i = 15; i >= 0; --i) {
    out[i] = kDigits[value & 0xFU];
    value >>= 4;
  }
}

}  // namespace rg::hash
