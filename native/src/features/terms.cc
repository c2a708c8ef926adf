// The per-thread term cache.
#include "features/terms.h"

#include <memory>

namespace rg::features {

TermCache& TermCache::ForThisThread() {
  // Heap-allocated (256 KiB) so thread stacks stay small; lives as long as the thread.
  thread_local std::unique_ptr<TermCache> cache = std::make_unique<TermCache>();
  return *cache;
}

}  // namespace rg::features
