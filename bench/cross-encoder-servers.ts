/**
 * Server against server (docs/bench.md, "Server against server"): `relevance-gate serve` and
 * infinity (`infinity_emb v2`, PyPI `infinity-emb`, python/.venv-infinity) serving the same local
 * cross-encoder weights on this machine, both started and taking turns at each rate (the order
 * alternating from rate to rate; an idle server costs no CPU), driven by the same open-loop HTTP load as
 * `relevance-gate bench --url` (src/tooling/loadgen/http-bench.ts: Poisson arrivals, latency from
 * the scheduled send, HDR histograms), Cohere protocol (POST /v1/rerank) for both, at increasing
 * rates until the server saturates.
 *
 *   ours      relevance-gate serve --config <generated>: one cross-encoder model (ONNX folder),
 *             `workers` worker threads × 1 intra-op thread, no score cache (every pair is scored,
 *             as infinity scores every pair), admission `bounds` and a 30 s budget (nothing refused
 *             or cut: the same work as infinity; the budget-enforcing admission is another product)
 *   infinity  infinity_emb v2 --model-id <HF folder> --engine torch --device cpu (torch's default
 *             2 threads), --url-prefix /v1, batch size 32 (its default), no disk cache
 *
 * Per rate: offered / achieved requests/s, p50 / p90 / p99 / max from the scheduled send, errors,
 * and the server process's CPU time per request (/proc/PID/stat of the server and its children,
 * all threads, sampled at the end of the warm-up and at the end of the point, divided by the
 * measured requests). A server is not driven past the first rate whose p50 exceeds --stop-p50-ms.
 * Before timing, both answer the same k = 20 requests and their relevance scores are compared.
 *
 *   npx tsx bench/cross-encoder-servers.ts [--onnx-dir models/.cache/training/loco-scifact/model]
 *     [--hf models/.cache/training/loco-scifact/hf] [--collection ../shared/data/cranfield] [--k 20]
 *     [--rates 0.25,0.5,1,1.5,2,2.5,3] [--duration 30] [--warmup 3] [--workers 2]
 *     [--servers ours,infinity] [--stop-p50-ms 5000] [--json out.json] [--plot out.svg]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadHttpWorkload, runHttpPoints } from '../src/tooling/loadgen/http-bench.js';
import type { BenchPoint } from '../src/tooling/loadgen/report.js';
import { packageRoot } from '../src/util/package-root.js';

const ROOT = packageRoot();
const { values: args } = parseArgs({
  options: {
    'onnx-dir': { type: 'string', default: 'models/.cache/training/loco-scifact/model' },
    hf: { type: 'string', default: 'models/.cache/training/loco-scifact/hf' },
    collection: { type: 'string', default: '../shared/data/cranfield' },
    k: { type: 'string', default: '20' },
    rates: { type: 'string', default: '0.25,0.5,1,1.5,2,2.5,3' },
    duration: { type: 'string', default: '30' },
    warmup: { type: 'string', default: '3' },
    workers: { type: 'string', default: '2' },
    servers: { type: 'string', default: 'ours,infinity' },
    'stop-p50-ms': { type: 'string', default: '5000' },
    'infinity-batch-size': { type: 'string', default: '32' },
    json: { type: 'string' },
    plot: { type: 'string' },
  },
});
const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ONNX_DIR = resolve(ROOT, args['onnx-dir']!);
const HF_DIR = resolve(ROOT, args.hf!);
const K = Number(args.k);
const RATES = list(args.rates!).map(Number);
const TICK = 100; // USER_HZ on Linux

/** CPU seconds (user + system, all threads) of a process and its descendants, from /proc. */
function treeCpuSec(pid: number): number {
  const stat = (p: number): { ppid: number; cpu: number } | null => {
    try {
      const s = readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      // fields after the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14)
      return { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICK };
    } catch {
      return null;
    }
  };
  const all = new Map<number, { ppid: number; cpu: number }>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const s = stat(Number(d));
    if (s) all.set(Number(d), s);
  }
  let total = 0;
  const stack = [pid];
  while (stack.length > 0) {
    const p = stack.pop()!;
    total += all.get(p)?.cpu ?? 0;
    for (const [child, s] of all) if (s.ppid === p) stack.push(child);
  }
  return total;
}

interface Server {
  name: string;
  url: string;
  model: string;
  proc: ChildProcess;
  version: string;
  config: string;
}

async function waitReady(url: string, proc: ChildProcess, what: string, timeoutMs = 300_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (proc.exitCode !== null) throw new Error(`${what} exited with ${proc.exitCode} before it was ready`);
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      /* not listening yet */
    }
    await sleep(500);
  }
  throw new Error(`${what} not ready after ${timeoutMs} ms`);
}

function version(file: string): string {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

async function startOurs(): Promise<Server> {
  const work = mkdtempSync(join(tmpdir(), 'rg-server-peers-'));
  const config = {
    host: '127.0.0.1',
    port: 18080,
    defaultModel: 'ce',
    budgetMs: 60000,
    logLevel: 'warn',
    cache: { enabled: false },
    admission: { predictive: false },
    models: { ce: { type: 'cross-encoder', dir: ONNX_DIR, workers: Number(args.workers) } },
  };
  const file = join(work, 'config.json');
  writeFileSync(file, JSON.stringify(config, null, 2));
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), 'serve', '--config', file],
    {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  await waitReady('http://127.0.0.1:18080/health/ready', proc, 'relevance-gate serve');
  return {
    name: 'ours',
    url: 'http://127.0.0.1:18080',
    model: 'ce',
    proc,
    version: `relevance-gate ${version(join(ROOT, 'package.json'))} (onnxruntime-node ${version(join(ROOT, 'node_modules', 'onnxruntime-node', 'package.json'))}), ${args.workers} workers × 1 thread, no cache, admission bounds`,
    config: JSON.stringify(config),
  };
}

async function startInfinity(): Promise<Server> {
  const bin = join(ROOT, 'python', '.venv-infinity', 'bin', 'infinity_emb');
  if (!existsSync(bin)) throw new Error(`${bin} missing: bash python/setup-venv.sh --infinity`);
  const argv = [
    'v2',
    '--model-id',
    HF_DIR,
    '--served-model-name',
    'ce',
    '--engine',
    'torch',
    '--device',
    'cpu',
    '--batch-size',
    args['infinity-batch-size']!,
    '--port',
    '17997',
    '--host',
    '127.0.0.1',
    '--url-prefix',
    '/v1',
    '--no-vector-disk-cache',
    '--no-model-warmup',
  ];
  const proc = spawn(bin, argv, {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      HF_HUB_OFFLINE: '1',
      TRANSFORMERS_OFFLINE: '1',
      INFINITY_ANONYMOUS_USAGE_STATS: '0',
      DO_NOT_TRACK: '1',
      INFINITY_LOG_LEVEL: 'warning',
    },
  });
  await waitReady('http://127.0.0.1:17997/health', proc, 'infinity');
  const py = join(ROOT, 'python', '.venv-infinity', 'lib');
  const site = readdirSync(py).find((d) => d.startsWith('python3'));
  const dist = (name: string) => {
    const d = site
      ? readdirSync(join(py, site, 'site-packages')).find(
          (x) => x.toLowerCase().startsWith(`${name}-`) && x.endsWith('.dist-info'),
        )
      : undefined;
    return d ? d.slice(name.length + 1, -'.dist-info'.length) : '?';
  };
  return {
    name: 'infinity',
    url: 'http://127.0.0.1:17997',
    model: 'ce',
    proc,
    version: `infinity-emb ${dist('infinity_emb')} (torch ${dist('torch')}, sentence-transformers ${dist('sentence_transformers')}), batch size ${args['infinity-batch-size']}`,
    config: `infinity_emb ${argv.join(' ')}`,
  };
}

async function stop(server: Server): Promise<void> {
  if (server.proc.exitCode !== null) return;
  await new Promise<void>((res) => {
    server.proc.once('exit', () => res());
    server.proc.kill('SIGTERM');
    setTimeout(() => {
      if (server.proc.exitCode === null) server.proc.kill('SIGKILL');
    }, 20_000).unref();
  });
}

async function rerank(server: Server, query: string, documents: string[]): Promise<number[]> {
  const r = await fetch(`${server.url}/v1/rerank`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: server.model, query, documents }),
  });
  if (!r.ok) throw new Error(`${server.name} /v1/rerank: ${r.status} ${await r.text()}`);
  const body = (await r.json()) as { results: { index: number; relevance_score: number }[] };
  const out = new Array<number>(documents.length).fill(Number.NaN);
  for (const x of body.results) out[x.index] = x.relevance_score;
  return out;
}

interface Row extends Pick<BenchPoint, 'offeredQps' | 'achievedQps' | 'errors' | 'refused' | 'requests'> {
  server: string;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  cpuMsPerRequest: number;
  pairsPerSec: number;
  loadStart: string;
  loadEnd: string;
}

async function main(): Promise<void> {
  console.log(
    `server peers: ${cpus()[0]?.model ?? '?'} × ${availableParallelism()}, node ${process.version}, load average ${load()}\n  onnx ${ONNX_DIR}\n  hf   ${HF_DIR}`,
  );
  const httpOptions = {
    collection: resolve(ROOT, args.collection!),
    k: K,
    qps: RATES,
    durationSec: Number(args.duration),
    warmupSec: Number(args.warmup),
    // Far above any latency here and below the server's limits.maxBudgetMs (60 s): the generator's
    // x-budget-ms (deadline − now) can exceed the budget by a fraction of a ms, which a server
    // configured at exactly its limit refuses (400).
    budgetMs: 30_000,
    seed: 1,
    log: (line: string) => console.log(`    ${line}`),
  };
  const { workload, collectionName } = loadHttpWorkload(httpOptions);
  // The same k = 20 requests to both, for the score check and the warm-up.
  const check = workload.queries.slice(0, 4);
  const rows: Row[] = [];
  const servers: Record<string, { version: string; config: string; scores?: number[][] }> = {};
  const measure = async (name: string, server: Server, qps: number): Promise<Row> => {
    const loadStart = load();
    let cpuStart = treeCpuSec(server.proc.pid!);
    const timer = setTimeout(() => {
      cpuStart = treeCpuSec(server.proc.pid!);
    }, httpOptions.warmupSec * 1000);
    const [point] = await runHttpPoints({ ...httpOptions, qps: [qps] }, workload, [
      { label: name, url: server.url, protocol: 'cohere', model: server.model, scrapeMetrics: name === 'ours' },
    ]);
    clearTimeout(timer);
    const cpu = treeCpuSec(server.proc.pid!) - cpuStart;
    const row: Row = {
      server: name,
      offeredQps: point.offeredQps,
      achievedQps: point.achievedQps,
      requests: point.requests,
      errors: point.errors,
      refused: point.refused,
      p50: point.latencyMs.p50,
      p90: point.latencyMs.p90,
      p99: point.latencyMs.p99,
      max: point.latencyMs.max,
      cpuMsPerRequest: (cpu * 1000) / Math.max(1, point.requests),
      pairsPerSec: point.achievedQps * K,
      loadStart,
      loadEnd: load(),
    };
    console.log(
      `  ${name} @ ${qps} rps: achieved ${row.achievedQps.toFixed(2)}, p50 ${row.p50.toFixed(0)} p99 ${row.p99.toFixed(0)} max ${row.max.toFixed(0)} ms, errors ${row.errors}, refused ${row.refused}, CPU ${row.cpuMsPerRequest.toFixed(0)} ms/request, load ${row.loadStart} → ${row.loadEnd}`,
    );
    return row;
  };
  // Both servers are started (an idle one costs no CPU) and take turns at each rate, the order
  // alternating from rate to rate, so a neighbour's burst on the shared host hits both alike.
  const names = list(args.servers!);
  const started: Record<string, Server> = {};
  try {
    for (const name of names) {
      console.log(`\n== ${name} (load average ${load()})`);
      const server = name === 'ours' ? await startOurs() : name === 'infinity' ? await startInfinity() : null;
      if (!server) throw new Error(`unknown server ${name}`);
      started[name] = server;
      console.log(`  ${server.version}`);
      const scores: number[][] = [];
      for (const r of check) {
        const texts = r.passages.map((p) =>
          p.title === undefined || p.title === '' ? p.text : `${p.title} ${p.text}`,
        );
        scores.push(await rerank(server, r.text, texts));
      }
      for (let i = 0; i < 6; i++) {
        const r = workload.queries[10 + i];
        await rerank(
          server,
          r.text,
          r.passages.map((p) => p.text),
        );
      }
      servers[name] = { version: server.version, config: server.config, scores };
    }
    const saturated = new Set<string>();
    for (const [i, qps] of RATES.entries()) {
      const order = i % 2 === 0 ? names : [...names].reverse();
      for (const name of order) {
        if (saturated.has(name)) continue;
        const row = await measure(name, started[name], qps);
        rows.push(row);
        if (row.p50 > Number(args['stop-p50-ms'])) {
          console.log(`  ${name}: p50 above ${args['stop-p50-ms']} ms: saturated, higher rates skipped`);
          saturated.add(name);
        }
      }
      if (saturated.size === names.length) break;
    }
  } finally {
    for (const server of Object.values(started)) await stop(server);
  }
  // Score check: the same requests' relevance scores from both servers.
  let scoreDiff: number | null = null;
  if (names.length === 2 && servers[names[0]].scores && servers[names[1]].scores) {
    const a = servers[names[0]].scores!.flat();
    const b = servers[names[1]].scores!.flat();
    scoreDiff = Math.max(...a.map((x, i) => Math.abs(x - b[i])));
    console.log(
      `\nscore check on ${a.length} pairs: max |Δ relevance_score| ${names[0]} vs ${names[1]} = ${scoreDiff.toExponential(2)}`,
    );
  }
  printTable(rows);
  const report = {
    createdAt: new Date().toISOString(),
    machine: { cpus: availableParallelism(), model: cpus()[0]?.model, loadavgEnd: loadavg() },
    workload: {
      collection: collectionName,
      k: K,
      durationSec: httpOptions.durationSec,
      warmupSec: httpOptions.warmupSec,
    },
    servers,
    scoreDiff,
    rows,
  };
  if (args.json) writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`);
  if (args.plot)
    writeFileSync(
      args.plot,
      plot(
        rows,
        `${collectionName}, k = ${K}, Cohere /v1/rerank, open loop: ${ONNX_DIR.split('/').slice(-2).join('/')}`,
      ),
    );
  console.log(`load average at the end: ${load()}`);
}

function printTable(rows: Row[]): void {
  console.log(
    '\n| server | offered rps | achieved rps | pairs/s | p50 ms | p90 ms | p99 ms | max ms | errors | CPU ms/request | load start → end |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const r of rows) {
    console.log(
      `| ${r.server} | ${r.offeredQps} | ${r.achievedQps.toFixed(2)} | ${r.pairsPerSec.toFixed(1)} | ${r.p50.toFixed(0)} | ${r.p90.toFixed(0)} | ${r.p99.toFixed(0)} | ${r.max.toFixed(0)} | ${r.errors} | ${r.cpuMsPerRequest.toFixed(0)} | ${r.loadStart} → ${r.loadEnd} |`,
    );
  }
}

/** p50 and p99 against offered requests/s, one colour per server, log latency axis. */
function plot(rows: Row[], title: string): string {
  const W = 760;
  const H = 440;
  const L = 70;
  const R = 170;
  const T = 40;
  const B = 50;
  const servers = [...new Set(rows.map((r) => r.server))];
  const xs = rows.map((r) => r.offeredQps);
  const ys = rows.flatMap((r) => [r.p50, r.p99]).filter((v) => v > 0);
  const yLo = Math.floor(Math.log10(Math.min(...ys)));
  const yHi = Math.ceil(Math.log10(Math.max(...ys)));
  const xHi = Math.max(...xs) * 1.05;
  const x = (v: number) => L + (v / xHi) * (W - L - R);
  const y = (v: number) => T + (1 - (Math.log10(v) - yLo) / (yHi - yLo || 1)) * (H - T - B);
  const colors = ['#d62728', '#1f77b4', '#2ca02c'];
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${L}" y="22" font-size="14">${title}</text>`,
  ];
  for (let e = yLo; e <= yHi; e++) {
    parts.push(
      `<line x1="${L}" x2="${W - R}" y1="${y(10 ** e)}" y2="${y(10 ** e)}" stroke="#ddd"/>`,
      `<text x="${L - 8}" y="${y(10 ** e) + 4}" text-anchor="end">${10 ** e}</text>`,
    );
  }
  if (100 >= 10 ** yLo && 100 <= 10 ** yHi)
    parts.push(`<line x1="${L}" x2="${W - R}" y1="${y(100)}" y2="${y(100)}" stroke="#999" stroke-dasharray="4 3"/>`);
  for (const v of [...new Set(xs)].sort((a, b) => a - b)) {
    parts.push(`<text x="${x(v)}" y="${H - B + 18}" text-anchor="middle">${v}</text>`);
  }
  parts.push(
    `<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle">offered requests/s (k = 20 passages each)</text>`,
    `<text transform="translate(18 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">latency from the scheduled send, ms (log)</text>`,
  );
  servers.forEach((s, i) => {
    const rs = rows.filter((r) => r.server === s).sort((a, b) => a.offeredQps - b.offeredQps);
    const color = colors[i % colors.length];
    for (const [key, dash] of [
      ['p50', ''],
      ['p99', ' stroke-dasharray="6 3"'],
    ] as const) {
      const pts = rs.map((r) => `${x(r.offeredQps).toFixed(1)},${y(r[key]).toFixed(1)}`).join(' ');
      parts.push(`<polyline points="${pts}" fill="none" stroke="${color}" stroke-width="2"${dash}/>`);
      for (const r of rs)
        parts.push(`<circle cx="${x(r.offeredQps).toFixed(1)}" cy="${y(r[key]).toFixed(1)}" r="3" fill="${color}"/>`);
    }
    const ly = T + 10 + i * 40;
    parts.push(
      `<line x1="${W - R + 15}" x2="${W - R + 40}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"/>`,
      `<text x="${W - R + 46}" y="${ly + 4}">${s} p50</text>`,
      `<line x1="${W - R + 15}" x2="${W - R + 40}" y1="${ly + 18}" y2="${ly + 18}" stroke="${color}" stroke-width="2" stroke-dasharray="6 3"/>`,
      `<text x="${W - R + 46}" y="${ly + 22}">${s} p99</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

await main();
