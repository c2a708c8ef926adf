// The stop list and the two lookup tables built from it at load.
#include "features/stop_words.h"

#include <cstring>
#include <iterator>

namespace rg::features {
namespace {

// The Snowball English stop list (snowball.tartarus.org/algorithms/english/stop.txt), 174 words.
constexpr const char* kStopWords[] = {
    "i",       "me",         "my",       "myself",     "we",      "our",    "ours",     "ourselves", "you",
    "your",    "yours",      "yourself", "yourselves", "he",      "him",    "his",      "himself",   "she",
    "her",     "hers",       "herself",  "it",         "its",     "itself", "they",     "them",      "their",
    "theirs",  "themselves", "what",     "which",      "who",     "whom",   "this",     "that",      "these",
    "those",   "am",         "is",       "are",        "was",     "were",   "be",       "been",      "being",
    "have",    "has",        "had",      "having",     "do",      "does",   "did",      "doing",     "would",
    "should",  "could",      "ought",    "i'm",        "you're",  "he's",   "she's",    "it's",      "we're",
    "they're", "i've",       "you've",   "we've",      "they've", "i'd",    "you'd",    "he'd",      "she'd",
    "we'd",    "they'd",     "i'll",     "you'll",     "he'll",   "she'll", "we'll",    "they'll",   "isn't",
    "aren't",  "wasn't",     "weren't",  "hasn't",     "haven't", "hadn't", "doesn't",  "don't",     "didn't",
    "won't",   "wouldn't",   "shan't",   "shouldn't",  "can't",   "cannot", "couldn't", "mustn't",   "let's",
    "that's",  "who's",      "what's",   "here's",     "there's", "when's", "where's",  "why's",     "how's",
    "a",       "an",         "the",      "and",        "but",     "if",     "or",       "because",   "as",
    "until",   "while",      "of",       "at",         "by",      "for",    "with",     "about",     "against",
    "between", "into",       "through",  "during",     "before",  "after",  "above",    "below",     "to",
    "from",    "up",         "down",     "in",         "out",     "on",     "off",      "over",      "under",
    "again",   "further",    "then",     "once",       "here",    "there",  "when",     "where",     "why",
    "how",     "all",        "any",      "both",       "each",    "few",    "more",     "most",      "other",
    "some",    "such",       "no",       "nor",        "not",     "only",   "own",      "same",      "so",
    "than",    "too",        "very",
};

StopTable BuildStopTable() {
  StopTable t;
  for (const char* w : kStopWords) {
    const size_t n = std::strlen(w);
    uint64_t lo, hi;
    StopTable::Pack(w, n, &lo, &hi);
    const uint64_t h = StopTable::Mix(lo, hi, n);
    const size_t bit = static_cast<size_t>(h >> 52);
    t.filter[bit >> 6] |= 1ull << (bit & 63);
    t.prefix_lengths[StopTable::PrefixKey(w, n)] |= static_cast<uint16_t>(1u << n);
    size_t i = static_cast<size_t>(h >> 54);
    while (t.slots[i].len != 0) i = (i + 1) & (StopTable::kSlots - 1);
    t.slots[i] = {lo, hi, static_cast<uint32_t>(n)};
  }
  return t;
}

}  // namespace

const StopTable kStopTable = BuildStopTable();

namespace {
PaddedStopTable BuildPaddedStopTable() {
  PaddedStopTable t;
  static_assert(std::size(kStopWords) < 256, "entry 0 is the empty word");
  // Deterministic search for a multiplier that puts every stop word in its own slot (174 words in
  // 4096 slots: a few dozen tries).
  for (uint64_t k = 1;; ++k) {
    const uint64_t seed = (0x9E3779B97F4A7C15ull * k) | 1u;
    uint8_t index[sizeof(t.index)] = {};
    bool ok = true;
    uint8_t next = 1;
    for (const char* w : kStopWords) {
      const size_t n = std::strlen(w);
      uint64_t lo, hi;
      StopTable::Pack(w, n, &lo, &hi);
      const size_t slot = PaddedStopTable::Slot(lo, seed);
      if (index[slot] != 0) {
        ok = false;
        break;
      }
      index[slot] = next;
      PaddedStopTable::Word& e = t.words[next];
      std::memcpy(e.bytes, w, n);  // n <= StopTable::kMaxLen < 16
      e.len = n;
      ++next;
    }
    if (ok) {
      t.seed = seed;
      std::memcpy(t.index, index, sizeof(index));
      return t;
    }
  }
}
}  // namespace

const PaddedStopTable kPaddedStopTable = BuildPaddedStopTable();

}  // namespace rg::features
