/**
 * What the decision log costs per request, in-process, on realistic cascade answers: k = 20
 * SciFact passages (title + text, ~1.4–1.8 kB, some beyond Latin-1) decided under the seed's
 * cascade policy, two signals and two raw scores per pair, the router's long scorer id.
 *
 *   npx tsx bench/decision-log-record.ts        (REQUESTS=4000 distinct requests, PACED=2000)
 *
 * It prints:
 *  1. where a version-1 line's CPU went (sha256 per passage and query, the record object, JSON),
 *     computed inline here so the figure stays comparable whatever src/ does now;
 *  2. this thread's share per request in a hot loop: the whole line (the inline writer) against
 *     hashing, packing and serializing it for the writer thread;
 *  3. through the log, a burst: `record()` on the request path, then the drain's CPU per record on
 *     this thread (Linux schedstat) and in all threads, for the writer thread and the inline writer;
 *  4. the same paced at ~700 requests/s (the log on minus the loop with it off), as the overhead
 *     bench drives the server: cold caches included, the figure that lands in p99 on a busy host;
 *  5. for comparison, serializing a request with its passage texts for a worker, unpacked.
 * CPU times, not wall: on a shared host, other processes' load inflates them less.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serialize } from 'node:v8';
import { createDecisionLog, type DecisionLogModel } from '../src/decision-log/index.js';
import { decisionLineOf } from '../src/decision-log/line.js';
import { BatchPacker } from '../src/decision-log/packed.js';
import { createGate, type GateItem, type GateResult, type Passage, type Scorer } from '../src/index.js';

const REQUESTS = Number(process.env.REQUESTS ?? 4000);
const PACED = Number(process.env.PACED ?? 2000);
const K = 20;

/** SciFact documents when ../shared is beside the clone, else synthetic 1.8 kB passages. */
function corpus(): string[] {
  const file = join(import.meta.dirname, '../../shared/data/scifact/docs.jsonl');
  if (existsSync(file)) {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim().length > 0)
      .map((l) => {
        const d = JSON.parse(l) as { title?: string; text?: string };
        return `${d.title ?? ''} ${d.text ?? ''}`.trim();
      });
  }
  const words = 'cell protein expression receptor tumour patients increased signalling pathway mouse'.split(' ');
  return Array.from({ length: 2000 }, (_, d) =>
    Array.from({ length: 260 }, (_, w) => words[(d * 7 + w * 13) % words.length]).join(' '),
  );
}

const docs = corpus();
const scorerId =
  'router(cross-encoder=cross-encoder:532ef0c45c6ff6a5:len512:longest_first,fast-path=fastpath/lexical-v1/0635ad06af598692b4b9@stats/16895e551defba96)';
const unit = (text: string, salt: number): number => {
  let h = 2166136261 ^ salt;
  for (let i = 0; i < text.length; i += 7) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return ((h >>> 0) % 100_000) / 100_000;
};
const scorer: Scorer = {
  id: scorerId,
  score: async (query, ps) =>
    ps.map((p) => {
      const relevant = unit(query + p.text, 1) * 0.6;
      const ranking = 0.45 + unit(p.text, 2) * 0.15;
      return {
        probabilities: { relevant, ranking },
        raw: { relevant: Math.log(relevant / (1 - relevant)), ranking: (ranking - 0.5) * 5 },
        tier: 'fast-path',
      };
    }),
};
const policy = { relevanceSignal: ['relevant'], threshold: 0.2710968696121889 };
const gate = createGate({ scorer, policy });
const model: DecisionLogModel = { name: 'cascade', scorer, policy };

// Distinct requests; passage strings come out of JSON.parse, as a server's request bodies do.
const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const results: GateResult[] = [];
for (let r = 0; r < REQUESTS; r++) {
  const passages = JSON.parse(
    JSON.stringify(
      Array.from({ length: K }, (_, i) => {
        const d = (r * 131 + i * 17) % docs.length;
        return { id: String(4_000_000 + d), text: docs[d] };
      }),
    ),
  ) as Passage[];
  results.push(await gate.filter(`query ${r}: does the ${r % 97} protein regulate cell growth in tumours?`, passages));
}
const bytesPerText = results[0].included.concat(results[0].excluded).reduce((s, x) => s + x.passage.text.length, 0) / K;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (us: number): string => `${us.toFixed(1)} µs`;

// 1. The version-1 line, piece by piece (inline copy of what it did: sha256 hex per passage and
// of the query, a copied record object, JSON.stringify).
const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
const itemsOf = (r: GateResult): GateItem[] =>
  [...r.included, ...r.conflicting, ...r.excluded].sort((a, b) => a.rank - b.rank);
function v1Record(r: GateResult, hash: (text: string) => string): unknown {
  return {
    kind: 'decision',
    v: 1,
    time: new Date().toISOString(),
    requestId: 'c7d0c32e-faf6-43e0-a543-e02dd6268b71',
    endpoint: '/v1/gate',
    model: 'cascade',
    scorerId: r.tier.scorer,
    policyHash: 'f6d9aee676501728',
    override: null,
    queryHash: hash(r.query),
    queryWords: 12,
    queryClass: r.queryClass ?? null,
    threshold: r.stats.threshold,
    rankingCut: r.stats.rankingCut,
    sufficiency: r.stats.sufficiency,
    fallbackTriggered: r.stats.fallbackTriggered,
    insufficientContext: r.stats.insufficientContext,
    counts: { included: r.included.length, conflicting: r.conflicting.length, excluded: r.excluded.length },
    timings: { scoringMs: r.timings.scoringMs, totalMs: r.timings.totalMs, serverMs: 1.5 },
    tiers: { ...r.tier.counts },
    passages: itemsOf(r).map((item) => ({
      id: item.id,
      rank: item.rank,
      hash: hash(item.passage.text),
      route: item.route,
      rule: item.rule,
      reason: item.reason ?? null,
      tier: item.tier ?? null,
      cached: item.cached,
      relevance: item.relevance,
      score: item.score,
      signals: item.signals === null ? null : { ...item.signals },
      raw: item.raw === undefined ? null : { ...item.raw },
    })),
  };
}
/** CPU per request of `fn` over every request, the median of five rounds (CPU time: the host is shared). */
function timePerRequest(fn: (r: GateResult) => void): number {
  for (let i = 0; i < Math.min(500, results.length); i++) fn(results[i]);
  const runs: number[] = [];
  for (let round = 0; round < 5; round++) {
    const t0 = cpuUs();
    for (const r of results) fn(r);
    runs.push((cpuUs() - t0) / results.length);
  }
  return median(runs);
}
let sink = 0;
const sha = timePerRequest((r) => {
  sink += sha256(r.query).length;
  for (const item of itemsOf(r)) sink += sha256(item.passage.text).length;
});
const objects = timePerRequest((r) => {
  sink += (v1Record(r, () => '') as { passages: unknown[] }).passages.length;
});
const v1Lines = results.slice(0, 200).map((r) => v1Record(r, sha256));
let v1i = 0;
const stringify = timePerRequest(() => {
  sink += JSON.stringify(v1Lines[v1i++ % v1Lines.length]).length;
});
const whole = timePerRequest((r) => {
  sink += JSON.stringify(v1Record(r, sha256)).length;
});
const v1Bytes = JSON.stringify(v1Lines[0]).length;
console.log(
  `k = ${K}, passages ${Math.round(bytesPerText)} chars on average, ${results.length} distinct requests\n` +
    `1. version-1 line, inline: sha256 × ${K + 1} ${fmt(sha)}, record object ${fmt(objects)}, JSON.stringify ${fmt(stringify)}; ` +
    `all together ${fmt(whole)} per request; ${v1Bytes} bytes per line`,
);

// 2. This thread's share of a line, per request, in a hot loop: building the whole line (the
// inline writer), against hashing and packing it and serializing the batch as postMessage does
// (the writer thread's hand-over; its thread then builds the line).
const lineEntry = (r: GateResult, i: number) => ({ requestId: `r${i}`, model, result: r, serverMs: 1.5 });
const noOptions = { includeQuery: false, includeText: false };
const stamp = new Date();
const inlineLine = timePerRequest((r) => {
  const line = decisionLineOf(lineEntry(r, 0), 'f6d9aee676501728', noOptions, stamp);
  sink += line.charCodeAt(line.length >> 1);
});
const packer = new BatchPacker(noOptions);
let packed = 0;
const handOver = timePerRequest((r) => {
  packer.add(lineEntry(r, packed), 'f6d9aee676501728', '{}', stamp);
  if (++packed % 32 === 0) sink += serialize({ t: 'batch', batch: packer.take() }).length;
});
console.log(
  `2. this thread's share per request: the whole line ${fmt(inlineLine)}; hash, pack and hand over ${fmt(handOver)}`,
);

// 3. Through the log, a burst: record() on the request path, then the CPU per record of draining
// them, on this thread (schedstat) and in all (every thread), for either writer.
/** This thread's CPU time, µs (Linux; falls back to the whole process's). */
const threadCpuUs = (): number => {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1000;
  } catch {
    return cpuUs();
  }
};
async function burst(
  thread: boolean,
): Promise<{ record: number; main: number; all: number; bytes: number; dropped: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'rg-log-bench-'));
  const log = createDecisionLog({
    dir,
    thread,
    maxQueued: results.length + 1,
    maxQueuedPairs: (results.length + 1) * K,
  });
  await warm(log);
  const t0 = performance.now();
  for (let i = 0; i < results.length; i++) log.record({ requestId: `r${i}`, model, result: results[i], serverMs: 1.5 });
  const record = ((performance.now() - t0) * 1000) / results.length;
  const m0 = threadCpuUs();
  const c0 = cpuUs();
  await log.close();
  const all = cpuUs() - c0;
  const main = threadCpuUs() - m0;
  const s = log.stats();
  rmSync(dir, { recursive: true, force: true });
  const n = Math.max(1, s.written - 1);
  return { record, main: main / n, all: all / n, bytes: s.bytes / n, dropped: s.dropped };
}
/** One record written: the writer thread has started and loaded its modules (not counted). */
async function warm(log: ReturnType<typeof createDecisionLog>): Promise<void> {
  log.record({ requestId: 'warm-up', model, result: results[0], serverMs: 1.5 });
  await log.flush();
}
for (const thread of [true, false]) {
  const rounds = [];
  for (let round = 0; round < 3; round++) rounds.push(await burst(thread));
  const b = rounds[rounds.length - 1];
  console.log(
    `3. ${thread ? 'writer thread' : 'inline       '}: record() ${b.record.toFixed(2)} µs on the request path; draining, per record: ` +
      `this thread ${fmt(median(rounds.map((x) => x.main)))}, all threads ${fmt(median(rounds.map((x) => x.all)))}; ` +
      `${Math.round(b.bytes)} bytes per line, ${((b.bytes * 1000) / 1024 / 1024).toFixed(2)} MiB per 1,000 requests` +
      (b.dropped > 0 ? ` (dropped ${b.dropped})` : ''),
  );
}

// 4. Paced at ~700 requests/s, as the overhead bench drives the server: the log on minus the same
// paced loop with it off, on this thread and in all.
async function paced(mode: 'off' | 'thread' | 'inline'): Promise<{ main: number; all: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'rg-log-bench-'));
  const log = mode === 'off' ? undefined : createDecisionLog({ dir, thread: mode === 'thread' });
  if (log !== undefined) await warm(log);
  const m0 = threadCpuUs();
  const c0 = cpuUs();
  for (let i = 0; i < PACED; i++) {
    log?.record({ requestId: `r${i}`, model, result: results[i % results.length], serverMs: 1.5 });
    if (i % 2 === 1) await sleep(3); // two requests per ~3 ms timer tick
  }
  await log?.close();
  const out = { main: (threadCpuUs() - m0) / PACED, all: (cpuUs() - c0) / PACED };
  rmSync(dir, { recursive: true, force: true });
  return out;
}
const deltas: Record<'thread' | 'inline', Array<{ main: number; all: number }>> = { thread: [], inline: [] };
for (let round = 0; round < 3; round++) {
  for (const mode of ['thread', 'inline'] as const) {
    const off = await paced('off');
    const on = await paced(mode);
    deltas[mode].push({ main: on.main - off.main, all: on.all - off.all });
  }
}
for (const mode of ['thread', 'inline'] as const) {
  const d = deltas[mode];
  console.log(
    `4. paced (~700/s, ${PACED} requests), ${mode === 'thread' ? 'writer thread' : 'inline       '}: log on minus off, per request: ` +
      `this thread ${fmt(median(d.map((x) => x.main)))}, all threads ${fmt(median(d.map((x) => x.all)))} ` +
      `(rounds, this thread: ${d.map((x) => x.main.toFixed(1)).join(', ')})`,
  );
}

// 5. The hand-over a worker would need without packing: a structured clone of the passage texts
// and the decided fields (serialized here, deserialized there; structuredClone does both).
const payloadOf = (r: GateResult) => ({
  query: r.query,
  items: itemsOf(r).map((i) => ({
    id: i.id,
    text: i.passage.text,
    route: i.route,
    rule: i.rule,
    tier: i.tier,
    relevance: i.relevance,
    score: i.score,
    signals: i.signals,
    raw: i.raw,
  })),
});
const clone = timePerRequest((r) => {
  sink += serialize(payloadOf(r)).length;
});
console.log(`5. serializing a request with its texts for a worker, unpacked: ${fmt(clone)} per request`);
if (sink === 0) console.log('');
