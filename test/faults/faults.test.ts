/**
 * The fault suite, short form (CI): every scenario of test/faults/scenarios.ts once, each in its
 * own child process, two at a time. A scenario passes only if its process exits by itself with
 * code 0 (no abort, no signal, no hang) and its own checks held: nothing mixed up, every error
 * typed. The long form (scripts/fault-suite.ts) repeats each scenario with many seeds. The
 * scenarios against `serve` (cluster-worker-kill, serve-*) start it as a child process of theirs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCrossEncoderModelDir } from '../../src/tooling/model-gen/index.js';
import { processDied, runScenario, type ScenarioRun } from './run-scenario.js';
import { SCENARIOS } from './scenarios.js';

let root: string;
const runs = new Map<string, ScenarioRun>();

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rg-faults-'));
  await writeCrossEncoderModelDir(join(root, 'tiny'), 'tiny', { seed: 42 });
  await writeCrossEncoderModelDir(join(root, 'tinybert-l2'), 'tinybert-l2', { seed: 42 });
  const queue = [...SCENARIOS];
  const env = { FAULT_MODELS: root, FAULT_SHORT: '1' };
  await Promise.all(
    [0, 1].map(async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
        runs.set(name, await runScenario(name, 1, { timeoutMs: 90_000, env }));
      }
    }),
  );
}, 420_000);

afterAll(async () => {
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

describe('fault suite (short form, each scenario in a child process)', () => {
  it.each(SCENARIOS)('%s: the process survives and exits by itself, errors typed, nothing mixed up', (name) => {
    const run = runs.get(name);
    expect(run, `${name} did not run`).toBeDefined();
    const r = run as ScenarioRun;
    const why = `${name}: code ${r.code} signal ${r.signal} timedOut ${r.timedOut} result ${JSON.stringify(r.result)}\n${r.stderrTail}`;
    expect(r.timedOut, why).toBe(false);
    expect(processDied(r), why).toBe(false);
    expect(r.code, why).toBe(0);
    expect(r.result?.ok, why).toBe(true);
  });
});
