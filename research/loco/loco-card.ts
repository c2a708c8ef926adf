/**
 * Rewrites the operating-point section of an existing model directory's MODEL_CARD.md without
 * retraining: runs the training pipeline's own test evaluation (`relevance-gate eval --queries test`,
 * fresh process per collection, with and without retrieval_rank) and renders the section exactly as
 * `train-fast-path` would (src/tooling/training/operating-points-card.ts), between the gate table and
 * "## Limits". A later `train-fast-path --check` run writes the same card.
 *
 * Usage: npx tsx scripts/loco-card.ts [--data ../shared/data] [--model models/fast-path-lexical]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { discoverCollections, evalInFreshProcess } from '../../src/tooling/training/fast-path-pipeline.js';
import type { TestResult } from '../../src/tooling/training/model-card.js';
import { renderOperatingPointsSection } from '../../src/tooling/training/operating-points-card.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: '../shared/data' },
    model: { type: 'string', default: 'models/fast-path-lexical' },
  },
});
const dataDir = resolve(values.data as string);
const modelDir = resolve(values.model as string);
const meta = JSON.parse(readFileSync(join(modelDir, 'meta.json'), 'utf8')) as { targetPrecision: number };
const tests: TestResult[] = [];
for (const name of discoverCollections(dataDir)) {
  const dir = join(dataDir, name);
  tests.push({
    name,
    withRank: evalInFreshProcess(dir, modelDir, 100, 20, meta.targetPrecision, true),
    textOnly: evalInFreshProcess(dir, modelDir, 100, 20, meta.targetPrecision, false),
  });
  process.stderr.write(`loco-card: evaluated ${name}\n`);
}
const cardPath = join(modelDir, 'MODEL_CARD.md');
const card = readFileSync(cardPath, 'utf8');
const end = card.indexOf('## Limits (read before relying on it)');
const startMarker = '## Operating points (the gate decision by intent)';
const start = card.indexOf(startMarker) >= 0 ? card.indexOf(startMarker) : end;
if (end < 0) throw new Error(`${cardPath}: no "## Limits" section`);
const section = renderOperatingPointsSection(tests, 20).join('\n');
writeFileSync(cardPath, `${card.slice(0, start)}${section}\n${card.slice(end)}`);
process.stderr.write(`loco-card: wrote ${cardPath}\n`);
