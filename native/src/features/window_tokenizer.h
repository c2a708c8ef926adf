#pragma once
// The window scanner (SSE2): classifies 64 bytes at once into bit masks and emits the plain ASCII
// words in them without a branch per byte; anything else it hands to the general tokenizer.
// tokenizer.h combines the two; see there for the on_token contract. Empty without SSE2.
#include <cstddef>
#include <cstdint>
#include <string>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "features/general_tokenizer.h"

namespace rg::features::detail {

#if defined(__SSE2__)
// The window scanner runs while this many bytes are left: the 64 of the window, and 16 more so
// that a word starting anywhere in it can be folded with whole 16-byte loads (< 64 + 16 bytes).
inline constexpr size_t kWindowReadable = 80;

// Byte classes of a 64-byte window as bit masks (bit k = byte k).
struct WindowMasks {
  uint64_t word;     // ASCII letters and digits
  uint64_t digit;    // ASCII digits
  uint64_t special;  // bytes >= 0x80 and '\'': only the general tokenizer handles them
};

inline WindowMasks ClassifyWindow(const unsigned char* p) {
  const __m128i bit5 = _mm_set1_epi8(0x20);
  const __m128i a1 = _mm_set1_epi8('a' - 1), z1 = _mm_set1_epi8('z' + 1);
  const __m128i d0 = _mm_set1_epi8('0' - 1), d9 = _mm_set1_epi8('9' + 1);
  const __m128i apostrophe = _mm_set1_epi8('\'');
  WindowMasks m{0, 0, 0};
  for (int k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    // Signed compares: bytes >= 0x80 are negative, so in neither range. v | 0x20 lies in a-z
    // exactly for the bytes A-Z and a-z.
    const __m128i f = _mm_or_si128(v, bit5);
    const __m128i alpha = _mm_and_si128(_mm_cmpgt_epi8(f, a1), _mm_cmplt_epi8(f, z1));
    const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, d0), _mm_cmplt_epi8(v, d9));
    // High bit set: a byte >= 0x80, or an apostrophe (the compare gives 0xFF).
    const __m128i special = _mm_or_si128(v, _mm_cmpeq_epi8(v, apostrophe));
    const auto bits = [](__m128i x) { return static_cast<uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(x))); };
    m.word |= bits(_mm_or_si128(alpha, digit)) << (16 * k);
    m.digit |= bits(digit) << (16 * k);
    m.special |= bits(special) << (16 * k);
  }
  return m;
}

// Hands over the ASCII word p[0..len) (len < 64) folded to lower case (| 0x20 maps A-Z to a-z
// and keeps a-z and 0-9). p[0..64) must be readable (bytes past the word are folded too, but never
// read as part of it).
template <typename OnToken>
inline void EmitAsciiWord(const unsigned char* p, size_t len, bool ascii_alpha, OnToken& on_token) {
  alignas(16) char folded[kAsciiFoldMax + 16];
  const __m128i bit5 = _mm_set1_epi8(0x20);
  size_t k = 0;
  do {  // once for the common word of up to 16 bytes
    _mm_store_si128(reinterpret_cast<__m128i*>(folded + k),
                    _mm_or_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k)), bit5));
    k += 16;
  } while (k < len);
  on_token(static_cast<const char*>(folded), len, ascii_alpha, true);
}

// ScanTokenWindow for a window with special bytes: a word that touches one (or a special byte
// alone) is where the general tokenizer takes over, until past the window's last special byte (so
// text in other scripts costs one window per 64 bytes, not one per word).
template <typename OnToken>
size_t ScanMixedWindow(const char* text, size_t i, size_t n, const WindowMasks& m, std::string& scratch,
                       OnToken& on_token) {
  const auto* s = reinterpret_cast<const unsigned char*>(text);
  uint64_t rest = m.word | m.special;  // every other byte is an ASCII separator: skipped
  while (rest != 0) {
    const unsigned a = static_cast<unsigned>(__builtin_ctzll(rest));
    const uint64_t ends = ~m.word & (~0ull << a);
    if (ends == 0) {
      if (a > 0) return i + a;                                           // the word is finished in the next window
      return RunGeneralTokenizer(text, i, n, scratch, on_token, i + 1);  // a word of 64+ bytes
    }
    // The token is [a, b); b == a when byte a is special.
    const unsigned b = static_cast<unsigned>(__builtin_ctzll(ends));
    if ((m.special >> b) & 1u) {
      const unsigned last_special = 63u - static_cast<unsigned>(__builtin_clzll(m.special));
      return RunGeneralTokenizer(text, i + a, n, scratch, on_token, i + last_special + 1);
    }
    // Byte b is an ASCII separator, which ends the word [a, b) (bits a..b-1 of the masks).
    const uint64_t word_bits = (ends & (0 - ends)) - (rest & (0 - rest));
    EmitAsciiWord(s + i + a, b - a, (m.digit & word_bits) == 0, on_token);
    rest &= (~0ull << b) << 1;  // on after the separator
  }
  return i + 64;
}

// Emits the tokens of the window s[i..i+64) (i a resync point; s[i..i+kWindowReadable) readable
// and initialised, past n too when s is a zero-padded copy) and returns the resync point to
// continue from (> i). n is the end of the text, where the general tokenizer stops. A word
// reaching the window's end is left to the next window.
template <typename OnToken>
size_t ScanTokenWindow(const char* text, size_t i, size_t n, std::string& scratch, OnToken& on_token) {
  const auto* s = reinterpret_cast<const unsigned char*>(text);
  const WindowMasks m = ClassifyWindow(s + i);
  if (m.special != 0) return ScanMixedWindow(text, i, n, m, scratch, on_token);
  // Plain ASCII (the common case): every non-word byte is an ASCII separator, so the words are
  // the runs of word bytes. The k-th run starts at the k-th bit of `starts` (bit 0 included: i is
  // a resync point) and ends before the k-th bit of `ends` (the separator after it); only the
  // last run can lack an end, when it reaches the window's end.
  uint64_t starts = m.word & ~(m.word << 1);
  uint64_t ends = ~m.word & (m.word << 1);
  while (ends != 0) {
    const unsigned a = static_cast<unsigned>(__builtin_ctzll(starts));
    const unsigned b = static_cast<unsigned>(__builtin_ctzll(ends));
    const uint64_t word_bits = (ends & (0 - ends)) - (starts & (0 - starts));  // bits a..b-1
    EmitAsciiWord(s + i + a, b - a, (m.digit & word_bits) == 0, on_token);
    starts &= starts - 1;
    ends &= ends - 1;
  }
  if (starts == 0) return i + 64;
  const unsigned a = static_cast<unsigned>(__builtin_ctzll(starts));
  if (a > 0) return i + a;                                           // the word is finished in the next window
  return RunGeneralTokenizer(text, i, n, scratch, on_token, i + 1);  // a word of 64+ bytes
}
#endif

}  // namespace rg::features::detail
