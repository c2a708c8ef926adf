// Unicode classification/folding tables, the stop list and the Porter stemmer.
#include "features/text.h"

#include <array>
#include <cstring>
#include <iterator>
#include <memory>

namespace rg::features {

CharClass ClassifyCodePoint(uint32_t cp) {
  if (cp < 0x80) {
    return ((cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z')) ? kWord : kSeparator;
  }
  if (cp < 0x100) {
    if (cp == 0xAA || cp == 0xB5 || cp == 0xBA) return kWord;
    if (cp >= 0xC0 && cp != 0xD7 && cp != 0xF7) return kWord;
    return kSeparator;
  }
  if (cp < 0x2B0) return kWord;                      // Latin Extended-A/B, IPA
  if (cp < 0x2C2) return kWord;                      // spacing modifier letters
  if (cp < 0x300) return kSeparator;                 // modifier symbols
  if (cp < 0x370) return kWord;                      // combining diacritical marks
  if (cp < 0x400) {                                  // Greek and Coptic
    if (cp == 0x375 || cp == 0x37E || cp == 0x384 || cp == 0x385 || cp == 0x387 || cp == 0x3F6) return kSeparator;
    return kWord;
  }
  if (cp < 0x530) return cp == 0x482 ? kSeparator : kWord;  // Cyrillic
  if (cp < 0x590) return (cp >= 0x55A && cp <= 0x55F) || cp == 0x589 || cp == 0x58A ? kSeparator : kWord;  // Armenian
  if (cp < 0x600) return (cp == 0x5BE || cp == 0x5C0 || cp == 0x5C3 || cp == 0x5C6 || cp == 0x5F3 || cp == 0x5F4) ? kSeparator : kWord;  // Hebrew
  if (cp < 0x700) {                                  // Arabic
    if ((cp >= 0x610 && cp <= 0x61A) || (cp >= 0x620 && cp <= 0x669) || (cp >= 0x66E && cp <= 0x6D3) ||
        (cp >= 0x6D5 && cp <= 0x6DC) || (cp >= 0x6DF && cp <= 0x6E8) || (cp >= 0x6EA && cp <= 0x6FC) || cp == 0x6FF) {
      return kWord;
    }
    return kSeparator;
  }
  if (cp < 0x900) return kWord;                      // Syriac, Thaana, NKo, ...
  if (cp < 0xE00) return (cp == 0x964 || cp == 0x965 || cp == 0x970) ? kSeparator : kWord;  // Indic scripts
  if (cp < 0xE80) return (cp == 0xE3F || cp == 0xE4F || cp == 0xE5A || cp == 0xE5B) ? kSeparator : kWord;  // Thai
  if (cp < 0x1000) return kWord;                     // Lao, Tibetan
  if (cp < 0x1100) return kWord;                     // Myanmar, Georgian
  if (cp < 0x1200) return kWord;                     // Hangul Jamo
  if (cp < 0x1400) return kWord;                     // Ethiopic, Cherokee
  if (cp < 0x1DC0) return (cp >= 0x1680 && cp <= 0x169F && cp != 0x1680) ? kWord : (cp == 0x1680 ? kSeparator : kWord);
  if (cp < 0x1E00) return kWord;                     // combining marks supplement
  if (cp < 0x1F00) return kWord;                     // Latin Extended Additional
  if (cp < 0x2000) {                                 // Greek Extended
    if (cp == 0x1FBD || (cp >= 0x1FBF && cp <= 0x1FC1) || (cp >= 0x1FCD && cp <= 0x1FCF) ||
        (cp >= 0x1FDD && cp <= 0x1FDF) || (cp >= 0x1FED && cp <= 0x1FEF) || cp >= 0x1FFD) {
      return kSeparator;
    }
    return kWord;
  }
  if (cp < 0x2C00) return kSeparator;                // punctuation, symbols, arrows, math, dingbats
  if (cp < 0x2E00) return kWord;                     // Glagolitic, Latin Ext-C, Coptic, Cyrillic Ext-A
  if (cp < 0x2E80) return kSeparator;                // supplemental punctuation
  if (cp < 0x2FE0) return kIdeograph;                // CJK radicals
  if (cp < 0x3040) return (cp >= 0x3005 && cp <= 0x3007) ? kIdeograph : kSeparator;  // CJK symbols/punctuation
  if (cp < 0x3100) return (cp == 0x30A0 || cp == 0x30FB) ? kSeparator : kIdeograph;  // Hiragana, Katakana
  if (cp < 0x3130) return kIdeograph;                // Bopomofo
  if (cp < 0x3190) return kWord;                     // Hangul compatibility Jamo
  if (cp < 0x31F0) return kIdeograph;                // Kanbun, Bopomofo ext, CJK strokes
  if (cp < 0x3200) return kIdeograph;                // Katakana phonetic extensions
  if (cp < 0x3400) return kSeparator;                // enclosed CJK, compatibility
  if (cp < 0x4DC0) return kIdeograph;                // CJK Ext A
  if (cp < 0x4E00) return kSeparator;                // Yijing hexagrams
  if (cp < 0xA000) return kIdeograph;                // CJK Unified Ideographs
  if (cp < 0xA4D0) return kIdeograph;                // Yi
  if (cp < 0xAC00) return kWord;                     // Lisu ... Latin Ext-E
  if (cp < 0xD800) return kWord;                     // Hangul syllables and Jamo Ext-B
  if (cp < 0xF900) return kSeparator;                // surrogates (never decoded), private use
  if (cp < 0xFB00) return kIdeograph;                // CJK compatibility ideographs
  if (cp < 0xFE00) return (cp == 0xFD3E || cp == 0xFD3F || cp == 0xFDFC || cp == 0xFDFD) ? kSeparator : kWord;
  if (cp < 0xFE20) return kSeparator;                // variation selectors, vertical forms
  if (cp < 0xFE30) return kWord;                     // combining half marks
  if (cp < 0xFE70) return kSeparator;                // CJK compatibility forms, small forms
  if (cp < 0xFF00) return cp == 0xFEFF ? kSeparator : kWord;  // Arabic presentation forms-B
  if (cp < 0xFF10) return kSeparator;
  if (cp < 0xFF1A) return kWord;                     // full-width digits
  if (cp >= 0xFF21 && cp <= 0xFF3A) return kWord;
  if (cp >= 0xFF41 && cp <= 0xFF5A) return kWord;
  if (cp >= 0xFF66 && cp <= 0xFF9F) return kIdeograph;  // half-width Katakana
  if (cp >= 0xFFA0 && cp <= 0xFFDC) return kWord;       // half-width Hangul
  if (cp < 0x10000) return kSeparator;
  if (cp < 0x1D000) return kWord;                    // historic scripts
  if (cp < 0x1D400) return kSeparator;               // musical symbols
  if (cp < 0x1D800) return kWord;                    // mathematical alphanumerics
  if (cp < 0x1F000) return kWord;
  if (cp < 0x20000) return kSeparator;               // emoji, pictographs, symbols
  if (cp < 0x40000) return kIdeograph;               // CJK Ext B and later
  return kSeparator;                                 // tags, variation selectors supplement, private use
}

uint32_t FoldCase(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  if (cp < 0x100) return (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) ? cp + 32 : cp;
  if (cp < 0x180) {  // Latin Extended-A
    if (cp == 0x130) return 'i';
    if (cp == 0x131 || cp == 0x138 || cp == 0x149) return cp;
    if (cp == 0x178) return 0xFF;
    if (cp == 0x17F) return 's';
    if (cp < 0x138 || (cp >= 0x14A && cp <= 0x177)) return (cp % 2 == 0) ? cp + 1 : cp;
    return (cp % 2 == 1) ? cp + 1 : cp;  // 0x139-0x148, 0x179-0x17E
  }
  if (cp < 0x250) {  // Latin Extended-B (the regular pairs)
    if (cp >= 0x1CD && cp <= 0x1DC) return (cp % 2 == 1) ? cp + 1 : cp;
    if ((cp >= 0x1DE && cp <= 0x1EF) || (cp >= 0x1F8 && cp <= 0x21F) || (cp >= 0x222 && cp <= 0x233) ||
        (cp >= 0x246 && cp <= 0x24F)) {
      return (cp % 2 == 0) ? cp + 1 : cp;
    }
    if (cp == 0x1C4 || cp == 0x1C5) return 0x1C6;
    if (cp == 0x1C7 || cp == 0x1C8) return 0x1C9;
    if (cp == 0x1CA || cp == 0x1CB) return 0x1CC;
    if (cp == 0x1F1 || cp == 0x1F2) return 0x1F3;
    return cp;
  }
  if (cp < 0x370) return cp;
  if (cp < 0x400) {  // Greek
    if (cp == 0x386) return 0x3AC;
    if (cp >= 0x388 && cp <= 0x38A) return cp + 37;
    if (cp == 0x38C) return 0x3CC;
    if (cp == 0x38E || cp == 0x38F) return cp + 63;
    if ((cp >= 0x391 && cp <= 0x3A1) || (cp >= 0x3A3 && cp <= 0x3AB)) return cp + 32;
    if (cp == 0x3C2) return 0x3C3;  // final sigma folds to sigma
    if (cp >= 0x3D8 && cp <= 0x3EF) return (cp % 2 == 0) ? cp + 1 : cp;
    return cp;
  }
  if (cp < 0x530) {  // Cyrillic
    if (cp < 0x410) return cp + 80;
    if (cp < 0x430) return cp + 32;
    if (cp < 0x460) return cp;
    if (cp <= 0x481 || (cp >= 0x48A && cp <= 0x4BF) || (cp >= 0x4D0 && cp <= 0x52F)) return (cp % 2 == 0) ? cp + 1 : cp;
    if (cp == 0x4C0) return 0x4CF;
    if (cp >= 0x4C1 && cp <= 0x4CE) return (cp % 2 == 1) ? cp + 1 : cp;
    return cp;
  }
  if (cp >= 0x531 && cp <= 0x556) return cp + 48;      // Armenian
  if (cp >= 0x10A0 && cp <= 0x10C5) return cp + 7264;  // Georgian Asomtavruli -> Nuskhuri
  if (cp >= 0x1E00 && cp <= 0x1EFF) {                  // Latin Extended Additional
    if (cp == 0x1E9E) return 0xDF;
    if (cp <= 0x1E95 || cp >= 0x1EA0) return (cp % 2 == 0) ? cp + 1 : cp;
    return cp;
  }
  if (cp >= 0xFF10 && cp <= 0xFF19) return cp - 0xFF10 + '0';  // full-width digits -> ASCII
  if (cp >= 0xFF21 && cp <= 0xFF3A) return cp - 0xFF21 + 'a';  // full-width letters -> ASCII
  if (cp >= 0xFF41 && cp <= 0xFF5A) return cp - 0xFF41 + 'a';
  return cp;
}

namespace {

// The Snowball English stop list (snowball.tartarus.org/algorithms/english/stop.txt), 174 words.
constexpr const char* kStopWords[] = {
    "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours", "yourself",
    "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself",
    "they", "them", "their", "theirs", "themselves", "what", "which", "who", "whom", "this", "that",
    "these", "those", "am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had",
    "having", "do", "does", "did", "doing", "would", "should", "could", "ought", "i'm", "you're", "he's",
    "she's", "it's", "we're", "they're", "i've", "you've", "we've", "they've", "i'd", "you'd", "he'd",
    "she'd", "we'd", "they'd", "i'll", "you'll", "he'll", "she'll", "we'll", "they'll", "isn't",
    "aren't", "wasn't", "weren't", "hasn't", "haven't", "hadn't", "doesn't", "don't", "didn't", "won't",
    "wouldn't", "shan't", "shouldn't", "can't", "cannot", "couldn't", "mustn't", "let's", "that's",
    "who's", "what's", "here's", "there's", "when's", "where's", "why's", "how's", "a", "an", "the",
    "and", "but", "if", "or", "because", "as", "until", "while", "of", "at", "by", "for", "with",
    "about", "against", "between", "into", "through", "during", "before", "after", "above", "below",
    "to", "from", "up", "down", "in", "out", "on", "off", "over", "under", "again", "further", "then",
    "once", "here", "there", "when", "where", "why", "how", "all", "any", "both", "each", "few", "more",
    "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so", "than", "too",
    "very",
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

// Porter stemmer: a direct port of Martin Porter's reference ANSI C version (tartarus.org),
// including its two documented departures (-bli -> -ble, -logi -> -log), with state in a struct
// instead of statics so it is thread-safe.
class Porter {
 public:
  explicit Porter(char* b) : b_(b) {}

  int Stem(int last) {
    k_ = last;
    k0_ = 0;
    if (k_ <= k0_ + 1) return k_;
    Step1ab();
    if (k_ > k0_) {
      Step1c();
      Step2();
      Step3();
      Step4();
      Step5();
    }
    return k_;
  }

 private:
  bool Cons(int i) const {
    switch (b_[i]) {
      case 'a': case 'e': case 'i': case 'o': case 'u':
        return false;
      case 'y':
        return (i == k0_) ? true : !Cons(i - 1);
      default:
        return true;
    }
  }
  int M() const {
    int n = 0;
    int i = k0_;
    while (true) {
      if (i > j_) return n;
      if (!Cons(i)) break;
      i++;
    }
    i++;
    while (true) {
      while (true) {
        if (i > j_) return n;
        if (Cons(i)) break;
        i++;
      }
      i++;
      n++;
      while (true) {
        if (i > j_) return n;
        if (!Cons(i)) break;
        i++;
      }
      i++;
    }
  }
  bool VowelInStem() const {
    for (int i = k0_; i <= j_; i++) {
      if (!Cons(i)) return true;
    }
    return false;
  }
  bool DoubleC(int j) const {
    if (j < k0_ + 1) return false;
    if (b_[j] != b_[j - 1]) return false;
    return Cons(j);
  }
  bool Cvc(int i) const {
    if (i < k0_ + 2 || !Cons(i) || Cons(i - 1) || !Cons(i - 2)) return false;
    const char ch = b_[i];
    return !(ch == 'w' || ch == 'x' || ch == 'y');
  }
  bool Ends(const char* s) {
    const int length = static_cast<int>(std::strlen(s));
    if (length > k_ - k0_ + 1) return false;
    if (s[length - 1] != b_[k_]) return false;
    if (std::memcmp(b_ + k_ - length + 1, s, static_cast<size_t>(length)) != 0) return false;
    j_ = k_ - length;
    return true;
  }
  void SetTo(const char* s) {
    const int length = static_cast<int>(std::strlen(s));
    std::memmove(b_ + j_ + 1, s, static_cast<size_t>(length));
    k_ = j_ + length;
  }
  void R(const char* s) {
    if (M() > 0) SetTo(s);
  }
  void Step1ab() {
    if (b_[k_] == 's') {
      if (Ends("sses")) {
        k_ -= 2;
      } else if (Ends("ies")) {
        SetTo("i");
      } else if (b_[k_ - 1] != 's') {
        k_--;
      }
    }
    if (Ends("eed")) {
      if (M() > 0) k_--;
    } else if ((Ends("ed") || Ends("ing")) && VowelInStem()) {
      k_ = j_;
      if (Ends("at")) {
        SetTo("ate");
      } else if (Ends("bl")) {
        SetTo("ble");
      } else if (Ends("iz")) {
        SetTo("ize");
      } else if (DoubleC(k_)) {
        k_--;
        const char ch = b_[k_];
        if (ch == 'l' || ch == 's' || ch == 'z') k_++;
      } else if (M() == 1 && Cvc(k_)) {
        SetTo("e");
      }
    }
  }
  void Step1c() {
    if (Ends("y") && VowelInStem()) b_[k_] = 'i';
  }
  void Step2() {
    switch (b_[k_ - 1]) {
      case 'a':
        if (Ends("ational")) { R("ate"); break; }
        if (Ends("tional")) { R("tion"); break; }
        break;
      case 'c':
        if (Ends("enci")) { R("ence"); break; }
        if (Ends("anci")) { R("ance"); break; }
        break;
      case 'e':
        if (Ends("izer")) { R("ize"); break; }
        break;
      case 'l':
        if (Ends("bli")) { R("ble"); break; }
        if (Ends("alli")) { R("al"); break; }
        if (Ends("entli")) { R("ent"); break; }
        if (Ends("eli")) { R("e"); break; }
        if (Ends("ousli")) { R("ous"); break; }
        break;
      case 'o':
        if (Ends("ization")) { R("ize"); break; }
        if (Ends("ation")) { R("ate"); break; }
        if (Ends("ator")) { R("ate"); break; }
        break;
      case 's':
        if (Ends("alism")) { R("al"); break; }
        if (Ends("iveness")) { R("ive"); break; }
        if (Ends("fulness")) { R("ful"); break; }
        if (Ends("ousness")) { R("ous"); break; }
        break;
      case 't':
        if (Ends("aliti")) { R("al"); break; }
        if (Ends("iviti")) { R("ive"); break; }
        if (Ends("biliti")) { R("ble"); break; }
        break;
      case 'g':
        if (Ends("logi")) { R("log"); break; }
        break;
      default:
        break;
    }
  }
  void Step3() {
    switch (b_[k_]) {
      case 'e':
        if (Ends("icate")) { R("ic"); break; }
        if (Ends("ative")) { R(""); break; }
        if (Ends("alize")) { R("al"); break; }
        break;
      case 'i':
        if (Ends("iciti")) { R("ic"); break; }
        break;
      case 'l':
        if (Ends("ical")) { R("ic"); break; }
        if (Ends("ful")) { R(""); break; }
        break;
      case 's':
        if (Ends("ness")) { R(""); break; }
        break;
      default:
        break;
    }
  }
  void Step4() {
    if (k_ <= k0_) return;
    switch (b_[k_ - 1]) {
      case 'a':
        if (Ends("al")) break;
        return;
      case 'c':
        if (Ends("ance")) break;
        if (Ends("ence")) break;
        return;
      case 'e':
        if (Ends("er")) break;
        return;
      case 'i':
        if (Ends("ic")) break;
        return;
      case 'l':
        if (Ends("able")) break;
        if (Ends("ible")) break;
        return;
      case 'n':
        if (Ends("ant")) break;
        if (Ends("ement")) break;
        if (Ends("ment")) break;
        if (Ends("ent")) break;
        return;
      case 'o':
        if (Ends("ion") && j_ >= k0_ && (b_[j_] == 's' || b_[j_] == 't')) break;
        if (Ends("ou")) break;
        return;
      case 's':
        if (Ends("ism")) break;
        return;
      case 't':
        if (Ends("ate")) break;
        if (Ends("iti")) break;
        return;
      case 'u':
        if (Ends("ous")) break;
        return;
      case 'v':
        if (Ends("ive")) break;
        return;
      case 'z':
        if (Ends("ize")) break;
        return;
      default:
        return;
    }
    if (M() > 1) k_ = j_;
  }
  void Step5() {
    j_ = k_;
    if (b_[k_] == 'e') {
      const int a = M();
      if (a > 1 || (a == 1 && !Cvc(k_ - 1))) k_--;
    }
    if (b_[k_] == 'l' && DoubleC(k_) && M() > 1) k_--;
  }

  char* b_;
  int k_ = 0;
  int k0_ = 0;
  int j_ = 0;
};

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

size_t PorterStem(char* buf, size_t n) {
  // Words longer than kMaxStemmedWord are left alone: no English word is that long, and it bounds
  // the stemmer's work (its consonant test recurses over runs of 'y').
  if (n <= 2 || n > kMaxStemmedWord) return n;
  for (size_t i = 0; i < n; ++i) {
    if (buf[i] < 'a' || buf[i] > 'z') return n;  // only plain lower-case ASCII words are stemmed
  }
  Porter p(buf);
  return static_cast<size_t>(p.Stem(static_cast<int>(n) - 1) + 1);
}

TermCache& TermCache::ForThisThread() {
  // Heap-allocated (256 KiB) so thread stacks stay small; lives as long as the thread.
  thread_local std::unique_ptr<TermCache> cache = std::make_unique<TermCache>();
  return *cache;
}

}  // namespace rg::features
