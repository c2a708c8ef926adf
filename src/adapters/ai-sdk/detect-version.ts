/**
 * Which reranking-model specification the application's `ai` package speaks: `ai` 7 calls
 * RerankingModelV4, `ai` 6 only accepts V3. On Node 20 npm installs `ai` 6 (7 declares node ≥ 22),
 * so a model that hard-coded V4 would be refused there. Read once from the `ai` package the
 * application itself resolves (its entry script's folder, then the working directory); when
 * none is found, V4.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { SpecificationVersion } from './spec.js';

let detected: SpecificationVersion | undefined;

function aiMajorFrom(dir: string): number | undefined {
  try {
    const path = createRequire(join(dir, 'noop.js')).resolve('ai/package.json');
    const version = (JSON.parse(readFileSync(path, 'utf8')) as { version?: unknown }).version;
    const major = typeof version === 'string' ? Number.parseInt(version, 10) : Number.NaN;
    return Number.isInteger(major) ? major : undefined;
  } catch {
    return undefined;
  }
}

/** The specification `ai` resolved from `dir` speaks: 'v3' for `ai` 6, 'v4' otherwise or when there is none. */
export function specificationVersionAt(dir: string): SpecificationVersion {
  return aiMajorFrom(dir) === 6 ? 'v3' : 'v4';
}

/** 'v3' when the application's `ai` is version 6, else 'v4'. */
export function installedSpecificationVersion(): SpecificationVersion {
  if (detected !== undefined) return detected;
  const entry = process.argv[1];
  const major = (entry ? aiMajorFrom(dirname(entry)) : undefined) ?? aiMajorFrom(process.cwd());
  detected = major === 6 ? 'v3' : 'v4';
  return detected;
}
