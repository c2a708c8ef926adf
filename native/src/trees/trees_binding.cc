#include "trees/trees_binding.h"

namespace rg::trees {
void Register(Napi::Env /*env*/, Napi::Object /*exports*/) {}
}  // namespace rg::trees
