// XXH64 (xxHash, 64-bit variant), written from the xxHash specification
// (doc/xxhash_spec.md, "XXH64 Algorithm Description"). Portable C++17: unsigned arithmetic only
// (wrapping is defined), unaligned little-endian reads through memcpy, no intrinsics.
#pragma once
#include <cstddef>
#include <cstdint>

namespace rg::hash {

// XXH64 of `size` bytes at `data` (data may be null when size is 0).
uint64_t Xxh64(const unsigned char* data, size_t size, uint64_t seed) noexcept;

// XXH64 of UTF-16 code units read as little-endian bytes (2 per unit), on any host byte order:
// the same string gives the same hash on every machine sharing a cache.
uint64_t Xxh64Utf16Le(const char16_t* units, size_t count, uint64_t seed) noexcept;

// 16 lower-case hex digits of `value`, written to out[0..15] (no terminator).
void ToHex16(uint64_t value, char out[16]) noexcept;

}  // namespace rg::hash
