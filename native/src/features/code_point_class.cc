// Word-splitting classes of Unicode code points, by block.
#include "features/code_point_class.h"

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
  if (cp < 0x2B0) return kWord;       // Latin Extended-A/B, IPA
  if (cp < 0x2C2) return kWord;       // spacing modifier letters
  if (cp < 0x300) return kSeparator;  // modifier symbols
  if (cp < 0x370) return kWord;       // combining diacritical marks
  if (cp < 0x400) {                   // Greek and Coptic
    if (cp == 0x375 || cp == 0x37E || cp == 0x384 || cp == 0x385 || cp == 0x387 || cp == 0x3F6) return kSeparator;
    return kWord;
  }
  if (cp < 0x530) return cp == 0x482 ? kSeparator : kWord;                                                 // Cyrillic
  if (cp < 0x590) return (cp >= 0x55A && cp <= 0x55F) || cp == 0x589 || cp == 0x58A ? kSeparator : kWord;  // Armenian
  if (cp < 0x600)
    return (cp == 0x5BE || cp == 0x5C0 || cp == 0x5C3 || cp == 0x5C6 || cp == 0x5F3 || cp == 0x5F4) ? kSeparator
                                                                                                    : kWord;  // Hebrew
  if (cp < 0x700) {                                                                                           // Arabic
    if ((cp >= 0x610 && cp <= 0x61A) || (cp >= 0x620 && cp <= 0x669) || (cp >= 0x66E && cp <= 0x6D3) ||
        (cp >= 0x6D5 && cp <= 0x6DC) || (cp >= 0x6DF && cp <= 0x6E8) || (cp >= 0x6EA && cp <= 0x6FC) || cp == 0x6FF) {
      return kWord;
    }
    return kSeparator;
  }
  if (cp < 0x900) return kWord;                                                             // Syriac, Thaana, NKo, ...
  if (cp < 0xE00) return (cp == 0x964 || cp == 0x965 || cp == 0x970) ? kSeparator : kWord;  // Indic scripts
  if (cp < 0xE80) return (cp == 0xE3F || cp == 0xE4F || cp == 0xE5A || cp == 0xE5B) ? kSeparator : kWord;  // Thai
  if (cp < 0x1000) return kWord;  // Lao, Tibetan
  if (cp < 0x1100) return kWord;  // Myanmar, Georgian
  if (cp < 0x1200) return kWord;  // Hangul Jamo
  if (cp < 0x1400) return kWord;  // Ethiopic, Cherokee
  if (cp < 0x1DC0) return (cp >= 0x1680 && cp <= 0x169F && cp != 0x1680) ? kWord : (cp == 0x1680 ? kSeparator : kWord);
  if (cp < 0x1E00) return kWord;  // combining marks supplement
  if (cp < 0x1F00) return kWord;  // Latin Extended Additional
  if (cp < 0x2000) {              // Greek Extended
    if (cp == 0x1FBD || (cp >= 0x1FBF && cp <= 0x1FC1) || (cp >= 0x1FCD && cp <= 0x1FCF) ||
        (cp >= 0x1FDD && cp <= 0x1FDF) || (cp >= 0x1FED && cp <= 0x1FEF) || cp >= 0x1FFD) {
      return kSeparator;
    }
    return kWord;
  }
  if (cp < 0x2C00) return kSeparator;  // punctuation, symbols, arrows, math, dingbats
  if (cp < 0x2E00) return kWord;       // Glagolitic, Latin Ext-C, Coptic, Cyrillic Ext-A
  if (cp < 0x2E80) return kSeparator;  // supplemental punctuation
  if (cp < 0x2FE0) return kIdeograph;  // CJK radicals
  if (cp < 0x3040) return (cp >= 0x3005 && cp <= 0x3007) ? kIdeograph : kSeparator;  // CJK symbols/punctuation
  if (cp < 0x3100) return (cp == 0x30A0 || cp == 0x30FB) ? kSeparator : kIdeograph;  // Hiragana, Katakana
  if (cp < 0x3130) return kIdeograph;                                                // Bopomofo
  if (cp < 0x3190) return kWord;                                                     // Hangul compatibility Jamo
  if (cp < 0x31F0) return kIdeograph;  // Kanbun, Bopomofo ext, CJK strokes
  if (cp < 0x3200) return kIdeograph;  // Katakana phonetic extensions
  if (cp < 0x3400) return kSeparator;  // enclosed CJK, compatibility
  if (cp < 0x4DC0) return kIdeograph;  // CJK Ext A
  if (cp < 0x4E00) return kSeparator;  // Yijing hexagrams
  if (cp < 0xA000) return kIdeograph;  // CJK Unified Ideographs
  if (cp < 0xA4D0) return kIdeograph;  // Yi
  if (cp < 0xAC00) return kWord;       // Lisu ... Latin Ext-E
  if (cp < 0xD800) return kWord;       // Hangul syllables and Jamo Ext-B
  if (cp < 0xF900) return kSeparator;  // surrogates (never decoded), private use
  if (cp < 0xFB00) return kIdeograph;  // CJK compatibility ideographs
  if (cp < 0xFE00) return (cp == 0xFD3E || cp == 0xFD3F || cp == 0xFDFC || cp == 0xFDFD) ? kSeparator : kWord;
  if (cp < 0xFE20) return kSeparator;                         // variation selectors, vertical forms
  if (cp < 0xFE30) return kWord;                              // combining half marks
  if (cp < 0xFE70) return kSeparator;                         // CJK compatibility forms, small forms
  if (cp < 0xFF00) return cp == 0xFEFF ? kSeparator : kWord;  // Arabic presentation forms-B
  if (cp < 0xFF10) return kSeparator;
  if (cp < 0xFF1A) return kWord;  // full-width digits
  if (cp >= 0xFF21 && cp <= 0xFF3A) return kWord;
  if (cp >= 0xFF41 && cp <= 0xFF5A) return kWord;
  if (cp >= 0xFF66 && cp <= 0xFF9F) return kIdeograph;  // half-width Katakana
  if (cp >= 0xFFA0 && cp <= 0xFFDC) return kWord;       // half-width Hangul
  if (cp < 0x10000) return kSeparator;
  if (cp < 0x1D000) return kWord;       // historic scripts
  if (cp < 0x1D400) return kSeparator;  // musical symbols
  if (cp < 0x1D800) return kWord;       // mathematical alphanumerics
  if (cp < 0x1F000) return kWord;
  if (cp < 0x20000) return kSeparator;  // emoji, pictographs, symbols
  if (cp < 0x40000) return kIdeograph;  // CJK Ext B and later
  return kSeparator;                    // tags, variation selectors supplement, private use
}

}  // namespace rg::features
