#include "features/extractor.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "features/stop_words.h"
#include "features/term_hash.h"
#include "features/terms.h"
#include "features/tokenizer.h"

namespace rg::features {

double Idf(uint64_t doc_count, uint32_t df) {
  const double n = static_cast<double>(doc_count);
  const double d = std::min(static_cast<double>(df), n);
  return std::log(1.0 + (n - d + 0.5) / (d + 0.5));
}

QueryPlan::QueryPlan(const CorpusStats& stats, const char* query, size_t len) : keys_(kSlots, 0), idx_(kSlots, -1) {
  std::string scratch;
  std::string term_buf;
  int position = 0;
  ForEachTerm(query, len, scratch, term_buf, [&](const char* term, size_t n) {
    const uint64_t h = HashTerm(term, n);
    ++length_;
    int qi = Find(h);
    if (qi < 0) {
      if (static_cast<int>(terms_.size()) >= kMaxQueryTerms) {
        ++position;
        return;
      }
      qi = static_cast<int>(terms_.size());
      size_t i = h & (kSlots - 1);
      while (keys_[i] != 0) i = (i + 1) & (kSlots - 1);
      keys_[i] = h;
      idx_[i] = static_cast<int16_t>(qi);
      const TermDf df = stats.Lookup(h);
      terms_.push_back(Term{h, 0, Idf(stats.doc_count(), df.body), Idf(stats.doc_count(), df.title),
                            Idf(stats.doc_count(), df.any), 0});
      // The match pre-filter (see MayMatch).
      const auto byte = [term](size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(term[k])); };
      if (n <= 2) {
        for (unsigned c1 = 0; c1 < 256; ++c1) SetBit(prefix2_bits_, byte(0) | (c1 << 8));  // any second byte, or none
      } else if (n == 3) {
        SetBit(prefix2_bits_, byte(0) | (byte(1) << 8));
      } else {
        SetBit(prefix3_bits_, Hash3(byte(0) | (byte(1) << 8) | (byte(2) << 16)));
      }
    }
    Term& t = terms_[static_cast<size_t>(qi)];
    ++t.qtf;
    if (position < kMaxQueryPositions) t.position_mask |= 1ull << position;
    ++position;
  });
  num_positions_ = std::min(position, kMaxQueryPositions);
  for (const Term& t : terms_) idf_sum_ += t.idf_any;
}

namespace {

// State of the scan over one passage (title then body) that span/bigram/proximity features use.
struct ScanState {
  uint32_t pos = 0;
  bool has_last = false;
  uint32_t last_match_pos = 0;
  uint64_t active = 0;  // query positions whose run ends at the last matched term
  uint32_t longest = 0;
  uint64_t bigrams = 0;  // bit j: query bigram (j-1, j) seen adjacent
  uint32_t matched_tokens = 0;
};

// The per-token work of ScanField. operator() runs for every raw token and is inlined into the
// tokenizer loop (a call per token, with the scan state in memory, cost about as much as the
// work itself); the rare tokens that may be query terms go to Match, out of line.
class FieldScanner {
 public:
  FieldScanner(const QueryPlan& q, uint32_t* tf, uint32_t start, ScanState& st, ExtractScratch& sc)
      : q_(q), tf_(tf), st_(st), sc_(sc), cache_(TermCache::ForThisThread()), next_pos_(start) {}

  __attribute__((always_inline)) void operator()(const char* p, size_t n, bool ascii_alpha, bool readable16) {
    // No branch on the stop test (it is unpredictable): stop words take no position and are
    // masked out of the match test below.
    bool stop, candidate;
    if (readable16) {
      stop = kPaddedStopTable.Contains(p, n);
      candidate = q_.MayMatchPadded(p, n);
    } else {
      stop = IsStopWord(p, n);
      candidate = q_.MayMatch(p, n);
    }
    const uint32_t pos = next_pos_;
    next_pos_ += static_cast<uint32_t>(!stop);
    // Most tokens cannot be query terms: skip stemming/cache lookup for them. (A query without
    // terms sets no pre-filter bit, so no token is a candidate then.)
    unsigned go = static_cast<unsigned>(candidate) & static_cast<unsigned>(!stop);
#if defined(__GNUC__)
    // One branch on the combined bit: left alone, the compiler may split this into a branch per
    // operand, and a branch on `stop` alone is mispredicted for about one token in three.
    __asm__("" : "+r"(go));
#endif
    if (go != 0) Match(p, n, ascii_alpha, pos);
  }

  uint32_t next_pos() const { return next_pos_; }

 private:
  __attribute__((noinline)) void Match(const char* p, size_t n, bool ascii_alpha, uint32_t pos) {
    const int qi = q_.Find(cache_.Resolve(p, n, ascii_alpha));
    if (qi < 0) return;
    ScanState& st = st_;
    ++tf_[qi];
    ++st.matched_tokens;
    sc_.matches.push_back({pos, static_cast<uint16_t>(qi)});
    const uint64_t pm = q_.terms()[static_cast<size_t>(qi)].position_mask;
    const uint64_t prev_active = (st.has_last && st.last_match_pos + 1 == pos) ? st.active : 0;
    uint64_t bits = pm;
    // High to low, so run[j - 1] is still the previous token's value when j reads it.
    while (bits != 0) {
      const int j = 63 - __builtin_clzll(bits);
      bits &= ~(1ull << j);
      const uint32_t r = (j > 0 && ((prev_active >> (j - 1)) & 1u)) ? sc_.run[j - 1] + 1 : 1;
      sc_.run[j] = r;
      if (r > st.longest) st.longest = r;
      if (r >= 2) st.bigrams |= 1ull << j;
    }
    st.active = pm;
    st.has_last = true;
    st.last_match_pos = pos;
  }

  const QueryPlan& q_;
  uint32_t* tf_;
  ScanState& st_;
  ExtractScratch& sc_;
  TermCache& cache_;
  uint32_t next_pos_;
};

void ScanField(const QueryPlan& q, const char* text, size_t len, uint32_t* tf, uint32_t* field_len, ScanState& st,
               ExtractScratch& sc) {
  const uint32_t start = st.pos;
  FieldScanner scanner(q, tf, start, st, sc);
  ForEachRawToken(text, len, sc.token, scanner);
  st.pos = scanner.next_pos();
  *field_len += st.pos - start;  // one position per indexed (non-stop) token
}

// Set bits in words[0..n). The shipped x86-64 addon is built for baseline x86-64 (it must run on
// any x86-64 CPU), where __builtin_popcountll is a libgcc call; CPUs with POPCNT (nearly all since
// 2008) get a variant compiled for that instruction, chosen once at run time.
int CountBitsPortable(const uint64_t* words, int n) {
  int bits = 0;
  for (int i = 0; i < n; ++i) bits += __builtin_popcountll(words[i]);
  return bits;
}
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__POPCNT__)
__attribute__((target("popcnt"))) int CountBitsPopcnt(const uint64_t* words, int n) {
  int bits = 0;
  for (int i = 0; i < n; ++i) bits += __builtin_popcountll(words[i]);
  return bits;
}
int CountBits(const uint64_t* words, int n) {
  static const bool has_popcnt = __builtin_cpu_supports("popcnt");
  return has_popcnt ? CountBitsPopcnt(words, n) : CountBitsPortable(words, n);
}
#else
int CountBits(const uint64_t* words, int n) { return CountBitsPortable(words, n); }
#endif

double Bm25(double idf, uint32_t tf, double len, double avg) {
  if (tf == 0) return 0;
  const double ratio = avg > 0 ? len / avg : 1.0;
  const double f = static_cast<double>(tf);
  return idf * f * (kBm25K1 + 1) / (f + kBm25K1 * (1 - kBm25B + kBm25B * ratio));
}

}  // namespace

void ExtractFeatures(const CorpusStats& stats, const QueryPlan& q, const PassageText& p, const float* passthrough,
                     float* out, ExtractScratch& sc) {
  const int nq = q.num_terms();
  const auto& terms = q.terms();
  sc.tf_body.assign(static_cast<size_t>(nq), 0);
  sc.tf_title.assign(static_cast<size_t>(nq), 0);
  sc.matches.clear();

  ScanState st;
  uint32_t title_len = 0;
  uint32_t body_len = 0;
  ScanField(q, p.title, p.title_len, sc.tf_title.data(), &title_len, st, sc);
  st.pos += kFieldGap;
  st.has_last = false;
  ScanField(q, p.body, p.body_len, sc.tf_body.data(), &body_len, st, sc);

  const double avg_body = stats.avg_body_len();
  const double avg_title = stats.avg_title_len();
  const double avg_all = avg_body + avg_title;
  double bm25_body = 0, bm25_title = 0, bm25_all = 0;
  double matched_idf_sum = 0, matched_idf_max = 0;
  int matched = 0, matched_body = 0, matched_title = 0;
  for (int i = 0; i < nq; ++i) {
    const QueryPlan::Term& t = terms[static_cast<size_t>(i)];
    const uint32_t tb = sc.tf_body[static_cast<size_t>(i)];
    const uint32_t tt = sc.tf_title[static_cast<size_t>(i)];
    const double w = static_cast<double>(t.qtf);
    bm25_body += w * Bm25(t.idf_body, tb, body_len, avg_body);
    bm25_title += w * Bm25(t.idf_title, tt, title_len, avg_title);
    bm25_all += w * Bm25(t.idf_any, tb + tt, static_cast<double>(body_len) + title_len, avg_all);
    if (tb > 0) ++matched_body;
    if (tt > 0) ++matched_title;
    if (tb + tt > 0) {
      ++matched;
      matched_idf_sum += t.idf_any;
      matched_idf_max = std::max(matched_idf_max, t.idf_any);
    }
  }

  // Smallest window (in term positions) holding every matched distinct query term: one linear
  // two-pointer pass over the matches.
  double min_window_density = 0;
  const auto& m = sc.matches;
  if (matched >= 2) {
    sc.window_counts.assign(static_cast<size_t>(nq), 0);
    int covered = 0;
    size_t left = 0;
    uint32_t best = std::numeric_limits<uint32_t>::max();
    for (size_t r = 0; r < m.size(); ++r) {
      if (sc.window_counts[m[r].term]++ == 0) ++covered;
      while (covered == matched) {
        best = std::min(best, m[r].pos - m[left].pos + 1);
        if (--sc.window_counts[m[left].term] == 0) --covered;
        ++left;
      }
    }
    min_window_density = static_cast<double>(matched) / static_cast<double>(best);
  }

  // Distinct pairs of query terms (among the first 64 distinct) within kNearDistance positions:
  // each match looks back at most kNearDistance matches, so this stays linear.
  const int pair_terms = std::min(nq, kMaxQueryPositions);
  double near_pair_share = 0;
  if (pair_terms >= 2) {
    std::fill(sc.pairs, sc.pairs + pair_terms, 0ull);
    for (size_t r = 1; r < m.size(); ++r) {
      const uint16_t b = m[r].term;
      if (b >= pair_terms) continue;
      for (size_t l = r; l-- > 0;) {
        if (m[r].pos - m[l].pos > kNearDistance) break;
        const uint16_t a = m[l].term;
        if (a == b || a >= pair_terms) continue;
        sc.pairs[std::min(a, b)] |= 1ull << std::max(a, b);
      }
    }
    const int pairs = CountBits(sc.pairs, pair_terms);
    near_pair_share = static_cast<double>(pairs) / (pair_terms * (pair_terms - 1) / 2.0);
  }

  const int npos = q.num_positions();
  const int bigrams = CountBits(&st.bigrams, 1);
  const uint32_t total_len = body_len + title_len;
  const double nqd = nq > 0 ? static_cast<double>(nq) : 1.0;

  out[kBm25Body] = static_cast<float>(bm25_body);
  out[kBm25Title] = static_cast<float>(bm25_title);
  out[kBm25All] = static_cast<float>(bm25_all);
  out[kQueryCoverage] = static_cast<float>(matched / nqd);
  out[kBodyCoverage] = static_cast<float>(matched_body / nqd);
  out[kTitleCoverage] = static_cast<float>(matched_title / nqd);
  out[kIdfCoverage] = static_cast<float>(q.idf_sum() > 0 ? matched_idf_sum / q.idf_sum() : 0.0);
  out[kMatchedIdfSum] = static_cast<float>(matched_idf_sum);
  out[kMatchedIdfMax] = static_cast<float>(matched_idf_max);
  out[kBigramMatches] = static_cast<float>(bigrams);
  out[kBigramShare] = static_cast<float>(npos >= 2 ? bigrams / static_cast<double>(npos - 1) : 0.0);
  out[kLongestSpan] = static_cast<float>(st.longest);
  out[kLongestSpanShare] = static_cast<float>(npos > 0 ? st.longest / static_cast<double>(npos) : 0.0);
  out[kMinWindowDensity] = static_cast<float>(min_window_density);
  out[kNearPairShare] = static_cast<float>(near_pair_share);
  out[kMatchDensity] = static_cast<float>(total_len > 0 ? st.matched_tokens / static_cast<double>(total_len) : 0.0);
  out[kBodyLength] = static_cast<float>(body_len);
  out[kTitleLength] = static_cast<float>(title_len);
  out[kQueryLength] = static_cast<float>(q.length());
  out[kQueryIdfSum] = static_cast<float>(q.idf_sum());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int i = 0; i < kNumPassthrough; ++i) {
    out[kRetrievalScore + i] = passthrough != nullptr ? passthrough[i] : nan;
  }
}

}  // namespace rg::features
