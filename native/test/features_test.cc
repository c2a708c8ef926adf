// Native checks for the lexical feature extractor, meant to run under ASan+UBSan
// (scripts/native-sanitize.sh builds and runs it):
//  1. tokenizer differential: ForEachRawToken (window scanner + general tokenizer) must give exactly
//     the tokens of the general tokenizer alone, on random texts built to hit every path (plain
//     ASCII windows, special bytes at window edges, long words, invalid UTF-8, apostrophes,
//     texts of 0..2000 bytes and a few of 100+ KB); every text sits in a heap buffer of exactly
//     its size, so a read past its end is an ASan error;
//  2. extraction: ExtractFeatures on random (query, title, body) triples against statistics built
//     from random documents; every feature must be finite (the passthrough ones NaN).
// Usage: features_test [iterations]   (exit status 0 = all checks passed)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "features/corpus_stats.h"
#include "features/extractor.h"
#include "features/term_hash.h"
#include "features/tokenizer.h"

namespace {

using rg::features::CorpusStats;
using rg::features::CorpusStatsBuilder;
using rg::features::ExtractFeatures;
using rg::features::ExtractScratch;
using rg::features::ForEachRawToken;
using rg::features::HashTerm;
using rg::features::kNumFeatures;
using rg::features::kNumPassthrough;
using rg::features::PassageText;
using rg::features::QueryPlan;

uint64_t g_seed = 0x2545F4914F6CDD1Dull;
uint32_t Next() {
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 7;
  g_seed ^= g_seed << 17;
  return static_cast<uint32_t>(g_seed >> 16);
}
size_t Below(size_t n) { return n == 0 ? 0 : Next() % n; }

// Pieces chosen to exercise the tokenizer's paths: words of every length class (1..16, 17..63,
// 64+), capitals and digits, separators, apostrophes and possessives, Latin-1 / Greek / CJK /
// emoji / typographic apostrophe in UTF-8, invalid and truncated sequences, NUL bytes.
const char* const kPieces[] = {
    "the",
    "of",
    "Cells",
    "CELL",
    "p53",
    "running",
    "a",
    "I",
    "x",
    "generalization",
    "YOURSELVES",
    "yourselves",
    "b2b",
    "2024",
    "mRNA",
    "zzzzzzzzzzzzzzz",
    "QQQQQQQQQQQQQQQQ",
    "kkkkkkkkkkkkkkkkk",
    "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKL",
    "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv",
    " ",
    " ",
    " ",
    ", ",
    ". ",
    "-",
    "(",
    ")",
    "\n",
    "\t",
    "/",
    "\"",
    "'",
    "'s",
    "s'",
    "n't",
    "John's",
    "\xC3\xA9",
    "\xC3\x89",
    "\xC3\x9F",
    "\xC4\xB0",
    "\xCE\xB1\xCE\xB2",
    "\xE4\xB8\xAD\xE6\x96\x87",
    "\xF0\x9F\x98\x80",
    "\xE2\x80\x99",
    "\xE2\x80\x94",
    "\xC2\xA0",
    "\xEF\xAC\x81",
    "\xEF\xBC\xA1",
    "\xFF",
    "\x80",
    "\xC3",
    "\xE2\x80",
    "\xED\xA0\x80",  // (NUL bytes: added by RandomText)
};

std::string RandomText(size_t target) {
  std::string s;
  const size_t pieces = sizeof(kPieces) / sizeof(kPieces[0]);
  while (s.size() < target) {
    // Mostly ASCII words and spaces, like real passages; now and then anything else.
    const uint32_t r = Next() % 100;
    if (r < 55) {
      s += kPieces[Below(20)];
      s += ' ';
    } else if (r < 60) {
      s.push_back('\0');
    } else {
      s += kPieces[Below(pieces)];
    }
  }
  s.resize(target);
  return s;
}

struct Token {
  std::string bytes;
  bool ascii_alpha;
  bool operator==(const Token& o) const { return bytes == o.bytes && ascii_alpha == o.ascii_alpha; }
};

// The text in a heap buffer of exactly its size (a zero-size text gets a 1-byte allocation that is
// never read), so ASan reports any read past the end.
std::vector<Token> Tokens(const std::string& text, bool general_only) {
  std::unique_ptr<char[]> buf(new char[text.size() > 0 ? text.size() : 1]);
  std::memcpy(buf.get(), text.data(), text.size());
  std::vector<Token> out;
  std::string scratch;
  auto collect = [&](const char* p, size_t n, bool ascii_alpha, bool readable16) {
    if (readable16) {
      // The promise made to the callee: 16 bytes from p are readable.
      volatile char last = p[15];
      (void)last;
    }
    out.push_back(Token{std::string(p, n), ascii_alpha});
  };
  if (general_only) {
    rg::features::detail::RunGeneralTokenizer(buf.get(), 0, text.size(), scratch, collect, SIZE_MAX);
  } else {
    ForEachRawToken(buf.get(), text.size(), scratch, collect);
  }
  return out;
}

int CheckTokenizer(int iterations) {
  int failures = 0;
  for (int it = 0; it < iterations; ++it) {
    const size_t len = it % 97 == 0 ? 100000 + Below(50000) : Below(2000);
    const std::string text = RandomText(len);
    const std::vector<Token> fast = Tokens(text, false);
    const std::vector<Token> general = Tokens(text, true);
    if (!(fast == general)) {
      if (++failures <= 3) {
        std::fprintf(stderr, "tokenizer mismatch on a %zu-byte text: %zu vs %zu tokens\n", text.size(), fast.size(),
                     general.size());
      }
    }
  }
#if defined(__SSE2__)
  const char* const compared = "window scanner vs general tokenizer";
#else
  const char* const compared = "general tokenizer alone (no window scanner without SSE2)";
#endif
  std::printf("tokenizer: %d random texts, %s: %s\n", iterations, compared, failures == 0 ? "identical" : "MISMATCH");
  return failures;
}

int CheckExtraction(int iterations) {
  CorpusStatsBuilder builder;
  for (int d = 0; d < 300; ++d) {
    const std::string title = RandomText(Below(80));
    const std::string body = RandomText(Below(1500));
    builder.AddDocument(title.data(), title.size(), body.data(), body.size());
  }
  const double docs = static_cast<double>(builder.doc_count());
  CorpusStats stats(builder.doc_count(), static_cast<double>(builder.total_body_len()) / docs,
                    static_cast<double>(builder.total_title_len()) / docs, builder.entries().size());
  for (const auto& e : builder.entries()) stats.Insert(HashTerm(e.term.data(), e.term.size()), e.df);

  int failures = 0;
  ExtractScratch scratch;
  for (int it = 0; it < iterations; ++it) {
    const std::string query = RandomText(Below(it % 50 == 0 ? 3000 : 120));
    const std::string title = RandomText(Below(100));
    const std::string body = RandomText(it % 200 == 0 ? 200000 : Below(2500));
    std::unique_ptr<char[]> q(new char[query.size() + 1]);
    std::unique_ptr<char[]> t(new char[title.size() + 1]);
    std::unique_ptr<char[]> b(new char[body.size() + 1]);
    std::memcpy(q.get(), query.data(), query.size());
    std::memcpy(t.get(), title.data(), title.size());
    std::memcpy(b.get(), body.data(), body.size());
    QueryPlan plan(stats, q.get(), query.size());
    float out[kNumFeatures];
    ExtractFeatures(stats, plan, PassageText{t.get(), title.size(), b.get(), body.size()}, nullptr, out, scratch);
    for (int f = 0; f < kNumFeatures; ++f) {
      const bool passthrough = f >= kNumFeatures - kNumPassthrough;
      if (passthrough ? !std::isnan(out[f]) : !std::isfinite(out[f])) {
        if (++failures <= 3) std::fprintf(stderr, "feature %d = %g on iteration %d\n", f, out[f], it);
      }
    }
  }
  std::printf("extraction: %d random pairs: %s\n", iterations, failures == 0 ? "all features finite" : "FAILED");
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 3000;
  const int failures = CheckTokenizer(iterations) + CheckExtraction(iterations);
  return failures == 0 ? 0 : 1;
}
