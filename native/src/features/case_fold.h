#pragma once
// Locale-independent simple case folding of Unicode code points.
#include <cstdint>

namespace rg::features {

// Simple (1:1) lower-casing for Latin, Greek, Cyrillic, Armenian, Georgian and full-width
// ASCII; other code points are returned unchanged. Never depends on the process locale.
uint32_t FoldCase(uint32_t cp);

}  // namespace rg::features
