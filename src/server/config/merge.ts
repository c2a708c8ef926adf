/**
 * Layering configuration sources: the config file, then the environment, then flags, later ones
 * winning field by field.
 */
import { isRecord } from './fields.js';
import type { ServerConfigInput } from './types.js';

/** Sections merged one level deep instead of replaced (models by name). */
const MERGED_SECTIONS: ReadonlySet<string> = new Set([
  'cache',
  'limits',
  'models',
  'policy',
  'admission',
  'decisionLog',
  'shadows',
]);

/** Layers configs: later ones win field by field (admission, cache and limits merged one level deep, models by name). */
export function mergeConfigInputs(...layers: readonly ServerConfigInput[]): ServerConfigInput {
  const out: Record<string, unknown> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) {
      if (value === undefined) continue;
      if (MERGED_SECTIONS.has(key) && isRecord(value)) {
        out[key] = { ...((out[key] as Record<string, unknown> | undefined) ?? {}), ...value };
      } else out[key] = value;
    }
  }
  return out as ServerConfigInput;
}
