/**
 * Loads the native addon once: a local build (build/Release, what `npm ci` or node-gyp makes in a
 * clone) or the prebuilt binary shipped in the package (prebuilds/<platform>-<arch>/), chosen by
 * node-gyp-build, with an error that says how to fix a missing or incompatible binary instead of
 * a bare "Cannot find module". Each subsystem declares the slice of the addon it uses in its own module.
 */
import { createRequire } from 'node:module';
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
  try {
    if (override !== undefined) {
      cached = require(override) as unknown;
    } else {
      const nodeGypBuild = require('node-gyp-build') as (dir: string) => unknown;
      cached = nodeGypBuild(root);
    }
  } catch (cause) {
    throw new NativeAddonError(
      `no usable native addon for ${process.platform}-${process.arch} (node ${process.versions.node}) in ${root}: ` +
        `the package ships prebuilt binaries for linux-x64 (glibc); elsewhere build it with \`npx node-gyp rebuild\` ` +
        `in ${root} (needs a C++17 compiler and Python). Cause: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
  return cached;
}
