#pragma once
// Raw tokens to indexed terms: stop words removed, plain a-z words stemmed (Porter), with a
// per-thread cache from raw token to term hash for the extraction hot path.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "features/porter_stemmer.h"
#include "features/stop_words.h"
#include "features/term_hash.h"
#include "features/tokenizer.h"

namespace rg::features {

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
