#pragma once
// Corpus statistics: document frequencies per term (body, title, either field), the document
// count and average field lengths, keyed by the 64-bit term hash (term_hash.h HashTerm).
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace rg::features {

struct TermDf {
  uint32_t body = 0;
  uint32_t title = 0;
  uint32_t any = 0;
};

// Immutable after construction, so extraction may read it from several threads at once.
class CorpusStats {
 public:
  CorpusStats(uint64_t doc_count, double avg_body_len, double avg_title_len, size_t expected_terms);

  void Insert(uint64_t term_hash, TermDf df);
  // Document frequencies of a term, zeros when unseen.
  TermDf Lookup(uint64_t term_hash) const {
    size_t i = term_hash & mask_;
    while (true) {
      const Slot& s = slots_[i];
      if (s.key == term_hash) return s.df;
      if (s.key == 0) return TermDf{};
      i = (i + 1) & mask_;
    }
  }

  uint64_t doc_count() const { return doc_count_; }
  double avg_body_len() const { return avg_body_len_; }
  double avg_title_len() const { return avg_title_len_; }
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t key = 0;
    TermDf df;
  };
  uint64_t doc_count_;
  double avg_body_len_;
  double avg_title_len_;
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

// Accumulates statistics document by document (the `stats` command and training).
class CorpusStatsBuilder {
 public:
  void AddDocument(const char* title, size_t title_len, const char* body, size_t body_len);

  struct Entry {
    std::string term;
    TermDf df;
    uint64_t last_doc_body = 0;  // 1-based document number that last counted this term
    uint64_t last_doc_title = 0;
    uint64_t last_doc_any = 0;
  };
  const std::vector<Entry>& entries() const { return entries_; }
  uint64_t doc_count() const { return doc_count_; }
  uint64_t total_body_len() const { return total_body_len_; }
  uint64_t total_title_len() const { return total_title_len_; }

 private:
  void Count(const char* term, size_t len, bool title);

  std::unordered_map<uint64_t, size_t> index_;
  std::vector<Entry> entries_;
  uint64_t doc_count_ = 0;
  uint64_t total_body_len_ = 0;
  uint64_t total_title_len_ = 0;
  std::string scratch_;
  std::string term_buf_;
};

}  // namespace rg::features
