#pragma once
// UTF-8 decoding and encoding for the tokenizer: strict (no overlong forms, no surrogates), and
// every invalid byte becomes U+FFFD so decoding always makes progress.
#include <cstddef>
#include <cstdint>
#include <string>

namespace rg::features {

// Decodes one UTF-8 sequence at s[0..n). Returns the number of bytes consumed (>= 1) and
// stores the code point, or 0xFFFD for any invalid/overlong/surrogate/truncated sequence
// (consuming exactly one byte, so decoding always makes progress).
inline size_t DecodeUtf8(const unsigned char* s, size_t n, uint32_t* cp) {
  const unsigned char c = s[0];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  if (c >= 0xC2 && c <= 0xDF) {
    if (n >= 2 && (s[1] & 0xC0) == 0x80) {
      *cp = ((c & 0x1Fu) << 6) | (s[1] & 0x3Fu);
      return 2;
    }
  } else if (c >= 0xE0 && c <= 0xEF) {
    if (n >= 3 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80) {
      const uint32_t v = ((c & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
      if (v >= 0x800 && (v < 0xD800 || v > 0xDFFF)) {
        *cp = v;
        return 3;
      }
    }
  } else if (c >= 0xF0 && c <= 0xF4) {
    if (n >= 4 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80) {
      const uint32_t v = ((c & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) | (s[3] & 0x3Fu);
      if (v >= 0x10000 && v <= 0x10FFFF) {
        *cp = v;
        return 4;
      }
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

}  // namespace rg::features
