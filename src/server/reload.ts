/**
 * Reloading models and policy without dropping a request (`serve` on SIGHUP, server.reload()):
 * a new registry is built and loaded (and its tiers warmed) beside the serving one, then swapped
 * in. A request resolves its model once, when it arrives, so requests in flight finish on the old
 * models; the old registry is closed once none of its models has a pair in flight (or after the
 * shutdown timeout). Each registry has its own score cache, so scores of the old and the new
 * models never mix (a shared Redis L2 is keyed on scorer ids, which change with the model files).
 */
import type { ModelRegistry } from './registry.js';

/** A registry whose every read goes to the one currently served. */
export interface SwappableRegistry extends ModelRegistry {
  readonly current: ModelRegistry;
  /** Serves `next` from now on; returns the registry it replaced. */
  swap(next: ModelRegistry): ModelRegistry;
}

export function swappableRegistry(initial: ModelRegistry): SwappableRegistry {
  let current = initial;
  return {
    get current() {
      return current;
    },
    get state() {
      return current.state;
    },
    get failure() {
      return current.failure;
    },
    get names() {
      return current.names;
    },
    get defaultModel() {
      return current.defaultModel;
    },
    load: () => current.load(),
    get: (name) => current.get(name),
    all: () => current.all(),
    has: (name) => current.has(name),
    cacheStats: () => current.cacheStats(),
    close: () => current.close(),
    swap(next) {
      const old = current;
      current = next;
      return old;
    },
  };
}

/** Closes a replaced registry once its models have no pair in flight, or after `timeoutMs`. */
export async function retireRegistry(old: ModelRegistry, timeoutMs: number, pollMs = 5): Promise<void> {
  const until = Date.now() + timeoutMs;
  const busy = (): boolean => old.all().some((m) => m.admission.pairsInFlight > 0);
  while (busy() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, pollMs));
  await old.close();
}
