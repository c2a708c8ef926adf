#pragma once
// Lexical features of (query, passage) pairs. The order and meaning of the features is the
// versioned schema in src/features/schema.ts (and docs/features.md); the names below must match
// it exactly (the TypeScript side checks at load).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "features/corpus_stats.h"

namespace rg::features {

inline constexpr const char* kFeatureSchemaVersion = "lexical-v1";

enum Feature : int {
  kBm25Body = 0,
  kBm25Title,
  kBm25All,
  kQueryCoverage,
  kBodyCoverage,
  kTitleCoverage,
  kIdfCoverage,
  kMatchedIdfSum,
  kMatchedIdfMax,
  kBigramMatches,
  kBigramShare,
  kLongestSpan,
  kLongestSpanShare,
  kMinWindowDensity,
  kNearPairShare,
  kMatchDensity,
  kBodyLength,
  kTitleLength,
  kQueryLength,
  kQueryIdfSum,
  kRetrievalScore,
  kRetrievalRank,
  kEmbeddingSimilarity,
  kNumFeatures,
};

inline constexpr int kNumPassthrough = 3;  // the last three features come from the caller
inline constexpr const char* kFeatureNames[kNumFeatures] = {
    "bm25_body",          "bm25_title",           "bm25_all",
    "query_coverage",     "body_coverage",        "title_coverage",
    "idf_coverage",       "matched_idf_sum",      "matched_idf_max",
    "bigram_matches",     "bigram_share",         "longest_span",
    "longest_span_share", "min_window_density",   "near_pair_share",
    "match_density",      "body_length",          "title_length",
    "query_length",       "query_idf_sum",        "retrieval_score",
    "retrieval_rank",     "embedding_similarity",
};

inline constexpr double kBm25K1 = 1.2;
inline constexpr double kBm25B = 0.75;
inline constexpr int kMaxQueryTerms = 256;     // distinct query terms used (the rest are ignored)
inline constexpr int kMaxQueryPositions = 64;  // query positions used by span/bigram/pair features
inline constexpr uint32_t kNearDistance = 8;   // "near" = within this many term positions
inline constexpr uint32_t kFieldGap = 64;      // position gap between title and body

// A query tokenised once and resolved against the corpus statistics.
class QueryPlan {
 public:
  QueryPlan(const CorpusStats& stats, const char* query, size_t len);

  // Index of the distinct query term with this hash, or -1.
  int Find(uint64_t h) const {
    size_t i = h & (kSlots - 1);
    while (true) {
      const uint64_t k = keys_[i];
      if (k == h) return idx_[i];
      if (k == 0) return -1;
      i = (i + 1) & (kSlots - 1);
    }
  }

  // Cheap pre-filter on a raw (folded, unstemmed) token: false only when its stem cannot be a
  // query term. Relies on a property of the Porter stemmer (argued in docs/features.md): a stem
  // never changes the word's first three characters when it keeps at least four, its first two
  // when it has three, its first one otherwise. So a word can only stem to query term s if it
  // starts with s[0..3) (|s| >= 4), s[0..2) (|s| = 3) or s[0] (|s| <= 2). Unstemmed tokens
  // (digits, non-ASCII, apostrophes) are their own term, so the same test holds for them.
  // Checked on every a-z word of up to 5 letters, every word of the five collections and the
  // BERT vocabulary, and 3 million random words built from Porter suffixes: no exception.
  bool MayMatch(const char* p, size_t n) const {
    const unsigned c0 = static_cast<unsigned char>(p[0]);
    const unsigned c1 = n >= 2 ? static_cast<unsigned char>(p[1]) : 0u;
    if (Prefix2Bit(c0 | (c1 << 8))) return true;
    return n >= 3 && Prefix3Bit(c0 | (c1 << 8) | (static_cast<unsigned>(static_cast<unsigned char>(p[2])) << 16));
  }

  // MayMatch without branches or length tests, for a token with at least 4 readable, initialised
  // bytes at p. The bytes after a token of 1-2 bytes are read as if they were part of it: that
  // can only add candidates (the exact term lookup rejects them), never lose one, because a term
  // of 1-2 bytes sets its first byte's whole row of prefix2_bits_ and a longer term only matches
  // tokens at least as long as the prefix it keys on.
  bool MayMatchPadded(const char* p, size_t /*n*/) const {
    uint32_t four;
    std::memcpy(&four, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    four = __builtin_bswap32(four);
#endif
    return (Prefix2Bit(four & 0xFFFFu) | Prefix3Bit(four & 0xFFFFFFu)) != 0;
  }

  int num_terms() const { return static_cast<int>(terms_.size()); }
  int num_positions() const { return num_positions_; }
  uint32_t length() const { return length_; }

  struct Term {
    uint64_t hash;
    uint32_t qtf;
    double idf_body;
    double idf_title;
    double idf_any;
    uint64_t position_mask;  // bits j: query position j holds this term (j < 64)
  };
  const std::vector<Term>& terms() const { return terms_; }
  double idf_sum() const { return idf_sum_; }

 private:
  static constexpr size_t kSlots = 1024;
  // Bit (c0 | c1 << 8) of prefix2_bits_: a token whose first two bytes are c0, c1 (c1 = 0 for a
  // one-byte token; no term contains a 0 byte) may be a query term of 1-3 bytes: set for every
  // c1 after the first byte of a term of 1-2 bytes, and for the first two bytes of a 3-byte term.
  // The whole 2-byte prefix is the key (no hashing).
  unsigned Prefix2Bit(unsigned key) const { return static_cast<unsigned>(prefix2_bits_[key >> 6] >> (key & 63)) & 1u; }
  // Bit Hash3(first three bytes) of prefix3_bits_: the token may be a query term of 4+ bytes
  // (hashed: a collision only makes a token a candidate that the exact lookup then rejects).
  static unsigned Hash3(unsigned key) { return (key * 0x9E3779B1u) >> 16; }
  unsigned Prefix3Bit(unsigned key) const {
    const unsigned h = Hash3(key);
    return static_cast<unsigned>(prefix3_bits_[h >> 6] >> (h & 63)) & 1u;
  }
  static void SetBit(uint64_t* bits, unsigned i) { bits[i >> 6] |= 1ull << (i & 63); }
  uint64_t prefix2_bits_[65536 / 64] = {};
  uint64_t prefix3_bits_[65536 / 64] = {};
  std::vector<uint64_t> keys_;
  std::vector<int16_t> idx_;
  std::vector<Term> terms_;
  int num_positions_ = 0;
  uint32_t length_ = 0;
  double idf_sum_ = 0;
};

// Per-thread reusable buffers so extracting a passage allocates nothing once warm.
struct ExtractScratch {
  std::string token;
  std::vector<uint32_t> tf_body;
  std::vector<uint32_t> tf_title;
  std::vector<uint32_t> window_counts;
  struct Match {
    uint32_t pos;
    uint16_t term;
  };
  std::vector<Match> matches;
  uint32_t run[kMaxQueryPositions];
  uint64_t pairs[kMaxQueryPositions];
};

struct PassageText {
  const char* title;
  size_t title_len;
  const char* body;
  size_t body_len;
};

// Writes kNumFeatures floats to out. passthrough: kNumPassthrough values (NaN = missing) or null.
void ExtractFeatures(const CorpusStats& stats, const QueryPlan& query, const PassageText& passage,
                     const float* passthrough, float* out, ExtractScratch& scratch);

// BM25 inverse document frequency (Lucene's, always > 0).
double Idf(uint64_t doc_count, uint32_t df);

}  // namespace rg::features
