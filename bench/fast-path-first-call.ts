/**
 * The fast path by its budget whatever the input, first call of a fresh process included: for each
 * of `--processes` fresh processes, load the shipped model, create a gate, then answer 20 × 1 MB and
 * 5 × 10 MB passages with `budgetMs: 5` (the first call, then `--calls` more). Prints, per input, the
 * first call's and the later calls' answer times and how many were later than budget + 2 ms.
 * Usage: npx tsx bench/fast-path-first-call.ts [--processes 10] [--calls 30] [--budget 5]
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const argValue = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1]! : fallback;
};
const budgetMs = Number(argValue('budget', '5'));
const calls = Number(argValue('calls', '30'));
const BOUND_MS = 2;

interface ChildReport {
  readonly input: string;
  readonly times: number[];
  readonly scoredFirst: number;
}

async function child(): Promise<void> {
  const { createGate, loadFastPathScorer } = await import('../src/index.js');
  const words = 'boundary layer transition swept wing supersonic flow pressure gradient separation '.split(' ');
  const text = (chars: number, seed: number): string => {
    const parts: string[] = [];
    for (let i = 0; i < 4096; i++) parts.push(words[(i * 7 + seed) % words.length]!);
    const block = `${parts.join(' ')} `;
    return block.repeat(Math.ceil(chars / block.length)).slice(0, chars);
  };
  const inputs = {
    '20 x 1 MB': Array.from({ length: 20 }, (_, i) => ({ id: `a${i}`, text: text(1_000_000, i) })),
    '5 x 10 MB': Array.from({ length: 5 }, (_, i) => ({ id: `b${i}`, text: text(10_000_000, i) })),
  };
  const scorer = await loadFastPathScorer();
  const gate = createGate({ scorer });
  const out: ChildReport[] = [];
  const query = 'boundary layer transition on a swept wing';
  for (const [input, passages] of Object.entries(inputs)) {
    const times: number[] = [];
    let scoredFirst = 0;
    for (let i = 0; i <= calls; i++) {
      const t0 = performance.now();
      const r = await gate.filter(query, passages, { budgetMs });
      times.push(performance.now() - t0);
      if (i === 0) scoredFirst = r.stats.scored;
    }
    out.push({ input, times, scoredFirst });
  }
  process.stdout.write(JSON.stringify(out));
}

function percentile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

if (process.argv.includes('--child')) await child();
else {
  const processes = Number(argValue('processes', '10'));
  const self = fileURLToPath(import.meta.url);
  const reports: ChildReport[][] = [];
  for (let p = 0; p < processes; p++) {
    const stdout = execFileSync(
      process.execPath,
      ['--import', 'tsx', self, '--child', '--calls', String(calls), '--budget', String(budgetMs)],
      { encoding: 'utf8', maxBuffer: 1 << 24 },
    );
    reports.push(JSON.parse(stdout) as ChildReport[]);
  }
  console.log(
    `budget ${budgetMs} ms, bound budget + ${BOUND_MS} ms; ${processes} fresh processes × (1 first + ${calls}) calls`,
  );
  for (const input of reports[0]!.map((r) => r.input)) {
    const rows = reports.map((r) => r.find((x) => x.input === input)!);
    const first = rows.map((r) => r.times[0]!);
    const later = rows.flatMap((r) => r.times.slice(1));
    const late = (xs: number[]) => xs.filter((t) => t > budgetMs + BOUND_MS).length;
    console.log(
      `${input}: first call max ${Math.max(...first).toFixed(2)} ms (late ${late(first)} of ${first.length}; pairs scored ${Math.min(...rows.map((r) => r.scoredFirst))}-${Math.max(...rows.map((r) => r.scoredFirst))}), ` +
        `later p50 ${percentile(later, 0.5).toFixed(2)} p99 ${percentile(later, 0.99).toFixed(2)} max ${Math.max(...later).toFixed(2)} ms (late ${late(later)} of ${later.length})`,
    );
  }
}
