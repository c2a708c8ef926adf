#include "features/features_binding.h"

namespace rg::features {
void Register(Napi::Env /*env*/, Napi::Object /*exports*/) {}
}  // namespace rg::features
