#pragma once
// Tokenisation shared by corpus statistics, training and serving (see docs/features.md): the
// raw tokens of a text, folded but before stop-word removal and stemming (terms.h). Everything
// here is locale-independent and allocation-free per token on the hot path.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "features/general_tokenizer.h"
#include "features/window_tokenizer.h"

namespace rg::features {

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

}  // namespace rg::features
