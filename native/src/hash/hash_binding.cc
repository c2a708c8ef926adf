// JS surface of the content hash used by score-cache keys (src/native/hash.ts, src/cache/hash.ts).
//
// A string is hashed in a canonical form of its code units (StringHasher), so the hash is a
// function of the exact JS string: lone surrogates included (UTF-8 encoders replace those with
// U+FFFD, which would make distinct strings collide). Every argument
// is validated here; a bad call throws a TypeError, never crashes. Cost is linear and small: a
// 10 MB string hashes in a few ms (xxh64_selftest prints it), so calls run inline.
#include "hash/hash_binding.h"

#include <v8.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "hash/xxh64.h"

namespace rg::hash {
namespace {

// Domain seeds (must match src/cache/hash.ts, which holds the pure-JS fallback of this code).
constexpr uint64_t kSeedTextOnly = 0x7e47000000000001ULL;
constexpr uint64_t kSeedTitle = 0x7e47000000000002ULL;
constexpr uint64_t kSeedTitleText = 0x7e47000000000003ULL;
constexpr uint64_t kLatin1Domain = 0x4c6174696e31ULL;  // "Latin1"
constexpr uint32_t kSchemaVersion = 1;
constexpr size_t kStackUnits = 2048;

// Node-API hands values over as napi_value, which in Node is the V8 handle itself (Node's own
// v8impl::V8LocalValueFromJsValue converts it with this memcpy). Used for one O(1) question that
// Node-API cannot answer: is the string stored one byte per character?
v8::Local<v8::Value> ToV8(napi_value value) {
  static_assert(sizeof(v8::Local<v8::Value>) == sizeof(napi_value), "napi_value is a V8 handle in Node");
  v8::Local<v8::Value> local;
  std::memcpy(static_cast<void*>(&local), &value, sizeof(value));
  return local;
}

// A JS string hashed in a canonical form decided by its content, not by V8's representation:
//  - every code unit ≤ 0xFF (Latin-1 content: most retrieved text): XXH64 over one byte per unit,
//    seed ^ kLatin1Domain. V8 one-byte strings are copied with napi_get_value_string_latin1 (a
//    memcpy); a two-byte string is scanned and narrowed when all its units fit;
//  - otherwise: XXH64 over the UTF-16LE code units (lone surrogates included), seed as given.
// The two forms are domain-separated by the seed, and each is a bijection of the string, so the
// hash is a function of the exact content. Measured (bench/cache.ts, CPU time per 600-character
// passage): reading one-byte strings as UTF-16 made V8 widen them unit by unit, and hashing twice
// the bytes; this form costs about the napi call plus a memcpy plus XXH64 over 600 bytes.
class StringHasher {
 public:
  StringHasher(Napi::Env env, napi_value value) : env_(env), value_(value) {
    if (napi_get_value_string_utf16(env, value, nullptr, 0, &count_) != napi_ok) {
      throw Napi::TypeError::New(env, "expected a string");
    }
    oneByte_ = ToV8(value).As<v8::String>()->IsOneByte();
  }

  uint64_t Hash(uint64_t seed) {
    size_t copied = 0;
    if (oneByte_) {
      char* bytes = Buffer<char>(count_ + 1, stackBytes_, heapBytes_);
      const napi_status status = napi_get_value_string_latin1(env_, value_, bytes, count_ + 1, &copied);
      Check(status, copied);
      return Xxh64(reinterpret_cast<const unsigned char*>(bytes), count_, seed ^ kLatin1Domain);
    }
    char16_t* units = Buffer<char16_t>(count_ + 1, stackUnits_, heapUnits_);
    const napi_status status = napi_get_value_string_utf16(env_, value_, units, count_ + 1, &copied);
    Check(status, copied);
    bool latin1 = true;
    for (size_t i = 0; i < count_; ++i) latin1 &= static_cast<uint16_t>(units[i]) <= 0xFFU;
    if (!latin1) return Xxh64Utf16Le(units, count_, seed);
    unsigned char* bytes = reinterpret_cast<unsigned char*>(Buffer<char>(count_ + 1, stackBytes_, heapBytes_));
    for (size_t i = 0; i < count_; ++i) bytes[i] = static_cast<unsigned char>(units[i]);
    return Xxh64(bytes, count_, seed ^ kLatin1Domain);
  }

 private:
  template <typename T, size_t N>
  static T* Buffer(size_t size, T (&stack)[N], std::unique_ptr<T[]>& heap) {
    if (size <= N) return stack;
    if (!heap) heap = std::make_unique<T[]>(size);
    return heap.get();
  }

  void Check(napi_status status, size_t copied) const {
    if (status != napi_ok || copied != count_) throw Napi::Error::New(env_, "cannot read the string");
  }

  Napi::Env env_;
  napi_value value_;
  size_t count_ = 0;
  bool oneByte_ = false;
  char stackBytes_[kStackUnits];
  char16_t stackUnits_[kStackUnits];
  std::unique_ptr<char[]> heapBytes_;
  std::unique_ptr<char16_t[]> heapUnits_;
};

uint64_t SeedFrom(const Napi::CallbackInfo& info, size_t at) {
  // A 64-bit seed as two uint32 halves (hi, lo): exact, no BigInt needed.
  if (info.Length() <= at + 1 || !info[at].IsNumber() || !info[at + 1].IsNumber()) {
    throw Napi::TypeError::New(info.Env(), "seed must be two uint32 numbers (hi, lo)");
  }
  const double hi = info[at].As<Napi::Number>().DoubleValue();
  const double lo = info[at + 1].As<Napi::Number>().DoubleValue();
  if (!(hi >= 0 && hi <= 4294967295.0 && lo >= 0 && lo <= 4294967295.0) ||
      hi != static_cast<double>(static_cast<uint32_t>(hi)) || lo != static_cast<double>(static_cast<uint32_t>(lo))) {
    throw Napi::TypeError::New(info.Env(), "seed halves must be integers in [0, 2^32)");
  }
  return (static_cast<uint64_t>(static_cast<uint32_t>(hi)) << 32) | static_cast<uint32_t>(lo);
}

Napi::String Hex(Napi::Env env, uint64_t value) {
  char out[16];
  ToHex16(value, out);
  return Napi::String::New(env, out, 16);
}

// contentHash(text: string, title?: string | undefined | null): string (16 hex digits).
// No title: XXH64(text, SEED_TEXT_ONLY). With a title: XXH64(text, XXH64(title, SEED_TITLE) ^
// SEED_TITLE_TEXT), so (title, text) is unambiguous and an empty title differs from none.
Napi::Value ContentHash(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "contentHash: text must be a string");
  const bool hasTitle = info.Length() >= 2 && !info[1].IsUndefined() && !info[1].IsNull();
  if (hasTitle && !info[1].IsString()) throw Napi::TypeError::New(env, "contentHash: title must be a string");
  uint64_t seed = kSeedTextOnly;
  if (hasTitle) {
    seed = StringHasher(env, info[1]).Hash(kSeedTitle) ^ kSeedTitleText;
  }
  return Hex(env, StringHasher(env, info[0]).Hash(seed));
}

// hashString(s: string, seedHi: number, seedLo: number): string — the canonical string hash.
Napi::Value HashString(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "hashString: expected a string");
  const uint64_t seed = SeedFrom(info, 1);
  return Hex(env, StringHasher(env, info[0]).Hash(seed));
}

// hashBytes(bytes: Uint8Array, seedHi: number, seedLo: number): string — XXH64 over the bytes.
Napi::Value HashBytes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsTypedArray() ||
      info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    throw Napi::TypeError::New(env, "hashBytes: expected a Uint8Array");
  }
  const uint64_t seed = SeedFrom(info, 1);
  Napi::Uint8Array bytes = info[0].As<Napi::Uint8Array>();
  return Hex(env, Xxh64(bytes.Data(), bytes.ByteLength(), seed));
}

Napi::Value HashSchema(const Napi::CallbackInfo& info) {
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("algorithm", "xxh64-latin1-or-utf16le");
  out.Set("version", kSchemaVersion);
  return out;
}

}  // namespace

void Register(Napi::Env env, Napi::Object exports) {
  exports.Set("hashContent", Napi::Function::New(env, ContentHash, "hashContent"));
  exports.Set("hashString", Napi::Function::New(env, HashString, "hashString"));
  exports.Set("hashBytes", Napi::Function::New(env, HashBytes, "hashBytes"));
  exports.Set("hashSchema", Napi::Function::New(env, HashSchema, "hashSchema"));
}

}  // namespace rg::hash
