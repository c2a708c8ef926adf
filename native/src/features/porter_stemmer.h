#pragma once
// The Porter (1980) stemmer that normalises plain lower-case ASCII words into terms.
#include <cstddef>

namespace rg::features {

// Porter (1980) stemmer, as in Martin Porter's reference C implementation. Stems
// buf[0..n) in place (only lower-case ASCII a-z words of 3..kMaxStemmedWord letters) and returns
// the new length.
inline constexpr size_t kMaxStemmedWord = 64;
size_t PorterStem(char* buf, size_t n);

}  // namespace rg::features
