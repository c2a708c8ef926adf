#pragma once
#include <napi.h>

namespace rg::trees {
// Adds this subsystem's functions and classes to the addon's exports.
void Register(Napi::Env env, Napi::Object exports);
}  // namespace rg::trees
