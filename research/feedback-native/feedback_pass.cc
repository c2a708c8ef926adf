// Measurement, not a shipped path: what the feedback centroid cosine (docs/eval.md, "Pseudo-relevance
// feedback over the candidate list") costs per pair in C++, built on the extractor's own tokeniser,
// term cache and statistics, beside the shipped extractor (ExtractFeatures) on the same lists.
//
// Input: a dump of `npx tsx research/loco/feedback-cost.ts --collection C --dump FILE` (the collection's
// documents for the statistics; per list the query, its feedback set and every passage with the
// cosine research/loco/list-feedback.ts computed). Output: µs/pair of
//   extract   ExtractFeatures on every passage (the shipped lexical-v1 cost),
//   scan      ForEachRawToken alone over every passage (the tokenising a fused version would share),
//   feedback  the whole feature: every passage's terms through the per-thread TermCache, tf-idf unit
//             vectors with the corpus IDF, the feedback sum and one cosine per passage,
// and the largest difference between these cosines and the dump's (a parity check of the prototype).
// Usage: research/feedback-native/run.sh FILE [rounds] [head]   (head: as the dump's --head)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "features/corpus_stats.h"
#include "features/extractor.h"
#include "features/term_hash.h"
#include "features/terms.h"
#include "features/tokenizer.h"

namespace {

using rg::features::CorpusStats;
using rg::features::CorpusStatsBuilder;
using rg::features::ExtractFeatures;
using rg::features::ExtractScratch;
using rg::features::ForEachRawToken;
using rg::features::HashTerm;
using rg::features::Idf;
using rg::features::kNumFeatures;
using rg::features::PassageText;
using rg::features::QueryPlan;
using rg::features::TermCache;

struct Passage {
  std::string title;
  std::string text;
  double js_cosine = 0;
};

struct List {
  std::string query;
  std::vector<int> feedback;
  std::vector<Passage> passages;
};

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t end = line.find('\t', start);
    out.push_back(line.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

// Interns a list's terms to dense ids (open addressing, cleared per list) so per-passage counts,
// IDFs and the feedback sum are arrays: one statistics lookup per distinct term of the list.
class ListTerms {
 public:
  void Reset(size_t expected) {
    size_t cap = 64;
    while (cap < expected * 2) cap <<= 1;
    if (keys_.size() < cap) {
      keys_.assign(cap, 0);
      ids_.assign(cap, 0);
    } else {
      for (const size_t slot : used_) keys_[slot] = 0;
    }
    mask_ = keys_.size() - 1;
    used_.clear();
    idf_.clear();
  }
  // Dense id of the term (new terms get the next id and their IDF).
  uint32_t Id(uint64_t term, const CorpusStats& stats) {
    size_t i = term & mask_;
    while (keys_[i] != 0) {
      if (keys_[i] == term) return ids_[i];
      i = (i + 1) & mask_;
    }
    if ((used_.size() + 1) * 2 > keys_.size()) {
      Grow(stats);
      return Id(term, stats);
    }
    keys_[i] = term;
    ids_[i] = static_cast<uint32_t>(idf_.size());
    used_.push_back(i);
    idf_.push_back(Idf(stats.doc_count(), stats.Lookup(term).any));
    return ids_[i];
  }
  double idf(uint32_t id) const { return idf_[id]; }
  size_t size() const { return idf_.size(); }

 private:
  void Grow(const CorpusStats&) {
    std::vector<uint64_t> keys(keys_.size() * 2, 0);
    std::vector<uint32_t> ids(keys.size(), 0);
    const size_t mask = keys.size() - 1;
    std::vector<size_t> used;
    for (const size_t slot : used_) {
      size_t i = keys_[slot] & mask;
      while (keys[i] != 0) i = (i + 1) & mask;
      keys[i] = keys_[slot];
      ids[i] = ids_[slot];
      used.push_back(i);
    }
    keys_.swap(keys);
    ids_.swap(ids);
    used_.swap(used);
    mask_ = mask;
  }
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> ids_;
  std::vector<size_t> used_;
  std::vector<double> idf_;
  size_t mask_ = 0;
};

// One list's feedback computation; buffers are reused across lists (no allocation once warm).
class FeedbackPass {
 public:
  // head > 0: only each passage's first `head` terms enter its vector (research/loco/feedback-cost.ts --head).
  FeedbackPass(const CorpusStats& stats, size_t head) : stats_(stats), head_(head) {
    for (uint32_t tf = 1; tf < kLogTable; ++tf) log1p_tf_[tf] = 1.0 + std::log(static_cast<double>(tf));
  }

  // Cosine of each passage's unit tf-idf vector ((1 + ln tf) × idf) to the mean of the feedback set's
  // unit vectors, the passage itself left out (research/loco/list-feedback.ts); 0 when that mean is empty.
  void Run(const List& list, std::vector<double>& out) {
    const size_t n = list.passages.size();
    size_t bytes = 0;
    for (const Passage& p : list.passages) bytes += p.title.size() + p.text.size();
    terms_.Reset(bytes / 8 + 16);
    offsets_.assign(n + 1, 0);
    ids_.clear();
    weights_.clear();
    TermCache& cache = TermCache::ForThisThread();
    for (size_t i = 0; i < n; ++i) {
      const size_t first = ids_.size();
      size_t seen = 0;
      const auto on_token = [&](const char* p, size_t len, bool ascii_alpha, bool) {
        if (head_ > 0 && seen == head_) return;
        const uint64_t term = cache.Resolve(p, len, ascii_alpha);
        if (term == 0) return;
        ++seen;
        const uint32_t id = terms_.Id(term, stats_);
        if (id >= count_.size()) count_.resize(2 * id + 64, 0);
        if (count_[id]++ == 0) ids_.push_back(id);
      };
      ForEachRawToken(list.passages[i].title.data(), list.passages[i].title.size(), scratch_, on_token);
      ForEachRawToken(list.passages[i].text.data(), list.passages[i].text.size(), scratch_, on_token);
      double norm = 0;
      for (size_t j = first; j < ids_.size(); ++j) {
        const uint32_t id = ids_[j];
        const uint32_t tf = count_[id];
        const double w = (tf < kLogTable ? log1p_tf_[tf] : 1.0 + std::log(static_cast<double>(tf))) * terms_.idf(id);
        count_[id] = 0;
        weights_.push_back(w);
        norm += w * w;
      }
      norm = std::sqrt(norm);
      if (norm == 0) norm = 1;
      for (size_t j = first; j < weights_.size(); ++j) weights_[j] /= norm;
      offsets_[i + 1] = ids_.size();
    }
    if (sum_.size() < terms_.size()) sum_.resize(terms_.size(), 0);
    member_.assign(n, 0);
    double sum_norm2 = 0;
    for (const int f : list.feedback) {
      member_[static_cast<size_t>(f)] = 1;
      for (size_t j = offsets_[f]; j < offsets_[f + 1]; ++j) sum_[ids_[j]] += weights_[j];
    }
    for (const int f : list.feedback)
      for (size_t j = offsets_[f]; j < offsets_[f + 1]; ++j) {
        // Each term once: count_ (zero between passages) marks the terms already summed.
        const uint32_t id = ids_[j];
        if (count_[id] != 0) continue;
        count_[id] = 1;
        sum_norm2 += sum_[id] * sum_[id];
      }
    const double m = static_cast<double>(list.feedback.size());
    out.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const double d = member_[i];
      double sv = 0;
      double vn = 0;
      for (size_t j = offsets_[i]; j < offsets_[i + 1]; ++j) {
        sv += sum_[ids_[j]] * weights_[j];
        vn += weights_[j] * weights_[j];
      }
      const double n2 = sum_norm2 - 2 * d * sv + d * vn;
      out[i] = (m - d == 0 || n2 <= 0) ? 0 : (sv - d * vn) / std::sqrt(n2);
    }
    for (const int f : list.feedback)
      for (size_t j = offsets_[f]; j < offsets_[f + 1]; ++j) {
        sum_[ids_[j]] = 0;
        count_[ids_[j]] = 0;
      }
  }

 private:
  static constexpr uint32_t kLogTable = 256;
  double log1p_tf_[kLogTable] = {};  // 1 + ln tf, the usual term frequencies
  const CorpusStats& stats_;
  const size_t head_;
  std::string scratch_;
  ListTerms terms_;
  std::vector<uint32_t> count_;
  std::vector<double> sum_;
  std::vector<uint32_t> ids_;
  std::vector<double> weights_;
  std::vector<size_t> offsets_;
  std::vector<uint8_t> member_;
};

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: feedback_pass DUMP [rounds] [head]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  const size_t head = argc > 3 ? static_cast<size_t>(std::atoi(argv[3])) : 0;
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  CorpusStatsBuilder builder;
  std::vector<List> lists;
  std::string line;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = SplitTabs(line);
    if (f[0] == "D" && f.size() == 3) {
      builder.AddDocument(f[1].data(), f[1].size(), f[2].data(), f[2].size());
    } else if (f[0] == "Q" && f.size() == 3) {
      List l;
      l.query = f[1];
      size_t start = 0;
      while (start < f[2].size()) {
        size_t end = f[2].find(',', start);
        if (end == std::string::npos) end = f[2].size();
        l.feedback.push_back(std::atoi(f[2].substr(start, end - start).c_str()));
        start = end + 1;
      }
      lists.push_back(std::move(l));
    } else if (f[0] == "P" && f.size() == 4 && !lists.empty()) {
      lists.back().passages.push_back(Passage{f[1], f[2], std::strtod(f[3].c_str(), nullptr)});
    } else {
      std::fprintf(stderr, "malformed line: %.60s\n", line.c_str());
      return 2;
    }
  }
  const uint64_t docs = builder.doc_count();
  CorpusStats stats(docs, docs ? static_cast<double>(builder.total_body_len()) / docs : 0,
                    docs ? static_cast<double>(builder.total_title_len()) / docs : 0, builder.entries().size());
  for (const auto& e : builder.entries()) stats.Insert(HashTerm(e.term.data(), e.term.size()), e.df);

  size_t pairs = 0;
  for (const List& l : lists) pairs += l.passages.size();
  std::vector<QueryPlan> plans;
  plans.reserve(lists.size());
  for (const List& l : lists) plans.emplace_back(stats, l.query.data(), l.query.size());

  ExtractScratch scratch;
  FeedbackPass feedback(stats, head);
  std::vector<float> row(kNumFeatures);
  std::vector<double> cosines;
  std::vector<double> extract_us, scan_us, feedback_us;
  double checksum = 0;
  double max_diff = 0;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (size_t q = 0; q < lists.size(); ++q) {
      for (const Passage& p : lists[q].passages) {
        const PassageText text{p.title.data(), p.title.size(), p.text.data(), p.text.size()};
        ExtractFeatures(stats, plans[q], text, nullptr, row.data(), scratch);
        checksum += row[0];
      }
    }
    extract_us.push_back(Seconds(t0) * 1e6 / pairs);

    t0 = std::chrono::steady_clock::now();
    std::string tok;
    size_t tokens = 0;
    for (const List& l : lists) {
      for (const Passage& p : l.passages) {
        const auto count = [&](const char*, size_t, bool, bool) { ++tokens; };
        ForEachRawToken(p.title.data(), p.title.size(), tok, count);
        ForEachRawToken(p.text.data(), p.text.size(), tok, count);
      }
    }
    scan_us.push_back(Seconds(t0) * 1e6 / pairs);
    checksum += static_cast<double>(tokens);

    t0 = std::chrono::steady_clock::now();
    for (const List& l : lists) {
      feedback.Run(l, cosines);
      if (r == 0) {
        for (size_t i = 0; i < cosines.size(); ++i)
          max_diff = std::max(max_diff, std::fabs(cosines[i] - l.passages[i].js_cosine));
      }
      checksum += cosines.empty() ? 0 : cosines[0];
    }
    feedback_us.push_back(Seconds(t0) * 1e6 / pairs);
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("%zu lists, %zu pairs, %d rounds (checksum %.3f)\n", lists.size(), pairs, rounds, checksum);
  std::printf("extract (shipped ExtractFeatures): %.2f us/pair\n", median(extract_us));
  std::printf("scan (tokeniser alone):            %.2f us/pair\n", median(scan_us));
  std::printf("feedback centroid cosine:          %.2f us/pair\n", median(feedback_us));
  std::printf("max |cosine - research/loco/list-feedback.ts| = %.3g\n", max_diff);
  return max_diff < 1e-9 ? 0 : 1;
}
