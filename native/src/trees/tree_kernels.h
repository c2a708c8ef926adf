// Internal to the tree evaluator: staging and per-block kernels (see tree_kernels.cc).
#pragma once

#include "trees/tree_eval.h"

namespace rg::trees::detail {

constexpr uint32_t kLanes = 16;  // rows evaluated together in one block

}  // namespace rg::trees::detail
