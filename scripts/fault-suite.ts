/**
 * The fault suite, long form: every scenario of test/faults/scenarios.ts repeated with seeds
 * 1..reps, each run in its own child process. Reports per scenario: runs, passes, process deaths
 * (signal, abort, exit without a verdict), hangs (killed after the timeout) and failed checks.
 *
 *   npx tsx scripts/fault-suite.ts [--reps 50] [--parallel 2] [--scenarios a,b] [--timeout-ms 120000]
 *                                  [--budget-s N]   (stop starting new runs after N seconds)
 *                                  [--first-seed 1] [--short]
 *
 * Exit code 1 if any run died, hung or failed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeCrossEncoderModelDir } from '../src/tiers/cross-encoder/model-gen/index.js';
import { processDied, runScenario, type ScenarioRun } from '../test/faults/run-scenario.js';
import { SCENARIOS } from '../test/faults/scenarios.js';

const { values } = parseArgs({
  options: {
    reps: { type: 'string', default: '50' },
    parallel: { type: 'string', default: '2' },
    scenarios: { type: 'string' },
    'timeout-ms': { type: 'string', default: '120000' },
    'budget-s': { type: 'string' },
    short: { type: 'boolean', default: false },
    'first-seed': { type: 'string', default: '1' },
  },
});
const reps = Number(values.reps);
const parallel = Number(values.parallel);
const timeoutMs = Number(values['timeout-ms']);
const budgetMs = values['budget-s'] === undefined ? Number.POSITIVE_INFINITY : Number(values['budget-s']) * 1000;
const names = values.scenarios === undefined ? [...SCENARIOS] : values.scenarios.split(',');
for (const n of names) if (!(SCENARIOS as readonly string[]).includes(n)) throw new Error(`unknown scenario ${n}`);

const root = await mkdtemp(join(tmpdir(), 'rg-fault-suite-'));
await writeCrossEncoderModelDir(join(root, 'tiny'), 'tiny', { seed: 42 });
await writeCrossEncoderModelDir(join(root, 'tinybert-l2'), 'tinybert-l2', { seed: 42 });
const env = { FAULT_MODELS: root, FAULT_SHORT: values.short ? '1' : '0' };

// Round-robin over scenarios so a budget cut leaves every scenario with a similar count.
const jobs: Array<{ name: string; seed: number }> = [];
const firstSeed = Number(values['first-seed']);
for (let seed = firstSeed; seed < firstSeed + reps; seed++) for (const name of names) jobs.push({ name, seed });
const results: ScenarioRun[] = [];
const started = Date.now();
await Promise.all(
  Array.from({ length: parallel }, async () => {
    for (let job = jobs.shift(); job !== undefined; job = jobs.shift()) {
      if (Date.now() - started > budgetMs) return;
      const run = await runScenario(job.name, job.seed, { timeoutMs, env });
      results.push(run);
      const verdict = run.timedOut ? 'HANG' : processDied(run) ? 'DIED' : run.result?.ok ? 'ok' : 'FAILED';
      if (verdict !== 'ok')
        console.log(
          `${verdict} ${job.name} seed ${job.seed}: code ${run.code} signal ${run.signal} ${JSON.stringify(run.result)}\n${run.stderrTail}`,
        );
    }
  }),
);
await rm(root, { recursive: true, force: true });

const summary = names.map((name) => {
  const mine = results.filter((r) => r.scenario === name);
  const ms = mine.map((r) => r.ms).sort((a, b) => a - b);
  return {
    scenario: name,
    runs: mine.length,
    passed: mine.filter((r) => !r.timedOut && !processDied(r) && r.result?.ok === true).length,
    processDeaths: mine.filter((r) => !r.timedOut && processDied(r)).length,
    hangs: mine.filter((r) => r.timedOut).length,
    failedChecks: mine.filter((r) => !r.timedOut && !processDied(r) && r.result?.ok !== true).length,
    medianMs: ms.length === 0 ? 0 : ms[Math.floor(ms.length / 2)],
  };
});
console.table(summary);
console.log(
  `total ${results.length} runs in ${Math.round((Date.now() - started) / 1000)} s (reps ${reps}, parallel ${parallel})`,
);
const bad = summary.some((s) => s.processDeaths + s.hangs + s.failedChecks > 0);
process.exitCode = bad ? 1 : 0;
