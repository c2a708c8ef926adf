#pragma once
// Tokenisation shared by corpus statistics, training and serving (see docs/features.md).
// Everything here is locale-independent and allocation-free per token on the hot path.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace rg::features {

// Bumped whenever a change to tokenisation can change a term (folding, splitting, stop list,
// stemmer). Stored in corpus statistics and in the feature schema.
inline constexpr const char* kTokenizerVersion = "rg-tok-2";

// Character classes for word splitting.
enum CharClass : uint8_t {
  kSeparator = 0,
  kWord = 1,        // letters, digits, combining marks: runs form one token
  kIdeograph = 2,   // CJK ideographs and kana: each code point is a token by itself
};

CharClass ClassifyCodePoint(uint32_t cp);
// Simple (1:1) lower-casing for Latin, Greek, Cyrillic, Armenian, Georgian and full-width
// ASCII; other code points are returned unchanged. Never depends on the process locale.
uint32_t FoldCase(uint32_t cp);

// Decodes one UTF-8 sequence at s[0..n). Returns the number of bytes consumed (>= 1) and
// stores the code point, or 0xFFFD for any invalid/overlong/surrogate/truncated sequence
// (consuming exactly one byte, so decoding always makes progress).
inline size_t DecodeUtf8(const unsigned char* s, size_t n, uint32_t* cp) {
  const unsigned char c = s[0];
  if (c < 0x80) { *cp = c; return 1; }
  if (c >= 0xC2 && c <= 0xDF) {
    if (n >= 2 && (s[1] & 0xC0) == 0x80) { *cp = ((c & 0x1Fu) << 6) | (s[1] & 0x3Fu); return 2; }
  } else if (c >= 0xE0 && c <= 0xEF) {
    if (n >= 3 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80) {
      const uint32_t v = ((c & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
      if (v >= 0x800 && (v < 0xD800 || v > 0xDFFF)) { *cp = v; return 3; }
    }
  } else if (c >= 0xF0 && c <= 0xF4) {
    if (n >= 4 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80) {
      const uint32_t v = ((c & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) | (s[3] & 0x3Fu);
      if (v >= 0x10000 && v <= 0x10FFFF) { *cp = v; return 4; }
    }
  }
  *cp = 0xFFFD;
  return 1;
}

inline void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

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
      v = static_cast<uint64_t>(t[0]) | (static_cast<uint64_t>(t[r / 2]) << 8) | (static_cast<uint64_t>(t[r - 1]) << 16);
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

// Porter (1980) stemmer, as in Martin Porter's reference C implementation. Stems
// buf[0..n) in place (only lower-case ASCII a-z words of 3..kMaxStemmedWord letters) and returns
// the new length.
inline constexpr size_t kMaxStemmedWord = 64;
size_t PorterStem(char* buf, size_t n);

enum AsciiClass : uint8_t { kAsciiSeparator = 0, kAsciiLower, kAsciiUpper, kAsciiDigit, kAsciiApostrophe, kNonAscii };
// Class of each byte value: ASCII ones by kind, every byte >= 0x80 kNonAscii.
struct AsciiClassTable {
  uint8_t v[256];
  constexpr AsciiClassTable() : v() {
    for (int c = 0; c < 256; ++c) {
      v[c] = c >= 0x80                 ? kNonAscii
             : (c >= 'a' && c <= 'z') ? kAsciiLower
             : (c >= 'A' && c <= 'Z') ? kAsciiUpper
             : (c >= '0' && c <= '9') ? kAsciiDigit
             : c == '\''             ? kAsciiApostrophe
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

// Longest token the ASCII fast path folds into a stack buffer (longer ones take the general path).
inline constexpr size_t kAsciiFoldMax = 64;

// Calls on_token(const char* folded, size_t len, bool ascii_alpha, bool readable16) for every raw
// token of s[0..n) in order (before stop-word removal and stemming); readable16: the 16 bytes
// from `folded` may be read and are initialised (the token lies inside the text with 16 bytes to
// spare, or in a padded buffer). `scratch` is reused between tokens (no allocation once it has
// grown). Rules: see docs/features.md.
//
// Two tokenizers cooperate and give exactly the tokens of the first alone:
//  - RunGeneralTokenizer: byte by byte, every rule (Unicode, apostrophes, possessives);
//  - ScanTokenWindow (SSE2): classifies 64 bytes at once into bit masks and emits the plain
//    ASCII words in them (a run of [A-Za-z0-9] between ASCII separators) without a branch per
//    byte; anything else it hands to the general tokenizer.
// The general tokenizer's whole state is its pending token (`scratch`; ascii_alpha is true
// whenever scratch is empty), so at any position where nothing is pending ("resync point") either
// tokenizer may continue and the token sequence is the same.
namespace detail {

// The general tokenizer from s[i] with nothing pending. Returns at the first resync point at or
// after resync_at (SIZE_MAX: never; it then runs to the end and emits the last token); the
// return value is that position, or n.
template <typename OnToken>
size_t RunGeneralTokenizer(const char* text, size_t i, size_t n, std::string& scratch, OnToken& on_token,
                           size_t resync_at) {
  const auto* s = reinterpret_cast<const unsigned char*>(text);
  scratch.clear();
  bool ascii_alpha = true;
  auto flush = [&]() {
    if (scratch.empty()) return;
    size_t len = scratch.size();
    // English possessive: drop a final 's (john's -> john).
    if (len >= 3 && scratch[len - 1] == 's' && scratch[len - 2] == '\'') {
      len -= 2;
      // The apostrophe cleared ascii_alpha; what is left may be a plain a-z word, which must be
      // stemmed exactly like the same word written without the possessive.
      if (!ascii_alpha) {
        ascii_alpha = true;
        for (size_t k = 0; k < len && ascii_alpha; ++k) ascii_alpha = scratch[k] >= 'a' && scratch[k] <= 'z';
      }
    }
    on_token(scratch.data(), len, ascii_alpha, false);
    scratch.clear();
    ascii_alpha = true;
  };
  while (i < n) {
    // A resync point: nothing pending, so the window scanner may take over here.
    if (i >= resync_at && scratch.empty()) return i;
    const unsigned char c = s[i];
    const uint8_t ascii_cls = kAsciiClass[c];
    if (ascii_cls == kAsciiSeparator && scratch.empty()) {  // spaces and punctuation between words
      ++i;
      continue;
    }
    if (scratch.empty() && ascii_cls >= kAsciiLower && ascii_cls <= kAsciiDigit) {
      // Fast path: a run of ASCII letters/digits ended by an ASCII separator (or the end) is a
      // whole token. Lower-case letters and digits are their own folded form and are handed over
      // in place; a run with capitals is folded (| 0x20 maps A-Z to a-z and keeps a-z, 0-9) into a
      // stack buffer. The separator ends the token exactly as the general path would (a flush), so
      // it is consumed here too.
      bool digits = false;
      bool upper = false;
      const size_t j = ScanAsciiAlnum(s, i, n, &digits, &upper);
      if (j == n || kAsciiClass[s[j]] == kAsciiSeparator) {
        const size_t len = j - i;
#if defined(__SSE2__)
        if (len <= 16 && i + 16 <= n) {
          // Short token inside the text: fold 16 bytes at once whether or not it has capitals
          // (no branch on that; bytes past the token are never read), then the separator.
          alignas(16) char folded16[16];
          const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
          _mm_store_si128(reinterpret_cast<__m128i*>(folded16), _mm_or_si128(v, _mm_set1_epi8(0x20)));
          on_token(folded16, len, !digits, true);
          i = j + (j < n);
          continue;
        }
#endif
        if (!upper) {
          on_token(text + i, len, !digits, n - i >= 16);
          i = j + (j < n);
          continue;
        }
        if (len <= kAsciiFoldMax) {
          // Zeroed: readers may load up to 16 bytes from the start (masking off what is past the
          // token), and those bytes must not be indeterminate.
          char folded[kAsciiFoldMax + 16] = {};
          size_t k = 0;
#if defined(__SSE2__)
          // 16 bytes at a time while they lie inside the text (bytes past the token are folded
          // too but never read).
          const __m128i bit5 = _mm_set1_epi8(0x20);
          for (; k < len && i + k + 16 <= n; k += 16) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + k));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(folded + k), _mm_or_si128(v, bit5));
          }
#endif
          for (; k < len; ++k) folded[k] = static_cast<char>(s[i + k] | 0x20);
          on_token(folded, len, !digits, true);  // len <= kAsciiFoldMax: 16 bytes to spare
          i = j + (j < n);
          continue;
        }
      }
      if (!upper) {
        // Continues with an apostrophe or non-ASCII: take the general path.
        scratch.append(text + i, j - i);
        ascii_alpha = !digits;
        i = j;
        continue;
      }
      // Capitals in a token the fast path cannot finish: the general path below, byte by byte.
    }
    if (c < 0x80) {
      if (ascii_cls == kAsciiLower || ascii_cls == kAsciiDigit) {
        // A run of lower-case letters/digits inside a token (e.g. after a capital): append at once.
        bool digits = false;
        const size_t j = ScanAsciiWord(s, i, n, &digits);
        scratch.append(text + i, j - i);
        if (digits) ascii_alpha = false;
        i = j;
        continue;
      }
      if (ascii_cls == kAsciiUpper) {
        scratch.push_back(static_cast<char>(c + 32));
        ++i;
        continue;
      }
      if (c == '\'' && !scratch.empty() && i + 1 < n) {
        uint32_t next;
        const size_t m = DecodeUtf8(s + i + 1, n - i - 1, &next);
        (void)m;
        if (ClassifyCodePoint(next) == kWord) {
          scratch.push_back('\'');
          ascii_alpha = false;
          ++i;
          continue;
        }
      }
      flush();
      ++i;
      continue;
    }
    uint32_t cp;
    const size_t used = DecodeUtf8(s + i, n - i, &cp);
    if (cp == 0x2019 && !scratch.empty() && i + used < n) {
      // Typographic apostrophe inside a word: same as ASCII '.
      uint32_t next;
      DecodeUtf8(s + i + used, n - i - used, &next);
      if (ClassifyCodePoint(next) == kWord) {
        scratch.push_back('\'');
        ascii_alpha = false;
        i += used;
        continue;
      }
    }
    const CharClass cls = ClassifyCodePoint(cp);
    if (cls == kWord) {
      const uint32_t f = FoldCase(cp);
      if (f < 0x80) {
        scratch.push_back(static_cast<char>(f));
        if (!(f >= 'a' && f <= 'z')) ascii_alpha = false;
      } else {
        AppendUtf8(scratch, f);
        ascii_alpha = false;
      }
    } else if (cls == kIdeograph) {
      flush();
      AppendUtf8(scratch, cp);
      ascii_alpha = false;
      flush();
    } else {
      flush();
    }
    i += used;
  }
  flush();
  return n;
}

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
      if (a > 0) return i + a;  // the word is finished in the next window
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
  if (a > 0) return i + a;  // the word is finished in the next window
  return RunGeneralTokenizer(text, i, n, scratch, on_token, i + 1);  // a word of 64+ bytes
}
#endif

}  // namespace detail

template <typename OnToken>
void ForEachRawToken(const char* text, size_t n, std::string& scratch, OnToken&& on_token) {
  size_t i = 0;
#if defined(__SSE2__)
  while (n - i >= detail::kWindowReadable) i = detail::ScanTokenWindow(text, i, n, scratch, on_token);
  // The last < kWindowReadable bytes (all of a short title or query): the window scanner on a
  // zero-padded copy. A 0 byte is an ASCII separator, so a word ending at the end of the text
  // ends there in the copy too; the general tokenizer, when needed, still stops at the real end
  // (it gets the copy's real length).
  const size_t rest = n - i;
  // Room for a window (64 bytes, and 16 more to fold a word in it) starting at any of the first
  // kWindowReadable bytes.
  alignas(16) char tail[detail::kWindowReadable + 64 + 16] = {};
  if (rest > 0) std::memcpy(tail, text + i, rest);
  size_t j = 0;
  while (j < rest) j = detail::ScanTokenWindow(tail, j, rest, scratch, on_token);
#else
  detail::RunGeneralTokenizer(text, i, n, scratch, on_token, SIZE_MAX);
#endif
}

// Normalises a raw token into its indexed term: returns false for a stop word, otherwise
// stems in place (ASCII a-z words of 3+ letters) and returns true with the new length.
inline bool NormalizeTerm(char* buf, size_t* len, bool ascii_alpha) {
  if (IsStopWord(buf, *len)) return false;
  if (ascii_alpha && *len > 2) *len = PorterStem(buf, *len);
  return true;
}

// Maps raw-token hashes to term hashes so a word seen before is neither stop-checked nor
// stemmed again. Direct-mapped, fixed size, one per thread (extraction may run on libuv
// worker threads); a 64-bit hash collision between two raw tokens is the only way it can be
// wrong (probability ~1e-12 for a million distinct words).
class TermCache {
 public:
  static constexpr size_t kSlots = 1u << 14;
  // Returns the term hash of the raw token (0 when it is a stop word).
  uint64_t Resolve(const char* p, size_t n, bool ascii_alpha) {
    // The stemming decision depends on ascii_alpha as well as the bytes, so both form the key:
    // otherwise a term resolved once under one flag would be served for the other.
    const uint64_t raw = HashTerm(p, n) ^ (ascii_alpha ? 0 : 0x9e3779b97f4a7c15ULL);
    Slot& slot = slots_[raw & (kSlots - 1)];
    if (slot.raw == raw) return slot.term;
    uint64_t term = 0;
    if (!IsStopWord(p, n)) {
      if (ascii_alpha && n > 2 && n <= kMaxStemmedWord) {
        char tmp[kMaxStemmedWord];
        std::memcpy(tmp, p, n);
        const size_t m = PorterStem(tmp, n);
        term = HashTerm(tmp, m);
      } else {
        term = HashTerm(p, n);
      }
    }
    slot.raw = raw;
    slot.term = term;
    return term;
  }
  static TermCache& ForThisThread();

 private:
  struct Slot {
    uint64_t raw = 0;
    uint64_t term = 0;
  };
  Slot slots_[kSlots];
};

// Calls on_term(uint64_t term_hash) for every indexed term (stop words removed, stemmed).
template <typename OnTerm>
void ForEachTermHash(const char* text, size_t n, std::string& scratch, OnTerm&& on_term) {
  TermCache& cache = TermCache::ForThisThread();
  ForEachRawToken(text, n, scratch, [&](const char* p, size_t len, bool ascii_alpha, bool) {
    const uint64_t h = cache.Resolve(p, len, ascii_alpha);
    if (h != 0) on_term(h);
  });
}

// Calls on_term(const char* term, size_t len) for every indexed term (for statistics building
// and the debugging tokenize()).
template <typename OnTerm>
void ForEachTerm(const char* text, size_t n, std::string& scratch, std::string& term_buf, OnTerm&& on_term) {
  ForEachRawToken(text, n, scratch, [&](const char* p, size_t len, bool ascii_alpha, bool) {
    term_buf.assign(p, len);
    size_t m = len;
    if (!NormalizeTerm(term_buf.data(), &m, ascii_alpha)) return;
    on_term(term_buf.data(), m);
  });
}

}  // namespace rg::features
