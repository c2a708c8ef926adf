/**
 * The structural check of a Scorer, used wherever a caller hands one in (gate, router, server),
 * so every entry point accepts and refuses the same objects.
 */
import type { Scorer } from '../types.js';

/** A non-empty string `id`, a `score` function, and `signals` (when given) an array of non-empty strings. */
export function isScorer(value: unknown): value is Scorer {
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Scorer;
  if (typeof s.id !== 'string' || s.id.length === 0 || typeof s.score !== 'function') return false;
  return (
    s.signals === undefined ||
    (Array.isArray(s.signals) && s.signals.every((n: unknown) => typeof n === 'string' && n.length > 0))
  );
}
