/**
 * `bench/cross-encoder.ts --peers DIR`: the cross-encoder tier against the engines users would pick
 * instead, on REAL weights, side by side in one run (docs/bench.md, "Cross-encoder tier against its
 * peers"). DIR is what `python/bench_cross_encoder_peers.py make DIR` wrote (the transformers
 * checkpoint of the MiniLM-L6 cross-encoder folder, FlashRank's cache layout, meta.json).
 *
 * Engines, per model (every one runs the same weights: parity is checked before timing):
 *   ours-fp32 / ours-int8  createCrossEncoder({ modelDir }) on onnx/model.onnx / model_int8.onnx, the
 *                          tier's defaults (2 workers × 1 intra-op thread here), worker nice 0 (the
 *                          Python peers run at the process's priority too)
 *   st                     sentence-transformers CrossEncoder.predict, torch 2 threads:
 *                          per request (one predict of the k pairs) and batched (one predict over
 *                          the pairs of 32 requests, ST sorting them by length), batch sizes tuned
 *   ort                    a straight onnxruntime (Python) loop over the same onnx/model.onnx, 2
 *                          intra-op threads: per request, and batched (32 requests' pairs tokenized
 *                          together, sorted by length, run in tuned batches)
 *   flashrank(-int8)       FlashRank's Ranker.rerank on a local folder holding the same ONNX file
 * Workloads: 32 concurrent × 20 real Cranfield passages (pairs/s: ours as a closed loop of 32
 * callers; each Python engine as it would serve that load, i.e. batched or one request after the
 * other) and one k = 20 request at a time (p50 / p99 over every call of every round).
 * Engines are rotated across rounds; the load average is printed at the start and end of each round.
 *
 * `--single`: where one k = 20 request's time goes (tier configurations workers × intra-op threads,
 * fp32 / int8; a bare onnxruntime-node session at each graph optimisation level and thread count;
 * tokenization alone; an onnxruntime profile by operator type).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import * as ort from 'onnxruntime-node';
import { Tokenizer } from 'tokenizers';
import { createCrossEncoder, type CrossEncoder } from '../src/tiers/cross-encoder/cross-encoder.js';
import { packageRoot } from '../src/util/package-root.js';
import { realRequests } from '../test/cross-encoder/data.js';
import { closedLoop, int64Batch, percentile, readPadTokenId, type Request } from './cross-encoder-lib.js';

export interface PeersOptions {
  dir: string;
  models: string[];
  rounds: number;
  /** Seconds of the closed loop of 32 callers (ours). */
  throughputSec: number;
  /** Seconds of one-request-at-a-time calls per engine per round. */
  latencySec: number;
  /** Requests per batched Python call (32 × 20 pairs). */
  batchedRequests: number;
  parityRequests: number;
  /** Requests per batch size tried when tuning the Python peers' batch sizes. */
  tuneRequests: number;
  engines: string[];
  single: boolean;
  singleOnly: boolean;
  /** Seconds per tier configuration per round in the single-request study. */
  singleSeconds: number;
  json?: string;
  plot?: string;
}

const ROOT = packageRoot();
const PY = join(ROOT, 'python', '.venv', 'bin', 'python');
const PY_SCRIPT = join(ROOT, 'python', 'bench_cross_encoder_peers.py');
const K = 20;
const CONCURRENCY = 32;

const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0
    ? Number.NaN
    : s.length % 2
      ? s[(s.length - 1) / 2]
      : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

interface BenchModel {
  name: string;
  onnxDir: string;
  hf: string;
  maxLength: number;
  label: string;
}

function modelLimit(dir: string): number {
  const read = (f: string): Record<string, unknown> => {
    try {
      return JSON.parse(readFileSync(join(dir, f), 'utf8')) as Record<string, unknown>;
    } catch {
      return {};
    }
  };
  const limits = [
    512,
    read('config.json').max_position_embeddings,
    read('tokenizer_config.json').model_max_length,
  ].filter((x): x is number => typeof x === 'number' && x > 0 && x < 1e6);
  return Math.min(...limits);
}

function benchModels(dir: string, names: string[]): BenchModel[] {
  const metaPath = join(dir, 'meta.json');
  if (!existsSync(metaPath))
    throw new Error(`${metaPath} missing: run python/.venv/bin/python python/bench_cross_encoder_peers.py make ${dir}`);
  const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as {
    models: Record<string, { onnxDir: string; hf: string }>;
  };
  return names.map((name) => {
    const m = meta.models[name];
    if (!m) throw new Error(`model ${name} not in ${metaPath} (has ${Object.keys(meta.models).join(', ')})`);
    const maxLength = modelLimit(m.onnxDir);
    const label =
      name === 'minilm-cross'
        ? `MiniLM-L6 (all-MiniLM-L6-v2 encoder + seeded head), max length ${maxLength}`
        : `trained MiniLM-L6 cross-encoder (loco-scifact), max length ${maxLength}`;
    return { name, onnxDir: m.onnxDir, hf: m.hf, maxLength, label };
  });
}

/** The Python peers process: one JSON command per line in, one JSON answer per line out. */
class PythonPeers {
  private readonly proc: ChildProcessWithoutNullStreams;
  private readonly waiting: Array<(v: Record<string, unknown>) => void> = [];
  private readonly lines: Array<Record<string, unknown>> = [];
  private exited: Error | null = null;

  constructor(model: BenchModel, dir: string, requestsFile: string) {
    this.proc = spawn(
      PY,
      [
        PY_SCRIPT,
        'serve',
        '--requests',
        requestsFile,
        '--model',
        model.name,
        '--hf',
        model.hf,
        '--onnx-dir',
        model.onnxDir,
        '--flashrank-root',
        join(dir, 'flashrank'),
        '--max-length',
        String(model.maxLength),
        '--threads',
        '2',
      ],
      { env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', TQDM_DISABLE: '1' } },
    );
    this.proc.stderr.on('data', (d: Buffer) => {
      const text = d.toString();
      if (!/Loading weights|it\/s\]/.test(text)) process.stderr.write(`[py] ${text}`);
    });
    this.proc.once('exit', (code) => {
      this.exited = new Error(`python peers exited with ${String(code)}`);
      for (const w of this.waiting.splice(0)) w({ error: this.exited.message });
    });
    createInterface({ input: this.proc.stdout }).on('line', (line) => {
      let obj: Record<string, unknown>;
      try {
        obj = JSON.parse(line) as Record<string, unknown>;
      } catch {
        process.stderr.write(`[py stdout] ${line}\n`);
        return;
      }
      const w = this.waiting.shift();
      if (w) w(obj);
      else this.lines.push(obj);
    });
  }

  private next(): Promise<Record<string, unknown>> {
    const l = this.lines.shift();
    if (l) return Promise.resolve(l);
    if (this.exited) return Promise.resolve({ error: this.exited.message });
    return new Promise((res) => this.waiting.push(res));
  }

  async ready(): Promise<void> {
    const first = await this.next();
    if (typeof first.error === 'string') throw new Error(first.error);
  }

  async cmd<T = Record<string, unknown>>(obj: Record<string, unknown>): Promise<T> {
    this.proc.stdin.write(`${JSON.stringify(obj)}\n`);
    const answer = await this.next();
    if (typeof answer.error === 'string') throw new Error(`python peers: ${answer.error}\n${String(answer.trace)}`);
    return answer as T;
  }

  async close(): Promise<void> {
    try {
      await this.cmd({ cmd: 'quit' });
    } catch {
      /* already gone */
    }
  }
}

interface PyTiming {
  latenciesMs?: number[];
  pairs: number;
  elapsedMs: number;
  pairsPerSec: number;
  cpuMsPerPair: number;
  next: number;
}

interface Cell {
  model: string;
  engine: string;
  workload: 'throughput' | 'latency';
  round: number;
  pairsPerSec: number;
  latenciesMs: number[];
  cpuMsPerPair: number;
  note: string;
  loadStart: string;
  loadEnd: string;
}

async function latencyLoop(ce: CrossEncoder, requests: Request[], start: number, seconds: number, minCalls = 3) {
  const lat: number[] = [];
  let pairs = 0;
  let i = start;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  while (performance.now() < end || lat.length < minCalls) {
    const r = requests[i++ % requests.length];
    const t1 = performance.now();
    await ce.score(r.query, r.passages);
    lat.push(performance.now() - t1);
    pairs += r.passages.length;
  }
  const elapsed = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return {
    latenciesMs: lat,
    pairsPerSec: (pairs / elapsed) * 1000,
    cpuMsPerPair: (cpu.user + cpu.system) / 1000 / pairs,
  };
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length mismatch ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

async function oursScores(ce: CrossEncoder, requests: Request[], count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const r = await ce.score(requests[i].query, requests[i].passages);
    out.push(...r.logits);
  }
  return out;
}

function versions(): Record<string, string> {
  const pkg = (name: string): string => {
    try {
      return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
        .version;
    } catch {
      return '?';
    }
  };
  return { node: process.version, 'onnxruntime-node': pkg('onnxruntime-node'), tokenizers: pkg('tokenizers') };
}

export async function runPeers(opts: PeersOptions): Promise<void> {
  const dir = resolve(opts.dir);
  const models = benchModels(dir, opts.models);
  const requests = realRequests(120, K, ['cranfield']);
  const requestsFile = join(dir, 'requests.json');
  writeFileSync(requestsFile, JSON.stringify(requests));
  console.log(
    `cross-encoder peers: ${cpus()[0]?.model ?? '?'} × ${availableParallelism()}, ${JSON.stringify(versions())}, load average ${load()}`,
  );
  const report: Record<string, unknown> = {
    createdAt: new Date().toISOString(),
    machine: { cpus: availableParallelism(), model: cpus()[0]?.model, loadavgStart: loadavg() },
    versions: versions(),
    options: { ...opts },
    models: [] as unknown[],
  };
  const allCells: Cell[] = [];
  for (const model of opts.singleOnly ? [] : models) {
    console.log(`\n== ${model.label}\n   onnx ${model.onnxDir}\n   hf   ${model.hf}`);
    const py = new PythonPeers(model, dir, requestsFile);
    await py.ready();
    const modelReport: Record<string, unknown> = { name: model.name, label: model.label, maxLength: model.maxLength };
    const open = (variant?: string) =>
      createCrossEncoder({
        modelDir: model.onnxDir,
        ...(variant ? { variant } : {}),
        maxLength: model.maxLength,
        maxPendingPairs: 100_000,
        workerNice: 0,
      });
    const ours: Record<string, CrossEncoder> = { 'ours-fp32': await open(), 'ours-int8': await open('int8') };
    try {
      const pyEngines = opts.engines.filter((e) => !e.startsWith('ours'));
      const info: Record<string, unknown> = {
        'ours-fp32': { ...ours['ours-fp32'].info, tokenizerPath: undefined },
      };
      for (const e of pyEngines) {
        const r = await py.cmd<{ loadedMs: number; info: unknown }>({ cmd: 'load', engine: e });
        info[e] = r.info;
        console.log(`  loaded ${e} (${r.loadedMs.toFixed(0)} ms): ${JSON.stringify(r.info)}`);
      }
      modelReport.engines = info;

      // ---- parity: every engine's scores on the same pairs, before any timing
      const idx = Array.from({ length: opts.parityRequests }, (_, i) => i);
      const fp32 = await oursScores(ours['ours-fp32'], requests, opts.parityRequests);
      const int8 = await oursScores(ours['ours-int8'], requests, opts.parityRequests);
      const parity: Record<string, unknown> = {
        pairs: fp32.length,
        'ours-int8 vs ours-fp32 (logit)': maxAbsDiff(int8, fp32),
      };
      for (const e of pyEngines) {
        const { scores } = await py.cmd<{ scores: number[] }>({ cmd: 'scores', engine: e, requests: idx });
        const ref = e.endsWith('int8') ? int8 : fp32;
        if (e.startsWith('flashrank')) {
          // FlashRank returns sigmoid probabilities only.
          parity[`${e} vs ours-${e.endsWith('int8') ? 'int8' : 'fp32'} (probability)`] = maxAbsDiff(
            scores,
            ref.map(sigmoid),
          );
        } else {
          parity[`${e} vs ours-${e.endsWith('int8') ? 'int8' : 'fp32'} (logit)`] = maxAbsDiff(scores, ref);
        }
      }
      const range = Math.max(...fp32) - Math.min(...fp32);
      parity['ours-fp32 logit range'] = range;
      console.log(`  parity on ${fp32.length} pairs (max |Δ|): ${JSON.stringify(parity)}`);
      for (const [key, v] of Object.entries(parity)) {
        if (typeof v === 'number' && /^(st|ort|flashrank) vs/.test(key) && v > 1e-3)
          throw new Error(`${key}: max |Δ| ${v} > 1e-3: the engines do not run the same weights`);
      }
      modelReport.parity = parity;

      // ---- batch size tuning of the Python peers (--tune-requests requests per size for batched,
      //      half as many for one request at a time)
      const tuned: Record<string, { batched: number; perRequest: number; search: Record<string, number> }> = {};
      for (const e of pyEngines.filter((x) => x === 'st' || x === 'ort')) {
        const search: Record<string, number> = {};
        let best = { size: 32, pps: 0 };
        for (const size of [8, 16, 32, 64]) {
          const r = await py.cmd<PyTiming>({
            cmd: 'batched',
            engine: e,
            start: 40,
            count: opts.tuneRequests,
            batch_size: size,
          });
          search[`batched:${size}`] = r.pairsPerSec;
          if (r.pairsPerSec > best.pps) best = { size, pps: r.pairsPerSec };
        }
        let bestPr = { size: K, pps: 0 };
        for (const size of [5, 10, 20]) {
          const r = await py.cmd<PyTiming>({
            cmd: 'per_request',
            engine: e,
            start: 60,
            seconds: 0,
            min_calls: Math.max(1, opts.tuneRequests / 2),
            batch_size: size,
          });
          search[`per-request:${size}`] = r.pairsPerSec;
          if (r.pairsPerSec > bestPr.pps) bestPr = { size, pps: r.pairsPerSec };
        }
        tuned[e] = { batched: best.size, perRequest: bestPr.size, search };
        console.log(`  ${e} batch sizes: batched ${best.size}, per request ${bestPr.size} (${JSON.stringify(search)})`);
      }
      modelReport.tuned = tuned;

      // ---- timed rounds, engines rotated
      type Job = {
        engine: string;
        workload: 'throughput' | 'latency';
        run: (round: number) => Promise<Omit<Cell, 'model' | 'round' | 'loadStart' | 'loadEnd'>>;
      };
      const jobs: Job[] = [];
      for (const e of opts.engines) {
        if (e.startsWith('ours')) {
          const ce = ours[e];
          if (!ce) throw new Error(`unknown engine ${e}`);
          jobs.push({
            engine: e,
            workload: 'throughput',
            run: async () => {
              const before = ce.stats();
              const r = await closedLoop(
                requests,
                CONCURRENCY,
                (q) => ce.score(q.query, q.passages),
                opts.throughputSec * 1000,
                0,
              );
              const s = ce.stats();
              const batches = s.batchesRun - before.batchesRun;
              return {
                engine: e,
                workload: 'throughput',
                pairsPerSec: r.pairsPerSec,
                latenciesMs: [],
                cpuMsPerPair: r.cpuMsPerPair,
                note: `closed loop of ${CONCURRENCY}; ${ce.info.workers}×${ce.info.intraOpThreads} threads, mean batch ${((s.pairsRun - before.pairsRun) / Math.max(1, batches)).toFixed(1)}, padding ${((1 - (s.tokensRun - before.tokensRun) / Math.max(1, s.paddedTokensRun - before.paddedTokensRun)) * 100).toFixed(1)} %`,
              };
            },
          });
          jobs.push({
            engine: e,
            workload: 'latency',
            run: async (round) => {
              const r = await latencyLoop(ce, requests, (round * 40) % requests.length, opts.latencySec);
              return { engine: e, workload: 'latency', ...r, note: 'one k = 20 request at a time' };
            },
          });
        } else {
          const hasBatched = e === 'st' || e === 'ort';
          const bsPr = tuned[e]?.perRequest ?? K;
          if (hasBatched) {
            jobs.push({
              engine: `${e}-batched`,
              workload: 'throughput',
              run: async (round) => {
                const r = await py.cmd<PyTiming>({
                  cmd: 'batched',
                  engine: e,
                  start: (round * opts.batchedRequests) % requests.length,
                  count: opts.batchedRequests,
                  batch_size: tuned[e].batched,
                });
                return {
                  engine: `${e}-batched`,
                  workload: 'throughput',
                  pairsPerSec: r.pairsPerSec,
                  latenciesMs: [r.elapsedMs],
                  cpuMsPerPair: r.cpuMsPerPair,
                  note: `one call over ${opts.batchedRequests} requests (${r.pairs} pairs), batch size ${tuned[e].batched}`,
                };
              },
            });
          }
          jobs.push({
            engine: e,
            workload: 'latency',
            run: async (round) => {
              const r = await py.cmd<PyTiming>({
                cmd: 'per_request',
                engine: e,
                start: (round * 40) % requests.length,
                seconds: opts.latencySec,
                batch_size: bsPr,
              });
              return {
                engine: e,
                workload: 'latency',
                pairsPerSec: r.pairsPerSec,
                latenciesMs: r.latenciesMs ?? [],
                cpuMsPerPair: r.cpuMsPerPair,
                note: `one call per k = 20 request${hasBatched ? `, batch size ${bsPr}` : ''}`,
              };
            },
          });
        }
      }
      // Warm our pools (the parity pass loaded them; one short closed loop each settles the workers).
      for (const ce of Object.values(ours))
        await closedLoop(requests, 8, (q) => ce.score(q.query, q.passages), 1000, 0);
      for (let round = 0; round < opts.rounds; round++) {
        const order = jobs.map((_, i) => jobs[(i + round * 3) % jobs.length]);
        console.log(`  round ${round + 1}/${opts.rounds} (load average ${load()})`);
        for (const job of order) {
          const loadStart = load();
          const cell = await job.run(round);
          const c: Cell = { ...cell, model: model.name, round, loadStart, loadEnd: load() };
          allCells.push(c);
          const lat = [...c.latenciesMs].sort((a, b) => a - b);
          console.log(
            `    ${job.engine.padEnd(16)} ${job.workload.padEnd(10)} ${c.pairsPerSec.toFixed(1).padStart(6)} pairs/s` +
              (job.workload === 'latency' ? `  p50 ${percentile(lat, 50).toFixed(0)} ms  n=${lat.length}` : '') +
              `  CPU ${c.cpuMsPerPair.toFixed(1)} ms/pair  load ${c.loadStart} → ${c.loadEnd}  (${c.note})`,
          );
        }
      }
    } finally {
      await py.close();
      for (const ce of Object.values(ours)) await ce.close();
    }
    (report.models as unknown[]).push(modelReport);
  }

  const summary = summarize(allCells);
  if (summary.length > 0) printSummary(summary);
  report.cells = allCells;
  report.summary = summary;

  if (opts.single) {
    const single: unknown[] = [];
    for (const m of models) single.push(await singleRequestStudy(m, requests, dir, opts.rounds, opts.singleSeconds));
    report.single = single;
  }
  report.loadavgEnd = loadavg();
  console.log(`\nload average at the end: ${load()}`);
  if (opts.json) writeFileSync(opts.json, `${JSON.stringify(report, null, 2)}\n`);
  if (opts.plot && summary.length > 0) writeFileSync(opts.plot, peersPlot(summary));
}

interface SummaryRow {
  model: string;
  engine: string;
  /** Median over rounds of the throughput cell (or of the one-at-a-time cell where the engine has no batched form). */
  pairsPerSec: number;
  throughputFrom: 'closed loop of 32' | 'batched call' | 'one request at a time';
  p50Ms: number;
  p99Ms: number;
  latencyCalls: number;
  cpuMsPerPair: number;
}

function summarize(cells: Cell[]): SummaryRow[] {
  const rows: SummaryRow[] = [];
  const models = [...new Set(cells.map((c) => c.model))];
  for (const model of models) {
    const engines = [...new Set(cells.filter((c) => c.model === model).map((c) => c.engine.replace(/-batched$/, '')))];
    for (const engine of engines) {
      const thr = cells.filter(
        (c) => c.model === model && c.workload === 'throughput' && c.engine.replace(/-batched$/, '') === engine,
      );
      const lat = cells.filter((c) => c.model === model && c.workload === 'latency' && c.engine === engine);
      const pooled = lat.flatMap((c) => c.latenciesMs).sort((a, b) => a - b);
      const src = thr.length > 0 ? thr : lat;
      rows.push({
        model,
        engine,
        pairsPerSec: median(src.map((c) => c.pairsPerSec)),
        throughputFrom:
          thr.length === 0 ? 'one request at a time' : engine.startsWith('ours') ? 'closed loop of 32' : 'batched call',
        p50Ms: percentile(pooled, 50),
        p99Ms: percentile(pooled, 99),
        latencyCalls: pooled.length,
        cpuMsPerPair: median(src.map((c) => c.cpuMsPerPair)),
      });
    }
  }
  return rows;
}

function printSummary(rows: SummaryRow[]): void {
  for (const model of new Set(rows.map((r) => r.model))) {
    const rs = rows.filter((r) => r.model === model);
    const ours = rs.find((r) => r.engine === 'ours-fp32');
    console.log(
      `\n${model}: 32 concurrent × 20 (pairs/s, median of rounds) and one k = 20 request (latency over all calls)`,
    );
    console.log(
      '| engine | pairs/s (32 × 20) | how | ours-fp32 / it | k = 20 p50 ms | p99 ms | calls | it / ours-fp32 p50 | CPU ms/pair |',
    );
    console.log('|---|---:|---|---:|---:|---:|---:|---:|---:|');
    for (const r of rs) {
      console.log(
        `| ${r.engine} | ${r.pairsPerSec.toFixed(1)} | ${r.throughputFrom} | ${ours ? (ours.pairsPerSec / r.pairsPerSec).toFixed(2) : '-'}× | ${r.p50Ms.toFixed(0)} | ${r.p99Ms.toFixed(0)} | ${r.latencyCalls} | ${ours ? (r.p50Ms / ours.p50Ms).toFixed(2) : '-'}× | ${r.cpuMsPerPair.toFixed(1)} |`,
      );
    }
  }
}

/** Two panels per model: pairs/s at 32 × 20, and k = 20 p50 (bar) with p99 (tick). */
function peersPlot(rows: SummaryRow[]): string {
  const models = [...new Set(rows.map((r) => r.model))];
  const engines = [...new Set(rows.map((r) => r.engine))];
  const W = 860;
  const panelH = 250;
  const L = 150;
  const R = 30;
  const T = 50;
  const gap = 40;
  const H = T + models.length * 2 * (panelH + gap) + 10;
  const colors: Record<string, string> = {};
  const palette = ['#d62728', '#ff9896', '#1f77b4', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#7f7f7f'];
  for (const [i, e] of engines.entries()) colors[e] = palette[i % palette.length];
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${L}" y="24" font-size="14">Cross-encoder tier vs peers, real MiniLM-L6 weights, 2 cores (higher pairs/s, lower latency is better)</text>`,
  ];
  let y0 = T;
  const panel = (title: string, items: { engine: string; value: number; tick?: number }[], unit: string) => {
    const max = Math.max(...items.map((i) => Math.max(i.value, i.tick ?? 0))) * 1.1;
    const barH = Math.min(24, (panelH - 30) / items.length - 4);
    parts.push(`<text x="${L}" y="${y0 + 14}" font-size="13">${title}</text>`);
    const x = (v: number) => L + (v / max) * (W - L - R - 60);
    items.forEach((it, i) => {
      const y = y0 + 26 + i * (barH + 4);
      const width = it.engine === 'ours-fp32' || it.engine === 'ours-int8' ? 2 : 0;
      parts.push(
        `<text x="${L - 8}" y="${y + barH * 0.7}" text-anchor="end">${it.engine}</text>`,
        `<rect x="${L}" y="${y}" width="${(x(it.value) - L).toFixed(1)}" height="${barH}" fill="${colors[it.engine]}" stroke="black" stroke-width="${width}"/>`,
        `<text x="${(x(Math.max(it.value, it.tick ?? 0)) + 6).toFixed(1)}" y="${y + barH * 0.7}">${it.value.toFixed(it.value >= 100 ? 0 : 1)}${it.tick !== undefined ? ` / ${it.tick.toFixed(0)}` : ''} ${unit}</text>`,
      );
      if (it.tick !== undefined)
        parts.push(
          `<line x1="${x(it.tick).toFixed(1)}" x2="${x(it.tick).toFixed(1)}" y1="${y - 2}" y2="${y + barH + 2}" stroke="black" stroke-width="2"/>`,
        );
    });
    y0 += panelH + gap;
  };
  for (const model of models) {
    const rs = rows.filter((r) => r.model === model);
    panel(
      `${model}: pairs/s at 32 concurrent × 20 passages`,
      rs.map((r) => ({ engine: r.engine, value: r.pairsPerSec })),
      'pairs/s',
    );
    panel(
      `${model}: one k = 20 request, p50 (bar) / p99 (tick), ms`,
      rs.map((r) => ({ engine: r.engine, value: r.p50Ms, tick: r.p99Ms })),
      'ms',
    );
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// --single: where one k = 20 request's time goes

async function singleRequestStudy(
  model: BenchModel,
  requests: Request[],
  dir: string,
  rounds: number,
  seconds: number,
): Promise<unknown> {
  console.log(`\n== single k = 20 request: ${model.label} (load average ${load()})`);
  const out: Record<string, unknown> = { model: model.name, maxLength: model.maxLength };
  // 1. the tier: workers × intra-op threads, fp32 / int8, one request at a time. Every
  //    configuration is loaded first, then they take turns (rotated each round) on the same
  //    requests; latencies are pooled over the rounds.
  const configs = [
    { workers: 2, intraOpThreads: 1 },
    { workers: 1, intraOpThreads: 2 },
    { workers: 1, intraOpThreads: 1 },
    { workers: 2, intraOpThreads: 2 },
  ];
  const tierConfigs: { variant: string; workers: number; intraOpThreads: number; ce: CrossEncoder }[] = [];
  for (const variant of ['fp32', 'int8']) {
    for (const c of configs) {
      const ce = await createCrossEncoder({
        modelDir: model.onnxDir,
        variant,
        maxLength: model.maxLength,
        workerNice: 0,
        ...c,
      });
      await latencyLoop(ce, requests, 100, 0, 2); // warm
      tierConfigs.push({ variant, ...c, ce });
    }
  }
  const acc = tierConfigs.map(() => ({
    lat: [] as number[],
    batches: 0,
    pairs: 0,
    tokens: 0,
    padded: 0,
    cpu: 0,
    loads: [] as string[],
  }));
  try {
    for (let round = 0; round < rounds; round++) {
      for (let j = 0; j < tierConfigs.length; j++) {
        const i = (j + round * 3) % tierConfigs.length;
        const { ce } = tierConfigs[i];
        const before = ce.stats();
        const r = await latencyLoop(ce, requests, (round * 20) % requests.length, seconds, 4);
        const s = ce.stats();
        const a = acc[i];
        a.lat.push(...r.latenciesMs);
        a.batches += s.batchesRun - before.batchesRun;
        a.pairs += s.pairsRun - before.pairsRun;
        a.tokens += s.tokensRun - before.tokensRun;
        a.padded += s.paddedTokensRun - before.paddedTokensRun;
        a.cpu += r.cpuMsPerPair * r.latenciesMs.length * K;
        a.loads.push(load().split(' ')[0]);
      }
    }
  } finally {
    for (const t of tierConfigs) await t.ce.close();
  }
  const tier: unknown[] = [];
  for (const [i, t] of tierConfigs.entries()) {
    const a = acc[i];
    const lat = [...a.lat].sort((x, y) => x - y);
    const row = {
      variant: t.variant,
      workers: t.workers,
      intraOpThreads: t.intraOpThreads,
      p50Ms: percentile(lat, 50),
      p99Ms: percentile(lat, 99),
      calls: lat.length,
      batchesPerRequest: a.batches / lat.length,
      meanBatch: a.pairs / Math.max(1, a.batches),
      padding: 1 - a.tokens / Math.max(1, a.padded),
      cpuMsPerPair: a.cpu / (lat.length * K),
      loads: a.loads.join(' '),
    };
    tier.push(row);
    console.log(
      `  tier ${t.variant} ${t.workers}×${t.intraOpThreads}: p50 ${row.p50Ms.toFixed(0)} p99 ${row.p99Ms.toFixed(0)} ms (n=${row.calls}), ${row.batchesPerRequest.toFixed(1)} batches/request of ${row.meanBatch.toFixed(1)}, padding ${(row.padding * 100).toFixed(1)} %, CPU ${row.cpuMsPerPair.toFixed(1)} ms/pair, load per round ${row.loads}`,
    );
  }
  out.tier = tier;

  // 2. a bare onnxruntime-node session, the same 20-pair requests: tokenization, then one padded
  //    batch per request, at each graph optimisation level and thread count; and the request split
  //    in two length-sorted halves run one after the other (the padding the tier's batcher avoids).
  const tok = Tokenizer.fromFile(join(model.onnxDir, 'tokenizer.json'));
  tok.setTruncation(model.maxLength);
  tok.disablePadding();
  const sample = requests.slice(0, 6);
  const t0 = performance.now();
  const encodedAll = [];
  for (const r of sample) encodedAll.push(await Promise.all(r.passages.map((p) => tok.encode(r.query, p))));
  const tokenizeMsPerRequest = (performance.now() - t0) / sample.length;
  const encoded = encodedAll.map((es) => es.map((e) => ({ ids: e.getIds(), types: e.getTypeIds() })));
  const real = encoded.flat().reduce((a, e) => a + e.ids.length, 0);
  const padded = encoded.reduce((a, es) => a + es.length * Math.max(...es.map((e) => e.ids.length)), 0);
  out.tokenizeMsPerRequest = tokenizeMsPerRequest;
  out.paddingOneBatch = 1 - real / padded;
  console.log(
    `  tokenization (tokenizers encode(q, p), 20 pairs awaited together): ${tokenizeMsPerRequest.toFixed(1)} ms per request; one padded batch per request wastes ${((1 - real / padded) * 100).toFixed(1)} % of its positions`,
  );
  const padId = readPadTokenId(model.onnxDir);
  const feeds = (rows: { ids: number[]; types: number[] }[], session: ort.InferenceSession) => {
    const seq = Math.max(...rows.map((x) => x.ids.length));
    const f: Record<string, ort.Tensor> = {
      input_ids: int64Batch(
        rows.map((x) => x.ids),
        seq,
        (row, t) => row[t],
        padId,
      ),
      attention_mask: int64Batch(
        rows.map((x) => x.ids),
        seq,
        () => 1,
      ),
    };
    if (session.inputNames.includes('token_type_ids'))
      f.token_type_ids = int64Batch(
        rows.map((x) => x.types),
        seq,
        (row, t) => row[t],
      );
    return f;
  };
  const sessionRows: unknown[] = [];
  const levels = ['disabled', 'basic', 'extended', 'all'] as const;
  const sessionConfigs: { file: string; level: (typeof levels)[number]; threads: number; split?: boolean }[] = [];
  for (const level of levels) for (const threads of [1, 2]) sessionConfigs.push({ file: 'model.onnx', level, threads });
  sessionConfigs.push({ file: 'model.onnx', level: 'all', threads: 2, split: true });
  for (const threads of [1, 2]) sessionConfigs.push({ file: 'model_int8.onnx', level: 'all', threads });
  // onnxruntime.transformers' offline fusions of the same graph (written by make), when present
  const fusedPath = join(dir, model.name, 'model-fused.onnx');
  if (existsSync(fusedPath))
    for (const threads of [1, 2]) sessionConfigs.push({ file: fusedPath, level: 'all', threads });
  const pathOf = (file: string) => (file.startsWith('/') ? file : join(model.onnxDir, 'onnx', file));
  const reference = new Map<string, Float32Array>(); // logits of the first request per file, for the fused graph's parity
  for (const c of sessionConfigs) {
    const session = await ort.InferenceSession.create(pathOf(c.file), {
      intraOpNumThreads: c.threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: c.level,
      extra: { 'session.intra_op.allow_spinning': '0' } as unknown as ort.InferenceSession.SessionOptions['extra'],
    });
    try {
      const run = async (es: { ids: number[]; types: number[] }[]) => {
        if (!c.split) return session.run(feeds(es, session));
        const sorted = [...es].sort((a, b) => a.ids.length - b.ids.length);
        await session.run(feeds(sorted.slice(0, 10), session));
        return session.run(feeds(sorted.slice(10), session));
      };
      const first = await session.run(feeds(encoded[0], session));
      const logits = first[session.outputNames[0]].data as Float32Array;
      if (!reference.has(c.file)) reference.set(c.file, logits);
      const vsPlain = c.file === fusedPath ? maxAbsDiff(logits, reference.get('model.onnx') ?? logits) : undefined;
      await run(encoded[0]);
      const times: number[] = [];
      const cpu0 = process.cpuUsage();
      for (const es of encoded) {
        const t1 = performance.now();
        await run(es);
        times.push(performance.now() - t1);
      }
      const cpu = process.cpuUsage(cpu0);
      const row = {
        ...c,
        ...(vsPlain === undefined ? {} : { maxAbsDiffVsPlain: vsPlain }),
        medianMs: median(times),
        meanMs: times.reduce((a, b) => a + b, 0) / times.length,
        cpuMsPerRequest: (cpu.user + cpu.system) / 1000 / times.length,
        load: load(),
      };
      sessionRows.push(row);
      console.log(
        `  session ${c.file === fusedPath ? 'model-fused.onnx' : c.file} level ${c.level.padEnd(8)} ${c.threads} thread(s)${c.split ? ', two sorted halves' : ''}: median ${row.medianMs.toFixed(0)} ms, mean ${row.meanMs.toFixed(0)} ms per request, CPU ${row.cpuMsPerRequest.toFixed(0)} ms, load ${row.load}${vsPlain === undefined ? '' : `, max |Δ logit| vs model.onnx ${vsPlain.toExponential(1)}`}`,
      );
    } finally {
      await session.release();
    }
  }
  out.session = sessionRows;

  // 3. an onnxruntime profile (level all, 1 thread, fp32 and int8): time by operator type
  const profiles: Record<string, unknown> = {};
  for (const file of ['model.onnx', 'model_int8.onnx']) {
    const work = mkdtempSync(join(tmpdir(), 'rg-ce-profile-'));
    const prefix = join(work, 'profile');
    const session = await ort.InferenceSession.create(join(model.onnxDir, 'onnx', file), {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      enableProfiling: true,
      profileFilePrefix: prefix,
    });
    for (const es of encoded.slice(0, 3)) await session.run(feeds(es, session));
    session.endProfiling();
    await session.release();
    const f = readdirSync(work).find((n) => n.endsWith('.json'));
    const byOp = new Map<string, number>();
    let total = 0;
    if (f) {
      const events = JSON.parse(readFileSync(join(work, f), 'utf8')) as {
        cat: string;
        name: string;
        dur: number;
        args?: { op_name?: string };
      }[];
      for (const e of events) {
        if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
        const op = e.args?.op_name ?? '?';
        byOp.set(op, (byOp.get(op) ?? 0) + e.dur);
        total += e.dur;
      }
    }
    rmSync(work, { recursive: true, force: true });
    const shares = [...byOp.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([op, us]) => ({ op, share: us / total, msPerRequest: us / 1000 / 3 }));
    profiles[file] = { totalMsPerRequest: total / 1000 / 3, byOp: shares };
    console.log(
      `  profile ${file} (1 thread, 3 requests): ${(total / 1000 / 3).toFixed(0)} ms of kernels per request: ${shares
        .slice(0, 8)
        .map((s) => `${s.op} ${(s.share * 100).toFixed(1)} %`)
        .join(', ')}`,
    );
  }
  out.profiles = profiles;
  return out;
}
