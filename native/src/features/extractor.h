#pragma once
// Lexical features of (query, passage) pairs. The order and meaning of the features is the
// versioned schema in src/features/schema.ts (and docs/features.md); the names below must match
// it exactly (the TypeScript side checks at load).
#include <cstddef>
#include <cstdint>
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
    "bm25_body",          "bm25_title",        "bm25_all",          "query_coverage",
    "body_coverage",      "title_coverage",    "idf_coverage",      "matched_idf_sum",
    "matched_idf_max",    "bigram_matches",    "bigram_share",      "longest_span",
    "longest_span_share", "min_window_density", "near_pair_share",  "match_density",
    "body_length",        "title_length",      "query_length",      "query_idf_sum",
    "retrieval_score",    "retrieval_rank",    "embedding_similarity",
};

inline constexpr double kBm25K1 = 1.2;
inline constexpr double kBm25B = 0.75;
inline constexpr int kMaxQueryTerms = 256;    // distinct query terms used (the rest are ignored)
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
  // query term. Relies on two properties of the Porter stemmer (argued in docs/features.md and
  // checked exhaustively on all a-z words of up to 5 letters and on every word of the shipped
  // collections): all but the last character of a stem are a prefix of the word, and a word
  // whose stem has one character starts with that character. So a word can only stem to query
  // term s if it starts with s[0..2) (|s| >= 3) or with s[0] (|s| <= 2). Unstemmed tokens
  // (digits, non-ASCII, apostrophes) are their own term, so the same test holds for them.
  bool MayMatch(const char* p, size_t n) const {
    const auto c0 = static_cast<unsigned char>(p[0]);
    if ((first_char_[c0 >> 6] >> (c0 & 63)) & 1u) return true;
    if (n < 2) return false;
    const unsigned key = PairKey(c0, static_cast<unsigned char>(p[1]));
    return (pair_bits_[key >> 6] >> (key & 63)) & 1u;
  }

  // MayMatch without branches, for a token with at least 2 readable bytes at p (p[1] is read
  // even when n == 1, and then ignored).
  bool MayMatchPadded(const char* p, size_t n) const {
    const auto c0 = static_cast<unsigned char>(p[0]);
    const unsigned key = PairKey(c0, static_cast<unsigned char>(p[1]));
    const unsigned first = static_cast<unsigned>((first_char_[c0 >> 6] >> (c0 & 63)) & 1u);
    const unsigned pair = static_cast<unsigned>((pair_bits_[key >> 6] >> (key & 63)) & 1u);
    return (first | (pair & static_cast<unsigned>(n >= 2))) != 0;
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
  static unsigned PairKey(unsigned char a, unsigned char b) { return ((a * 131u) ^ b) & 4095u; }
  uint64_t first_char_[4] = {0, 0, 0, 0};
  uint64_t pair_bits_[64] = {};
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
