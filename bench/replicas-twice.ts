/**
 * Work done twice across replicas: two `relevance-gate serve` processes (the cascade router, fast
 * path → cross-encoder) sharing one redis-server, driven with the seed workload's query stream,
 * then the share of (query, passage) pairs each tier scored more than once across them.
 *
 *   npx tsx bench/replicas-twice.ts [--mode mirror|balanced] [--qps 40] [--seconds 15]
 *       [--collection scifact] [--root <source tree of serve>] [--label after] [--json out.json]
 *
 * mirror: the same stream (same seed) sent to each replica at once: every first request of a
 * query reaches both together, the worst case for pairs in flight on a peer. balanced: one
 * stream through nginx (deploy/nginx.conf, round robin), as deployed. `--root` runs serve from
 * another source tree (bench/replicas-twice.sh builds the "before" tree from a git ref).
 *
 * Counting: every pair a tier scores is written to Redis once by the replica that scored it
 * (SET … PX; before and after alike); a MONITOR connection counts the value writes per key, and
 * each key's value says which tier scored it. A key written k times was scored k times:
 * twice-computed = Σ (k − 1), share = twice-computed / distinct keys, per tier. Lease keys
 * (`prefix{scope}!…`, SET … NX) are not values. Work whose result was dropped (a cross-encoder
 * batch that finished after its request's deadline) is written nowhere and counted nowhere:
 * `batch_pairs_total` in the per-replica figures includes it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { Unpackr } from 'msgpackr';
import { loadCollection } from '../src/tooling/eval/collection.js';
import { createHttpTarget } from '../src/tooling/loadgen/http-target.js';
import { type LoadTarget, type PhaseResult, runOpenLoopPhase } from '../src/tooling/loadgen/open-loop.js';
import { buildBenchWorkload } from '../src/tooling/loadgen/workload.js';
import { freePort, RedisServer } from '../test/cache/redis-server.js';
import { startNginx } from '../test/server/replicas.js';

const { values: args } = parseArgs({
  options: {
    mode: { type: 'string', default: 'mirror' },
    qps: { type: 'string', default: '40' },
    seconds: { type: 'string', default: '15' },
    collection: { type: 'string', default: 'scifact' },
    root: { type: 'string' },
    label: { type: 'string', default: 'current' },
    json: { type: 'string' },
    workers: { type: 'string', default: '1' },
    'redis-timeout-ms': { type: 'string', default: '50' },
  },
});

const here = resolve(import.meta.dirname, '..');
const root = resolve(args.root ?? here);
const mode = args.mode as 'mirror' | 'balanced';
if (mode !== 'mirror' && mode !== 'balanced') throw new Error('--mode is mirror or balanced');
const qps = Number(args.qps);
const seconds = Number(args.seconds);
const collectionDir = join(here, '..', 'shared', 'data', args.collection as string);
const crossEncoder = join(here, 'models', 'generated', 'tinybert-l2');
const PREFIX = 'rg:score:';

interface Serve {
  readonly url: string;
  readonly child: ChildProcess;
  stderr(): string;
}

async function startServe(config: string): Promise<Serve> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(root, 'src', 'cli', 'main.ts'),
      'serve',
      '--port',
      '0',
      '--cross-encoder',
      crossEncoder,
      '--workers',
      args.workers as string,
      '--config',
      config,
      '--log-level',
      'warn',
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const until = Date.now() + 120_000;
  let url: string | undefined;
  while (url === undefined) {
    url = /serving on (http:\/\/\S+)/.exec(out)?.[1];
    if (child.exitCode !== null) throw new Error(`serve exited: ${err}`);
    if (Date.now() > until) throw new Error(`serve did not start: ${err}`);
    await sleep(100);
  }
  while (
    !(await fetch(`${url}/health/ready`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > until) throw new Error(`${url} not ready: ${err}`);
    await sleep(100);
  }
  return { url, child, stderr: () => err };
}

/**
 * Drives the targets with one open-loop stream (the `bench` generator and workload): mirror sends
 * each request to every target at the same instant, balanced to the one target (nginx).
 */
async function drive(urls: readonly string[], rate: number): Promise<PhaseResult[]> {
  const collection = loadCollection(collectionDir);
  const workload = buildBenchWorkload(collection, { k: 20, distinct: 5000, zipf: 1.0, seed: 1 });
  const targets = urls.map((url) => createHttpTarget({ url, protocol: 'gate', model: 'cascade' }));
  // One result per request is what the generator reads; every target's answer is awaited.
  const results: PhaseResult[] = [];
  const mirrored: LoadTarget = {
    filter: async (query, passages, options) => {
      const answers = await Promise.all(targets.map((t) => t.filter(query, passages, options)));
      return answers[0];
    },
  };
  results.push(
    await runOpenLoopPhase({
      gate: mirrored,
      workload,
      qps: rate,
      durationSec: seconds,
      warmupSec: 0,
      budgetMs: 100,
      seed: 1,
    }),
  );
  for (const t of targets) t.close();
  return results;
}

/** Counts value writes (SET key value PX ttl, not the NX of a lease) per key through MONITOR. */
async function monitorWrites(url: string): Promise<{ writes: Map<string, number>; stop: () => Promise<void> }> {
  const writes = new Map<string, number>();
  const client = new Redis(url);
  const monitor = await client.monitor();
  monitor.on('monitor', (_time: string, argv: string[]) => {
    if (argv.length < 3 || argv[0].toLowerCase() !== 'set' || !argv[1].startsWith(PREFIX) || argv[1].includes('}!'))
      return;
    if (argv.some((a, i) => i > 2 && a.toLowerCase() === 'nx')) return;
    writes.set(argv[1], (writes.get(argv[1]) ?? 0) + 1);
  });
  return {
    writes,
    stop: async () => {
      monitor.disconnect();
      await client.quit();
    },
  };
}

/** The tier that scored each value under the prefix (from the stored result), by key. */
async function tiersOfValues(url: string): Promise<Map<string, string>> {
  const client = new Redis(url);
  const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });
  const out = new Map<string, string>();
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 1000);
    cursor = next;
    keys.splice(0, keys.length, ...keys.filter((k) => !k.includes('}!'))); // lease keys
    const values = keys.length === 0 ? [] : await client.mgetBuffer(keys);
    for (let i = 0; i < keys.length; i++) {
      const v = values[i];
      if (v === null || v[0] === 0xc1) continue; // a lease token, or a signed value (not used here)
      try {
        const [, , result] = unpackr.unpack(v) as [number, number, { tier?: string; probabilities?: object }];
        // The fast path's results name their tier; the cross-encoder's carry none (the only other tier here).
        out.set(keys[i], typeof result?.tier === 'string' ? result.tier : 'cross-encoder');
      } catch {
        // not a value (a lease's token)
      }
    }
  } while (cursor !== '0');
  await client.quit();
  return out;
}

async function metric(url: string, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) && line.includes(labels)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function summary(r: PhaseResult): string {
  return `requests ${r.requests}, completed ${r.completed}, errors ${r.errors}, refused ${r.refused}, late ${r.lateBeyondBound}, p50 ${r.latencyMs.p50} ms, p99 ${r.latencyMs.p99} ms, pairs by tier ${JSON.stringify(r.pairsByTier)}`;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'rg-twice-'));
  const redis = new RedisServer(await freePort());
  await redis.start();
  const serves: Serve[] = [];
  let stopNginx: (() => Promise<void>) | undefined;
  try {
    const config = join(work, 'serve.json');
    writeFileSync(
      config,
      JSON.stringify({ cache: { redisUrl: redis.url, redisTimeoutMs: Number(args['redis-timeout-ms']) } }),
    );
    serves.push(...(await Promise.all([startServe(config), startServe(config)])));
    const monitor = await monitorWrites(redis.url);
    let reports: PhaseResult[];
    if (mode === 'mirror') {
      reports = await drive(
        serves.map((s) => s.url),
        qps,
      );
    } else {
      const [a, b] = serves.map((s) => new URL(s.url).host);
      const nginx = await startNginx(a, b);
      stopNginx = nginx.stop;
      reports = await drive([nginx.url], qps);
    }
    await sleep(1500); // background writes land
    await monitor.stop();
    const tiers = await tiersOfValues(redis.url);
    const byTier = new Map<string, { distinct: number; writes: number; twice: number }>();
    for (const [key, n] of monitor.writes) {
      const tier = tiers.get(key) ?? 'unknown';
      const row = byTier.get(tier) ?? { distinct: 0, writes: 0, twice: 0 };
      row.distinct++;
      row.writes += n;
      row.twice += n - 1;
      byTier.set(tier, row);
    }
    const ceAnswered = await Promise.all(
      serves.map((s) => metric(s.url, 'relevance_gate_pairs_total', 'tier="cross-encoder"')),
    );
    const cacheAnswered = await Promise.all(
      serves.map((s) => metric(s.url, 'relevance_gate_pairs_total', 'tier="cache"')),
    );
    const figures = await Promise.all(
      serves.map(async (s) => {
        const out: Record<string, number> = {};
        const text = await (await fetch(`${s.url}/metrics`)).text();
        for (const line of text.split('\n')) {
          const m =
            /^relevance_gate_(degraded_pairs_total|batch_pairs_total|cache_l2_[a-z_]+_total)(\{[^}]*\})? ([0-9.eE+-]+)$/.exec(
              line,
            );
          if (m === null || Number(m[3]) === 0) continue;
          const label = /(?:reason|tier)="([^"]+)"/.exec(m[2] ?? '')?.[1];
          const key = label === undefined ? m[1] : `${m[1]}{${label}}`;
          out[key] = (out[key] ?? 0) + Number(m[3]);
        }
        return out;
      }),
    );
    const rows = [...byTier].map(([tier, r]) => ({
      label: args.label,
      mode,
      tier,
      distinctPairs: r.distinct,
      scored: r.writes,
      scoredTwice: r.twice,
      sharePct: r.distinct === 0 ? 0 : Number(((100 * r.twice) / r.distinct).toFixed(2)),
    }));
    console.log(
      `== ${args.label}, ${mode}: ${mode === 'mirror' ? `${qps} req/s to each of 2 replicas` : `${qps} req/s through nginx`}, ${seconds} s, ${args.collection}, Zipf 1.0 over 5000 queries, k 20, 100 ms`,
    );
    for (const r of rows)
      console.log(
        `${r.tier.padEnd(14)} distinct ${String(r.distinctPairs).padStart(6)}  scored ${String(r.scored).padStart(6)}  twice ${String(r.scoredTwice).padStart(5)}  ${r.sharePct.toFixed(2)} %`,
      );
    console.log(
      `answered by the cross-encoder per replica: ${ceAnswered.join(', ')}; from cache: ${cacheAnswered.join(', ')}`,
    );
    for (const report of reports) console.log(`bench: ${summary(report)}`);
    for (const [i, f] of figures.entries()) console.log(`replica ${i}: ${JSON.stringify(f)}`);
    if (args.json !== undefined)
      writeFileSync(args.json, `${JSON.stringify({ rows, ceAnswered, cacheAnswered, figures, reports }, null, 2)}\n`);
  } finally {
    await stopNginx?.();
    for (const s of serves) s.child.kill('SIGTERM');
    await Promise.all(serves.map((s) => (s.child.exitCode === null ? new Promise((r) => s.child.once('exit', r)) : 0)));
    await redis.kill();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
