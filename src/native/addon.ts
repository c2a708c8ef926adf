/**
 * Loads the compiled addon (build/Release/relevance_gate.node) once, with an error that says how
 * to fix a missing or stale build instead of a bare "Cannot find module".
 * Each subsystem declares the slice of the addon it uses in its own module.
 */
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { NativeAddonError } from '../errors.js';
import { packageRoot } from '../util/package-root.js';

const require = createRequire(import.meta.url);

let cached: unknown;

/** The raw addon exports. Callers cast to the interface of the subsystem they use. */
export function loadAddon(): unknown {
  if (cached !== undefined) return cached;
  let root: string;
  try {
    root = packageRoot();
  } catch (cause) {
    throw new NativeAddonError(String(cause), { cause });
  }
  const override = process.env.RELEVANCE_GATE_ADDON;
  const path = override ?? join(root, 'build', 'Release', 'relevance_gate.node');
  if (!existsSync(path)) {
    throw new NativeAddonError(
      `native addon not found at ${path}; build it with \`npm rebuild\` (or \`npx node-gyp rebuild\`) in ${root}`,
    );
  }
  try {
    cached = require(path) as unknown;
  } catch (cause) {
    throw new NativeAddonError(
      `native addon at ${path} failed to load (built for another Node version?); rebuild with \`npx node-gyp rebuild\`: ${String(cause)}`,
      { cause },
    );
  }
  return cached;
}
