/**
 * What the main thread did when its event loop stalled: reads a V8 CPU profile (`node --cpu-prof`,
 * e.g. of `relevance-gate serve` under `bench --url`) and prints
 *   - per second: the share of the second the thread was busy (JS, GC, native; not idle), as an
 *     event-loop utilisation, and its longest stall;
 *   - every stall longer than --min-ms: when, how long, and what filled it: a busy stretch (the
 *     functions that ran, by self time, and the top-level frames that called them) or a gap (no
 *     sample for that long: the thread was not running, i.e. descheduled by the OS).
 *
 * Usage: npx tsx bench/stall-profile.ts <file.cpuprofile> [--min-ms 50] [--top 6] [--seconds]
 */
import { readFile } from 'node:fs/promises';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const IDLE = new Set(['(idle)', '(program)']);

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

function frameName(frame: CallFrame): string {
  const file =
    frame.url === '' ? '' : ` ${frame.url.replace(/^.*\/(src|node_modules)\//, '$1/')}:${frame.lineNumber + 1}`;
  return `${frame.functionName || '(anonymous)'}${file}`;
}

function main(): Promise<void> | void {
  const file = process.argv[2];
  if (file === undefined || file.startsWith('--')) {
    process.stderr.write(
      'usage: npx tsx bench/stall-profile.ts <file.cpuprofile> [--min-ms 50] [--top 6] [--seconds]\n',
    );
    process.exit(2);
  }
  const minMs = Number(arg('min-ms', '50'));
  const top = Number(arg('top', '6'));
  return readFile(file, 'utf8').then((text) => report(JSON.parse(text) as CpuProfile, minMs, top));
}

function report(profile: CpuProfile, minMs: number, top: number): void {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  /** The frame just under the root: what the event loop was running (a timer, an I/O callback, GC…). */
  const topFrame = (id: number): string => {
    let current = id;
    for (;;) {
      const up = parent.get(current);
      if (up === undefined || parent.get(up) === undefined)
        return frameName((byId.get(current) as ProfileNode).callFrame);
      current = up;
    }
  };

  // Sample i covers (t[i-1], t[i]]: the thread was in samples[i] for about timeDeltas[i] µs.
  const n = profile.samples.length;
  const times = new Float64Array(n);
  let t = profile.startTime;
  for (let i = 0; i < n; i++) {
    t += profile.timeDeltas[i];
    times[i] = t;
  }
  const busy = (i: number): boolean => !IDLE.has((byId.get(profile.samples[i]) as ProfileNode).callFrame.functionName);

  const seconds = Math.ceil((profile.endTime - profile.startTime) / 1e6);
  const busyUs = new Float64Array(seconds);
  const worstMs = new Float64Array(seconds);
  interface Stall {
    readonly start: number;
    readonly ms: number;
    readonly kind: 'busy' | 'gap';
    readonly self: Map<string, number>;
    readonly roots: Map<string, number>;
  }
  const stalls: Stall[] = [];
  let runStart = -1;
  const closeRun = (end: number): void => {
    if (runStart < 0) return;
    const startUs = times[runStart] - profile.timeDeltas[runStart];
    const ms = (times[end] - startUs) / 1000;
    const second = Math.min(seconds - 1, Math.floor((startUs - profile.startTime) / 1e6));
    worstMs[second] = Math.max(worstMs[second], ms);
    if (ms >= minMs) {
      const self = new Map<string, number>();
      const roots = new Map<string, number>();
      for (let i = runStart; i <= end; i++) {
        const dt = profile.timeDeltas[i] / 1000;
        const node = byId.get(profile.samples[i]) as ProfileNode;
        self.set(frameName(node.callFrame), (self.get(frameName(node.callFrame)) ?? 0) + dt);
        const root = topFrame(node.id);
        roots.set(root, (roots.get(root) ?? 0) + dt);
      }
      stalls.push({ start: (startUs - profile.startTime) / 1e6, ms, kind: 'busy', self, roots });
    }
    runStart = -1;
  };
  for (let i = 0; i < n; i++) {
    const dtMs = profile.timeDeltas[i] / 1000;
    const second = Math.min(seconds - 1, Math.max(0, Math.floor((times[i] - profile.startTime) / 1e6)));
    if (busy(i)) {
      busyUs[second] += profile.timeDeltas[i];
      if (runStart < 0) runStart = i;
    } else closeRun(i - 1);
    // A long delta is a gap in sampling: the thread did not run (or the sampler did not).
    if (dtMs >= minMs) {
      const startS = (times[i] - profile.timeDeltas[i] - profile.startTime) / 1e6;
      stalls.push({ start: startS, ms: dtMs, kind: 'gap', self: new Map(), roots: new Map() });
      worstMs[second] = Math.max(worstMs[second], dtMs);
    }
  }
  closeRun(n - 1);

  if (process.argv.includes('--seconds')) {
    process.stdout.write('second  busy %  longest stall ms\n');
    for (let s = 0; s < seconds; s++)
      process.stdout.write(
        `${String(s).padStart(6)}  ${((busyUs[s] / 1e6) * 100).toFixed(1).padStart(6)}  ${worstMs[s].toFixed(1).padStart(8)}\n`,
      );
  }
  const sorted = [...busyUs].map((us) => us / 1e6).sort((a, b) => a - b);
  const pct = (q: number): string =>
    ((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 100).toFixed(1);
  process.stdout.write(
    `${seconds} s profiled, ${n} samples; main thread busy per second: median ${pct(0.5)} %, p99 ${pct(0.99)} %, max ${pct(1)} %\n`,
  );
  process.stdout.write(
    `stalls ≥ ${minMs} ms: ${stalls.length} (${stalls.filter((s) => s.kind === 'gap').length} gaps without a sample)\n`,
  );
  const sortedBy = (m: Map<string, number>): string =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => `      ${ms.toFixed(1).padStart(7)} ms  ${name}`)
      .join('\n');
  for (const stall of stalls.sort((a, b) => b.ms - a.ms).slice(0, 20)) {
    process.stdout.write(`  at ${stall.start.toFixed(3)} s: ${stall.ms.toFixed(1)} ms ${stall.kind}\n`);
    if (stall.kind === 'busy')
      process.stdout.write(`    self time:\n${sortedBy(stall.self)}\n    under:\n${sortedBy(stall.roots)}\n`);
  }
}

await main();
