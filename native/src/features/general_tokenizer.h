#pragma once
// The general tokenizer: byte by byte, every rule (Unicode classes and folding, apostrophes,
// possessives, invalid UTF-8), with an ASCII fast path. tokenizer.h combines it with the window
// scanner; see there for the on_token contract.
#include <cstddef>
#include <cstdint>
#include <string>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "features/ascii_scan.h"
#include "features/case_fold.h"
#include "features/code_point_class.h"
#include "features/utf8.h"

namespace rg::features {

// Longest token the ASCII fast path folds into a stack buffer (longer ones take the general path).
inline constexpr size_t kAsciiFoldMax = 64;

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

}  // namespace detail
}  // namespace rg::features
