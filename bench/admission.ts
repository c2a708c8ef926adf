/**
 * Admission under overload, long form (the short form is test/server/overload-admission.test.ts):
 * a `relevance-gate serve` child process (or `--url`), its capacity for the workload measured first
 * (closed loop, a generous budget), then `--factor` × that rate offered open loop for `--duration`
 * seconds (Poisson arrivals, latency from the scheduled send), and the figures of the acceptance:
 * goodput against capacity, every refusal a 429 with Retry-After and how fast it came, the p99 of
 * the 200s against the budget, 5xx and connection errors. Exit code 1 when a check fails.
 *
 *   # cross-encoder: 8 documents, 300 ms budget, 2 × capacity for 60 s
 *   npx tsx bench/admission.ts --model cross-encoder --docs 8 --budget-ms 300 --duration 60
 *   # fast path: 20 documents, 100 ms budget, 256 sockets, 2 × capacity for 60 s
 *   npx tsx bench/admission.ts --model fast-path --docs 20 --budget-ms 100 --sockets 256 --duration 60
 *
 * Options: --factor 2, --capacity-sec 10, --capacity-concurrency (4 cross-encoder, 8 fast path:
 * enough callers to keep the server busy, few enough that none waits past admission.maxQueueMs),
 * --protocol cohere|tei|gate, --no-request-start (do not send x-request-start), --refusal-ms 20,
 * --p99-bound-ms (default the budget; the fast-path acceptance reads 120), --workers 1 (cross-
 * encoder threads), --cross-encoder DIR (default models/generated/tinybert-l2, generated when
 * missing), --serve-args "…" (more `serve` flags, e.g. "--admission bounds" for the baseline),
 * --node-args "…" (node flags of the server process, e.g. "--trace-gc"), --serve-root DIR (serve
 * from another checkout of the package, e.g. the code before a change, for a before/after run),
 * --url URL (a running server instead), --data DIR (default ../shared/data/scifact), --seed 1,
 * --node-http (node:http's client instead of the lean raw-socket one: it costs the client more CPU).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { writeCrossEncoderModelDir } from '../src/tooling/model-gen/index.js';
import { packageRoot } from '../src/util/package-root.js';
import {
  closedLoop,
  createClient,
  createRawClient,
  formatSummary,
  openLoop,
  scifactWork,
  summarize,
} from './admission-driver.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
const flag = (name: string): boolean => process.argv.includes(`--${name}`);
function num(name: string, fallback: number): number {
  const v = Number(arg(name, String(fallback)));
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a number ≥ 0`);
  return v;
}

const root = packageRoot();
const model = arg('model', 'cross-encoder');
const crossEncoder = model !== 'fast-path';
const docs = num('docs', crossEncoder ? 8 : 20);
const budgetMs = num('budget-ms', crossEncoder ? 300 : 100);
const factor = num('factor', 2);
const duration = num('duration', 60);
const capacitySec = num('capacity-sec', 10);
const concurrency = num('capacity-concurrency', crossEncoder ? 4 : 8);
const sockets = num('sockets', 256);
const refusalMs = num('refusal-ms', 20);
const p99Bound = num('p99-bound-ms', budgetMs);
const protocol = arg('protocol', 'cohere') as 'cohere' | 'tei' | 'gate';
const seed = num('seed', 1);
const dataDir = arg('data', join(root, '..', 'shared', 'data', 'scifact'));

async function startServe(): Promise<{ url: string; stop(): Promise<void> }> {
  const args = ['--port', '0', '--log-level', 'warn', '--no-cache'];
  if (crossEncoder) {
    const dir = arg('cross-encoder', join(root, 'models', 'generated', 'tinybert-l2'));
    if (!existsSync(join(dir, 'onnx', 'model.onnx'))) await writeCrossEncoderModelDir(dir, 'tinybert-l2', { seed: 42 });
    args.push('--cross-encoder', dir, '--workers', arg('workers', '1'));
  }
  const extra = arg('serve-args', '').trim();
  if (extra.length > 0) args.push(...extra.split(/\s+/));
  const nodeArgs = arg('node-args', '')
    .split(/\s+/)
    .filter((a) => a.length > 0);
  // Another checkout's server (e.g. the code before a change) for a before/after comparison.
  const serveRoot = arg('serve-root', root);
  const child = spawn(
    process.execPath,
    [...nodeArgs, '--import', 'tsx', join(serveRoot, 'src', 'cli', 'main.ts'), 'serve', ...args],
    {
      cwd: serveRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  for (let i = 0; i < 1200 && !/serving on http:\/\/\S+/.test(out); i++) await new Promise((r) => setTimeout(r, 100));
  const url = /serving on (http:\/\/\S+)/.exec(out)?.[1];
  if (url === undefined) {
    child.kill('SIGKILL');
    throw new Error(`the server did not start: ${out}`);
  }
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function main(): Promise<void> {
  const given = arg('url', '');
  const server = given === '' ? await startServe() : { url: given, stop: async () => undefined };
  const work = scifactWork({ dataDir, docs, count: 20_000, protocol, model, seed });
  const client = (flag('node-http') ? createClient : createRawClient)(server.url, { sockets, timeoutMs: 10_000 });
  try {
    console.log(
      `admission bench: model ${model}, ${docs} documents, budget ${budgetMs} ms, ${factor} × capacity for ${duration} s, ${sockets} sockets, protocol ${protocol}${flag('no-request-start') ? '' : ', x-request-start sent'}`,
    );
    await closedLoop(client, work, { concurrency, seconds: Math.min(3, capacitySec), budgetMs: 20_000 });
    const capacity = await closedLoop(client, work, {
      concurrency,
      seconds: capacitySec,
      budgetMs: 20_000,
      offset: 5000,
    });
    console.log(
      `capacity: ${capacity.rps.toFixed(1)} answers/s (closed loop, ${concurrency} callers, ${capacitySec} s; statuses ${JSON.stringify(capacity.statuses)})`,
    );
    const rps = factor * capacity.rps;
    const outcomes = await openLoop(client, work, {
      rps,
      seconds: duration,
      budgetMs,
      requestStart: !flag('no-request-start'),
      seed,
      offset: 10_000,
    });
    const s = summarize(outcomes, {
      capacityRps: capacity.rps,
      seconds: duration,
      refusalBoundMs: refusalMs,
      budgetMs,
    });
    console.log(`offered ${rps.toFixed(1)} requests/s`);
    console.log(formatSummary(s, capacity.rps, refusalMs));
    const slow = outcomes.filter((o) => o.status === 429 && o.latencyMs > refusalMs);
    if (slow.length > 0)
      console.log(
        `refusals later than ${refusalMs} ms (first 10): ${slow
          .slice(0, 10)
          .map(
            (o) =>
              `at ${(o.atMs / 1000).toFixed(1)} s: ${o.latencyMs.toFixed(1)} ms (sent after ${(o.latencyMs - o.sentLatencyMs).toFixed(1)} ms, server ${o.serverMs.toFixed(1)} ms, "${o.refusal}")`,
          )
          .join('; ')}`,
      );
    const perTen: string[] = [];
    for (let t = 0; t < duration; t += 10) {
      const window = outcomes.filter((o) => o.atMs >= t * 1000 && o.atMs < (t + 10) * 1000);
      const ok = window.filter((o) => o.status === 200);
      perTen.push(
        `${t}-${t + 10}s: ${ok.length} × 200 (${(ok.length / 10).toFixed(1)}/s), ${window.filter((o) => o.status === 429).length} × 429`,
      );
    }
    console.log(perTen.join('\n'));
    const checks = [
      [`goodput (200s within the budget) ≥ 80 % of capacity`, s.inBudgetShare >= 0.8],
      [`every refusal a 429 within ${refusalMs} ms`, s.refusedWithinBound === s.refused],
      [`every 429 with Retry-After`, s.refusalsWithoutRetryAfter === 0],
      [`p99 of the 200s ≤ ${p99Bound} ms`, s.okLatencyMs.p99 <= p99Bound],
      ['no 5xx', s.serverErrors === 0],
      ['no connection error or client timeout', s.clientErrors === 0],
    ] as const;
    for (const [name, ok] of checks) console.log(`${ok ? 'PASS' : 'FAIL'} ${name}`);
    process.exitCode = checks.every(([, ok]) => ok) ? 0 : 1;
  } finally {
    client.close();
    await server.stop();
  }
}

await main();
