#pragma once
#include <napi.h>

namespace rg::hash {
// Adds the content-hash functions to the addon's exports.
void Register(Napi::Env env, Napi::Object exports);
}  // namespace rg::hash
