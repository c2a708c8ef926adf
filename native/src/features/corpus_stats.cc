#include "features/corpus_stats.h"

#include "features/term_hash.h"
#include "features/terms.h"

namespace rg::features {

CorpusStats::CorpusStats(uint64_t doc_count, double avg_body_len, double avg_title_len, size_t expected_terms)
    : doc_count_(doc_count), avg_body_len_(avg_body_len), avg_title_len_(avg_title_len) {
  size_t cap = 16;
  while (cap < expected_terms * 2 + 1) cap <<= 1;  // load factor <= 0.5
  slots_.assign(cap, Slot{});
  mask_ = cap - 1;
}

void CorpusStats::Insert(uint64_t term_hash, TermDf df) {
  if ((size_ + 1) * 2 > slots_.size()) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (const Slot& s : old) {
      if (s.key != 0) Insert(s.key, s.df);
    }
  }
  size_t i = term_hash & mask_;
  while (slots_[i].key != 0 && slots_[i].key != term_hash) i = (i + 1) & mask_;
  if (slots_[i].key == 0) {
    ++size_;
    slots_[i].key = term_hash;
    slots_[i].df = df;
  } else {
    // The same term twice (or two stored terms with one hash): keep the larger counts.
    TermDf& d = slots_[i].df;
    if (df.body > d.body) d.body = df.body;
    if (df.title > d.title) d.title = df.title;
    if (df.any > d.any) d.any = df.any;
  }
}

void CorpusStatsBuilder::Count(const char* term, size_t len, bool title) {
  const uint64_t h = HashTerm(term, len);
  auto it = index_.find(h);
  size_t idx;
  if (it == index_.end()) {
    idx = entries_.size();
    index_.emplace(h, idx);
    Entry e;
    e.term.assign(term, len);
    entries_.push_back(std::move(e));
  } else {
    idx = it->second;
  }
  Entry& e = entries_[idx];
  const uint64_t doc = doc_count_;  // already incremented for the current document
  if (title) {
    if (e.last_doc_title != doc) {
      e.last_doc_title = doc;
      ++e.df.title;
    }
  } else if (e.last_doc_body != doc) {
    e.last_doc_body = doc;
    ++e.df.body;
  }
  if (e.last_doc_any != doc) {
    e.last_doc_any = doc;
    ++e.df.any;
  }
}

void CorpusStatsBuilder::AddDocument(const char* title, size_t title_len, const char* body, size_t body_len) {
  ++doc_count_;
  ForEachTerm(title, title_len, scratch_, term_buf_, [&](const char* t, size_t n) {
    ++total_title_len_;
    Count(t, n, true);
  });
  ForEachTerm(body, body_len, scratch_, term_buf_, [&](const char* t, size_t n) {
    ++total_body_len_;
    Count(t, n, false);
  });
}

}  // namespace rg::features
