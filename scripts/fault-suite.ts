/**
 * The fault suite, long form: every scenario of test/faults/scenarios.ts repeated with seeds
 * 1..reps, each run in its own child process. Reports per scenario: runs, passes, process deaths
 * (signal, abort, exit without a verdict), hangs (killed after the timeout) and failed checks.
 *
 *   npx tsx scripts/fault-suite.ts [--reps 50] [--parallel 2] [--scenarios a,b] [--timeout-ms 120000]
 *                                  [--budget-s N]   (stop starting new runs after N seconds)
 *                                  [--first-seed 1] [--short]
 *                                  [--report runs.jsonl]   (every run's verdict and figures, a line each)
 *
 * After the table, the totals of the cluster-worker-kill runs (requests, kills, what the kills
 * cost and where). Exit code 1 if any run died, hung or failed.
 */
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeCrossEncoderModelDir } from '../src/tooling/model-gen/index.js';
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
    report: { type: 'string' },
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
      if (values.report !== undefined)
        await appendFile(
          values.report,
          `${JSON.stringify({ scenario: run.scenario, seed: run.seed, code: run.code, signal: run.signal, timedOut: run.timedOut, ms: run.ms, result: run.result })}\n`,
        );
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
/** What the kills of the cluster-worker-kill runs cost, over all runs (failed ones included). */
interface KillFigures {
  sent?: number;
  statuses?: Record<string, number>;
  lostInFlight?: number;
  lostAfterKill?: number;
  failedElsewhere?: number;
  readiness?: { probes: number; notReady: number; errors: number; lostWithKilled?: number };
  kills?: Array<{ connections: number; exitSeenMs?: number; replacementReadyMs?: number }>;
  connections?: Record<string, number>;
}
const killRuns = results.filter((r) => r.scenario === 'cluster-worker-kill' && r.result !== undefined);
if (killRuns.length > 0) {
  const total = {
    sent: 0,
    lostInFlight: 0,
    lostAfterKill: 0,
    failedElsewhere: 0,
    probes: 0,
    notReady: 0,
    probeErrors: 0,
    probesLost: 0,
    rerouted: 0,
    dropped: 0,
  };
  const statuses: Record<string, number> = {};
  const kills: NonNullable<KillFigures['kills']> = [];
  for (const run of killRuns) {
    const f = run.result as KillFigures;
    total.sent += f.sent ?? 0;
    total.lostInFlight += f.lostInFlight ?? 0;
    total.lostAfterKill += f.lostAfterKill ?? 0;
    total.failedElsewhere += f.failedElsewhere ?? 0;
    total.probes += f.readiness?.probes ?? 0;
    total.notReady += f.readiness?.notReady ?? 0;
    total.probeErrors += f.readiness?.errors ?? 0;
    total.probesLost += f.readiness?.lostWithKilled ?? 0;
    total.rerouted += f.connections?.rerouted ?? 0;
    total.dropped += f.connections?.dropped ?? 0;
    for (const [status, n] of Object.entries(f.statuses ?? {})) statuses[status] = (statuses[status] ?? 0) + n;
    kills.push(...(f.kills ?? []));
  }
  const sorted = (xs: number[]): number[] => xs.sort((a, b) => a - b);
  const teardown = sorted(kills.map((k) => k.exitSeenMs ?? 0));
  const ready = sorted(kills.map((k) => k.replacementReadyMs ?? 0));
  console.log(
    `cluster-worker-kill: ${killRuns.length} runs, ${kills.length} kills, ${total.sent} requests: HTTP ${JSON.stringify(statuses)}; ` +
      `connection failures outside the killed processes' connections ${total.failedElsewhere}; ` +
      `lost with the killed processes ${total.lostInFlight + total.lostAfterKill} (${total.lostInFlight} in flight at the kill, ${total.lostAfterKill} written on their keep-alive connections during their teardown); ` +
      `readiness ${total.probes} probes, ${total.notReady} not ready, ${total.probeErrors} connection errors (${total.probesLost} more on the killed processes' connections); ` +
      `connections rerouted from a killed worker ${total.rerouted}, dropped ${total.dropped}; ` +
      `teardown (kill → exit seen) median ${teardown[Math.floor(teardown.length / 2)] ?? 0} ms, max ${teardown.at(-1) ?? 0} ms; ` +
      `replacement ready median ${ready[Math.floor(ready.length / 2)] ?? 0} ms, max ${ready.at(-1) ?? 0} ms`,
  );
}
const bad = summary.some((s) => s.processDeaths + s.hangs + s.failedChecks > 0);
process.exitCode = bad ? 1 : 0;
