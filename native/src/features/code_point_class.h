#pragma once
// Word-splitting class of a Unicode code point (letters and digits, ideographs, separators).
#include <cstdint>

namespace rg::features {

// Character classes for word splitting.
enum CharClass : uint8_t {
  kSeparator = 0,
  kWord = 1,       // letters, digits, combining marks: runs form one token
  kIdeograph = 2,  // CJK ideographs and kana: each code point is a token by itself
};

CharClass ClassifyCodePoint(uint32_t cp);
}  // namespace rg::features
