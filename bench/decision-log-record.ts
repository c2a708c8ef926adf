/**
 * The decision log's own costs, in-process: what `record()` adds to a request (sampling and
 * enqueueing only), and the CPU the drain spends per record off the request path (building the
 * line: hashing, copying, JSON), with the bytes per record, at k = 20 passages of ~1 KB.
 *
 *   npx tsx bench/decision-log-record.ts     (RECORDS=20000)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDecisionLog } from '../src/decision-log/index.js';
import { createGate, type Passage, type Scorer } from '../src/index.js';

const RECORDS = Number(process.env.RECORDS ?? 20_000);
const K = 20;
const passages: Passage[] = Array.from({ length: K }, (_, i) => ({
  id: `doc-${i}`,
  text: `passage ${i} `.repeat(90),
}));
const scorer: Scorer = {
  id: 'instant',
  signals: ['relevant', 'ranking'],
  score: async (_q, ps) =>
    ps.map((_, i) => ({
      probabilities: { relevant: ((i * 37) % 100) / 100, ranking: ((i * 53) % 100) / 100 },
      raw: { relevant: i - 10 },
    })),
};
const policy = { threshold: 0.5 };
const gate = createGate({ scorer, policy });
const result = await gate.filter('what is the boiling point of water at altitude', passages);
const dir = mkdtempSync(join(tmpdir(), 'rg-log-bench-'));
const log = createDecisionLog({ dir, maxQueued: RECORDS + 1 });
const model = { name: 'bench', scorer, policy };

const t0 = performance.now();
for (let i = 0; i < RECORDS; i++) log.record({ requestId: `r${i}`, model, result });
const recordUs = ((performance.now() - t0) * 1000) / RECORDS;
const cpu0 = process.cpuUsage();
const t1 = performance.now();
await log.close();
const wall = performance.now() - t1;
const cpu = process.cpuUsage(cpu0);
const stats = log.stats();
rmSync(dir, { recursive: true, force: true });
console.log(
  `record(): ${recordUs.toFixed(2)} µs per request on the request path; drain: ${((cpu.user + cpu.system) / stats.written).toFixed(1)} µs CPU per record off it ` +
    `(${(wall / 1000).toFixed(2)} s wall for ${stats.written}); ${Math.round(stats.bytes / stats.written)} bytes per record (k = ${K}), ` +
    `${(((stats.bytes / stats.written) * 1000) / 1024 / 1024).toFixed(2)} MiB per 1,000 requests; dropped ${stats.dropped}`,
);
