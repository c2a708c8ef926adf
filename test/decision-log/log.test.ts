/**
 * The decision log's writer: the record format, sampling, the bounded queue, rotation with its
 * size bound, and failures (an unwritable directory, a full disk) that degrade to counted drops.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createDecisionLog,
  DecisionLogOptionError,
  DECISION_LOG_VERSION,
  type DecisionLogModel,
  passageHash,
  parseDecisionLines,
  readDecisionLog,
  sha256Hex,
} from '../../src/decision-log/index.js';
import { createGate } from '../../src/index.js';
import { signalScorer, tempDir } from './helpers.js';

const scorer = signalScorer();
const policy = { threshold: 0.5, minKept: 1 };
const gate = createGate({ scorer, policy });
const model: DecisionLogModel = { name: 'm', scorer, policy };
const passages = Array.from({ length: 6 }, (_, i) => ({ id: `p${i}`, text: `passage number ${i} about cells` }));

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});
function temp(): string {
  const t = tempDir();
  cleanups.push(t.remove);
  return t.dir;
}

for (const thread of [true, false])
  describe(`decision log records (${thread ? 'lines built on the writer thread' : 'lines built inline'})`, () => {
    const createLog = (options: Parameters<typeof createDecisionLog>[0]) => createDecisionLog({ ...options, thread });
    it('writes a policy line, then one decision line per request with hashes, signals, routes, rules and timings', async () => {
      const dir = temp();
      const log = createLog({ dir });
      const result = await gate.filter('what do cells do', passages);
      expect(log.record({ requestId: 'req-1', model, result, endpoint: '/v1/gate', serverMs: 3 })).toBe(true);
      await log.close();
      const files = readdirSync(dir);
      expect(files).toHaveLength(1);
      const { records, malformed } = parseDecisionLines(readFileSync(join(dir, files[0]), 'utf8'));
      expect(malformed).toBe(0);
      expect(records.map((r) => r.kind)).toEqual(['policy', 'decision']);
      const [p, d] = records;
      if (p.kind !== 'policy' || d.kind !== 'decision') throw new Error('kinds');
      expect([p.v, d.v]).toEqual([DECISION_LOG_VERSION, DECISION_LOG_VERSION]);
      expect(p.scorer.id).toBe('signal-model');
      expect(p.policy).toEqual(policy);
      expect(d.policyHash).toBe(p.policyHash);
      expect(d.requestId).toBe('req-1');
      expect(d.queryHash).toBe(sha256Hex('what do cells do'));
      expect(d.query).toBeUndefined();
      expect(d.queryWords).toBe(4);
      expect(d.timings.serverMs).toBe(3);
      expect(d.passages.map((x) => x.rank)).toEqual([0, 1, 2, 3, 4, 5]);
      const all = [...result.included, ...result.conflicting, ...result.excluded];
      for (const x of d.passages) {
        const live = all.find((i) => i.id === x.id);
        expect(x.hash).toBe(passageHash(passages[x.rank].text));
        expect(x.route).toBe(live?.route);
        expect(x.rule).toBe(live?.rule);
        expect(x.signals).toEqual(live?.signals);
        expect(x.raw).toEqual(live?.raw);
        expect(x.tier).toBe('signal-model');
        expect(x.text).toBeUndefined();
      }
      expect(log.stats()).toMatchObject({ offered: 1, written: 1, dropped: 0, files: 1 });
    });

    it('logs the query and passage text only when opted in', async () => {
      const dir = temp();
      const log = createLog({ dir, includeQuery: true, includeText: true });
      log.record({ requestId: 'r', model, result: await gate.filter('q text', passages) });
      await log.close();
      const { decisions } = await readDecisionLog(dir);
      expect(decisions[0].query).toBe('q text');
      expect(decisions[0].passages[2].text).toBe(passages[2].text);
    });

    it('samples by rate, and always keeps requests a listed rule decided', async () => {
      const result = await gate.filter('sample me', passages);
      const values = [0.1, 0.9, 0.2, 0.8];
      let i = 0;
      const log = createLog({ sample: 0.5, random: () => values[i++ % values.length], window: 10 });
      for (let n = 0; n < 4; n++) log.record({ requestId: `r${n}`, model, result });
      await log.flush();
      expect(log.window().decisions.map((d) => d.requestId)).toEqual(['r0', 'r2']);
      expect(log.stats().sampledOut).toBe(2);
      const rule = result.excluded[0]?.rule ?? result.included[0].rule;
      const never = createLog({ sample: 0, alwaysRules: [rule], window: 10 });
      never.record({ requestId: 'kept', model, result });
      never.record({ requestId: 'other', model, result: { ...result, included: [], conflicting: [], excluded: [] } });
      await never.flush();
      expect(never.window().decisions.map((d) => d.requestId)).toEqual(['kept']);
    });

    it('bounds the queue: records past maxQueued are dropped and counted, never waited for', async () => {
      const log = createLog({ dir: temp(), maxQueued: 2 });
      const result = await gate.filter('burst', passages);
      const taken = Array.from({ length: 10 }, (_, n) => log.record({ requestId: `r${n}`, model, result }));
      expect(taken.filter(Boolean)).toHaveLength(2);
      expect(log.stats().droppedByReason['queue-full']).toBe(8);
      await log.close();
      expect(log.stats().written).toBe(2);
      expect(log.record({ requestId: 'late', model, result })).toBe(false);
      expect(log.stats().droppedByReason.closed).toBe(1);
      // The same bound in pairs (a waiting record holds its passages' text): 6 pairs per request here.
      const byPairs = createLog({ dir: temp(), maxQueuedPairs: 13 });
      const takenByPairs = Array.from({ length: 5 }, (_, n) => byPairs.record({ requestId: `p${n}`, model, result }));
      expect(takenByPairs).toEqual([true, true, false, false, false]);
      await byPairs.close();
    });

    it('rotates past maxFileBytes, keeps at most maxFiles, and every file replays on its own', async () => {
      const dir = temp();
      const log = createLog({ dir, maxFileBytes: 4096, maxFiles: 3 });
      const result = await gate.filter('rotate', passages);
      for (let n = 0; n < 60; n++) {
        log.record({ requestId: `r${n}`, model, result });
        if (n % 5 === 4) await log.flush();
      }
      await log.close();
      const files = readdirSync(dir).sort();
      expect(log.stats().files).toBeGreaterThan(3);
      expect(files).toHaveLength(3);
      for (const f of files) {
        const { records } = parseDecisionLines(readFileSync(join(dir, f), 'utf8'));
        expect(records[0].kind).toBe('policy');
        expect(readFileSync(join(dir, f)).length).toBeLessThan(4096 + 4096);
      }
      const { decisions } = await readDecisionLog(dir);
      // The newest requests survive, in order.
      const ids = decisions.map((d) => Number(d.requestId.slice(1)));
      expect(ids[ids.length - 1]).toBe(59);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    });

    it('an unwritable directory degrades to counted drops; recording never throws', async () => {
      const file = join(temp(), 'not-a-dir');
      writeFileSync(file, 'x');
      const log = createLog({ dir: join(file, 'log'), retryMs: 10 });
      const result = await gate.filter('unwritable', passages);
      for (let n = 0; n < 5; n++) expect(log.record({ requestId: `r${n}`, model, result })).toBe(true);
      await log.close();
      const stats = log.stats();
      expect(stats.written).toBe(0);
      expect(stats.droppedByReason['write-error']).toBe(5);
      expect(stats.lastError).toMatch(/ENOTDIR|EEXIST/);
    });

    it('a full disk degrades to counted drops, and logging resumes once there is room', async (ctx) => {
      const dir = temp();
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', dir], { stdio: 'ignore' });
      } catch {
        ctx.skip(); // no permission to mount a small filesystem here
        return;
      }
      cleanups.unshift(() => execFileSync('umount', [dir]));
      const log = createLog({ dir, retryMs: 0, maxFileBytes: 1 << 20 });
      const result = await gate.filter('fill the disk', passages);
      for (let n = 0; n < 40; n++) {
        log.record({ requestId: `r${n}`, model, result });
        await log.flush();
      }
      const full = log.stats();
      expect(full.droppedByReason['write-error']).toBeGreaterThan(0);
      expect(full.lastError).toMatch(/ENOSPC/);
      // Free the space: later records are written again (to a new file: the cut one is abandoned).
      for (const f of readdirSync(dir)) writeFileSync(join(dir, f), '');
      log.record({ requestId: 'after', model, result });
      await log.close();
      expect(log.stats().written).toBe(full.written + 1);
      const { decisions } = await readDecisionLog(dir);
      expect(decisions.map((d) => d.requestId)).toContain('after');
    });

    it('refuses malformed options', () => {
      expect(() => createLog({ sample: 2 })).toThrow(DecisionLogOptionError);
      expect(() => createLog({ maxFiles: 0 })).toThrow(DecisionLogOptionError);
      mkdirSync(temp(), { recursive: true });
    });
  });
