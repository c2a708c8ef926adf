#pragma once
// Byte classes of ASCII text and the scanners that find the end of a run of ASCII letters/digits
// (16 bytes at a time with SSE2), used by the general tokenizer's ASCII fast path.
#include <cstddef>
#include <cstdint>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace rg::features {

enum AsciiClass : uint8_t { kAsciiSeparator = 0, kAsciiLower, kAsciiUpper, kAsciiDigit, kAsciiApostrophe, kNonAscii };
// Class of each byte value: ASCII ones by kind, every byte >= 0x80 kNonAscii.
struct AsciiClassTable {
  uint8_t v[256];
  constexpr AsciiClassTable() : v() {
    for (int c = 0; c < 256; ++c) {
      v[c] = c >= 0x80                ? kNonAscii
             : (c >= 'a' && c <= 'z') ? kAsciiLower
             : (c >= 'A' && c <= 'Z') ? kAsciiUpper
             : (c >= '0' && c <= '9') ? kAsciiDigit
             : c == '\''              ? kAsciiApostrophe
                                      : kAsciiSeparator;
    }
  }
  constexpr uint8_t operator[](unsigned char c) const { return v[c]; }
};
inline constexpr AsciiClassTable kAsciiClass{};
// 1 for ASCII a-z and 0-9 (the bytes of the in-place fast path).
struct AsciiWordTable {
  bool v[256];
  constexpr AsciiWordTable() : v() {
    for (int c = 0; c < 256; ++c) v[c] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  }
  constexpr bool operator[](unsigned char c) const { return v[c]; }
};
inline constexpr AsciiWordTable kAsciiWordByte{};

// End of the run of [a-z0-9] bytes starting at s[i]; sets *digits when the run has a digit.
// 16 bytes at a time with SSE2 (baseline on x86-64), bytes one by one elsewhere/at the end.
inline size_t ScanAsciiWord(const unsigned char* s, size_t i, size_t n, bool* digits) {
#if defined(__SSE2__)
  const __m128i a1 = _mm_set1_epi8('a' - 1), z1 = _mm_set1_epi8('z' + 1);
  const __m128i d0 = _mm_set1_epi8('0' - 1), d9 = _mm_set1_epi8('9' + 1);
  while (i + 16 <= n) {
    // Signed compares: bytes >= 0x80 are negative, so never inside either range.
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i lower = _mm_and_si128(_mm_cmpgt_epi8(v, a1), _mm_cmplt_epi8(v, z1));
    const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, d0), _mm_cmplt_epi8(v, d9));
    const unsigned word = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(lower, digit)));
    const unsigned dig = static_cast<unsigned>(_mm_movemask_epi8(digit));
    if (word != 0xFFFFu) {
      const unsigned len = static_cast<unsigned>(__builtin_ctz(~word));
      if ((dig & ((1u << len) - 1u)) != 0) *digits = true;
      return i + len;
    }
    if (dig != 0) *digits = true;
    i += 16;
  }
#endif
  while (i < n && kAsciiWordByte[s[i]]) {
    *digits |= s[i] <= '9';
    ++i;
  }
  return i;
}

// End of the run of ASCII [A-Za-z0-9] bytes starting at s[i]; sets *digits / *upper when the
// run has a digit / an upper-case letter. Same scheme as ScanAsciiWord.
inline size_t ScanAsciiAlnum(const unsigned char* s, size_t i, size_t n, bool* digits, bool* upper) {
#if defined(__SSE2__)
  const __m128i a1 = _mm_set1_epi8('a' - 1), z1 = _mm_set1_epi8('z' + 1);
  const __m128i A1 = _mm_set1_epi8('A' - 1), Z1 = _mm_set1_epi8('Z' + 1);
  const __m128i d0 = _mm_set1_epi8('0' - 1), d9 = _mm_set1_epi8('9' + 1);
  while (i + 16 <= n) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i lower = _mm_and_si128(_mm_cmpgt_epi8(v, a1), _mm_cmplt_epi8(v, z1));
    const __m128i up = _mm_and_si128(_mm_cmpgt_epi8(v, A1), _mm_cmplt_epi8(v, Z1));
    const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, d0), _mm_cmplt_epi8(v, d9));
    const unsigned word = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(lower, up), digit)));
    const unsigned dig = static_cast<unsigned>(_mm_movemask_epi8(digit));
    const unsigned upp = static_cast<unsigned>(_mm_movemask_epi8(up));
    if (word != 0xFFFFu) {
      const unsigned len = static_cast<unsigned>(__builtin_ctz(~word));
      const unsigned in = (1u << len) - 1u;
      if ((dig & in) != 0) *digits = true;
      if ((upp & in) != 0) *upper = true;
      return i + len;
    }
    if (dig != 0) *digits = true;
    if (upp != 0) *upper = true;
    i += 16;
  }
#endif
  while (i < n) {
    const uint8_t cls = kAsciiClass[s[i]];
    if (cls == kAsciiLower) {
    } else if (cls == kAsciiUpper) {
      *upper = true;
    } else if (cls == kAsciiDigit) {
      *digits = true;
    } else {
      break;
    }
    ++i;
  }
  return i;
}

}  // namespace rg::features
