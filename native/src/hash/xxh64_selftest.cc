// Standalone check of xxh64.cc, for sanitizer builds (not part of the addon). Build and run:
//   g++ -std=c++17 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -Inative/src
//       native/src/hash/xxh64_selftest.cc native/src/hash/xxh64.cc -o build/xxh64_selftest
//   build/xxh64_selftest
// Checks the published XXH64 vectors, every length 0..300 (all tail paths) for UTF-16 = bytes
// equivalence, unaligned inputs, and a 10 MB input (prints its time).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "hash/xxh64.h"

using rg::hash::Xxh64;
using rg::hash::Xxh64Utf16Le;

static int failures = 0;
static void Expect(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what);
    ++failures;
  }
}

int main() {
  // Published vectors (xxHash sanity checks): empty input, seeds 0 and PRIME32_1 (2654435761).
  Expect(Xxh64(nullptr, 0, 0) == 0xEF46DB3751D8E999ULL, "XXH64('', 0)");
  Expect(Xxh64(nullptr, 0, 2654435761ULL) == 0xAC75FDA2929B17EFULL, "XXH64('', PRIME32_1)");
  const unsigned char abc[] = {'a', 'b', 'c'};
  Expect(Xxh64(abc, 3, 0) == 0x44BC2CF5AD770999ULL, "XXH64('abc', 0)");

  std::vector<unsigned char> bytes(700);
  uint32_t state = 12345;
  for (auto& b : bytes) {
    state = state * 1103515245U + 12345U;
    b = static_cast<unsigned char>(state >> 24);
  }
  for (size_t units = 0; units <= 300; ++units) {
    std::vector<char16_t> text(units + 1);
    std::vector<unsigned char> le(units * 2 + 1);
    for (size_t i = 0; i < units; ++i) {
      const uint16_t u = static_cast<uint16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8));
      text[i] = static_cast<char16_t>(u);
      le[2 * i] = static_cast<unsigned char>(u & 0xFF);
      le[2 * i + 1] = static_cast<unsigned char>(u >> 8);
    }
    Expect(Xxh64Utf16Le(text.data(), units, 7) == Xxh64(le.data(), units * 2, 7), "utf16 == bytes");

    // Odd byte lengths and unaligned starts through the byte path.
    Expect(Xxh64(bytes.data() + 1, units, 99) ==
               Xxh64(std::vector<unsigned char>(bytes.begin() + 1, bytes.begin() + 1 + static_cast<long>(units)).data(),
                     units, 99),
           "unaligned == aligned");
  }
  std::vector<char16_t> big(5 * 1024 * 1024, u'x');
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t h = Xxh64Utf16Le(big.data(), big.size(), 0);
  const auto t1 = std::chrono::steady_clock::now();

  std::printf("10 MB (5 Mi units): %.2f ms (hash %016llx)\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count(), static_cast<unsigned long long>(h));
  std::printf(failures == 0 ? "ok\n" : "%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
