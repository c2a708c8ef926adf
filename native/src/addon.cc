// Entry point of the relevance_gate addon: each subsystem registers its own exports.
#include <napi.h>

#include "features/features_binding.h"
#include "hash/hash_binding.h"
#include "trees/trees_binding.h"

namespace {
Napi::Object Init(Napi::Env env, Napi::Object exports) {
  rg::trees::Register(env, exports);
  rg::features::Register(env, exports);
  rg::hash::Register(env, exports);
  return exports;
}
}  // namespace

NODE_API_MODULE(relevance_gate, Init)
