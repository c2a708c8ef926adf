// Simple case folding tables, by block.
#include "features/case_fold.h"

namespace rg::features {

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

}  // namespace rg::features
