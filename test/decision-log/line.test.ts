/**
 * The writer's hand-written decision line is exactly the JSON of the decision record object, over
 * results that exercise every field: unscored and fail-open pairs, text beyond Latin-1 and ids that
 * JSON must escape, a call override holding a function, a shadow, the opt-in query and text, and
 * scores that are not one of the signals.
 */
import { describe, expect, it } from 'vitest';
import { createGate, type GateResult, type Passage, type Scorer, type ScorerPairResult } from '../../src/index.js';
import { DECISION_LOG_VERSION, type DecisionEntry, passageHash } from '../../src/decision-log/index.js';
import { decisionLineOf } from '../../src/decision-log/line.js';
import { BatchPacker, BatchUnpacker } from '../../src/decision-log/packed.js';
import { decisionRecordOf } from '../../src/decision-log/record.js';
import { signalScorer, unit } from './helpers.js';

const passages: Passage[] = [
  { id: 'plain', text: 'cells divide by mitosis' },
  { id: 'quote "and" \\ back', text: 'naïve café, 42 °C — “quoted”' },
  { id: 'line\nbreak\u0000', text: 'emoji 🧬 and a lone surrogate \ud800 here' },
  { id: 'ünïcode-id', text: 'cells' },
  { id: 'null-score', text: 'the scorer has nothing for this one' },
  { id: 'broken', text: 'an invalid signal' },
  { id: 'long', text: 'protein '.repeat(300) },
];

/** signalScorer's signals, except a pair it declines (null) and one with a signal out of range. */
function mixedScorer(): Scorer {
  const base = signalScorer('mixed-model');
  return {
    ...base,
    async score(query, ps, options) {
      const scored = await base.score(query, ps, options);
      return ps.map((p, i): ScorerPairResult => {
        if (p.id === 'null-score') return null;
        if (p.id === 'broken') return { probabilities: { relevant: Number.NaN, ranking: 2 }, tier: 'odd' };
        return scored[i];
      });
    },
  };
}

async function results(): Promise<Array<{ result: GateResult; override?: DecisionEntry['override'] }>> {
  const scorer = mixedScorer();
  const out: Array<{ result: GateResult; override?: DecisionEntry['override'] }> = [];
  const plain = createGate({ scorer, policy: { threshold: 0.4 } });
  const fallback = createGate({ scorer, policy: { threshold: 0.99, minKept: 2, maxKept: 3 } });
  const failOpen = createGate({ scorer, policy: { threshold: 0.5, failOpen: true } });
  for (const q of ['what do cells do', 'a query  with   odd spacing', 'ünïcödé 🧬 query']) {
    out.push({ result: await plain.filter(q, passages) });
    out.push({ result: await fallback.filter(q, passages, { queryClass: 'class "x"' }) });
    out.push({ result: await failOpen.filter(q, passages) });
    const override = { threshold: 0.3, thresholdFn: () => 0.3 };
    out.push({ result: await plain.filter(q, passages, { policy: override }), override });
  }
  return out;
}

describe('decision lines', () => {
  it('are the JSON of the decision record, field for field and byte for byte', async () => {
    const model = { name: 'm "quoted"', scorer: mixedScorer(), policy: { threshold: 0.4 } };
    const time = new Date('2026-01-02T03:04:05.678Z');
    let checked = 0;
    for (const { result, override } of await results()) {
      for (const build of [
        { includeQuery: false, includeText: false },
        { includeQuery: true, includeText: true },
      ]) {
        const entries: DecisionEntry[] = [
          { requestId: 'r-1', model, result, ...(override === undefined ? {} : { override }) },
          { requestId: 'r"2"', model, result, endpoint: '/v1/gate', serverMs: 1.25, shadowOf: 'live-1' },
          { requestId: 'r-3', model, result, endpoint: 'shadow', serverMs: Number.NaN },
        ];
        for (const entry of entries) {
          const line = decisionLineOf(entry, 'abcdef0123456789', build, time);
          expect(line).toBe(JSON.stringify(decisionRecordOf(entry, 'abcdef0123456789', build, time)));
          checked++;
        }
      }
    }
    expect(checked).toBe(72);
  });

  it('packed for the writer thread and rebuilt there, are the same bytes (labels learnt across batches)', async () => {
    const model = { name: 'm', scorer: mixedScorer(), policy: { threshold: 0.4 } };
    const time = new Date('2026-01-02T03:04:05.678Z');
    const all = await results();
    for (const build of [
      { includeQuery: false, includeText: false },
      { includeQuery: true, includeText: false },
      { includeQuery: false, includeText: true }, // sent as finished lines
    ]) {
      const packer = new BatchPacker(build);
      const unpacker = new BatchUnpacker(build);
      const expected: string[] = [];
      const got: string[] = [];
      for (let b = 0; b < 3; b++) {
        all.forEach(({ result, override }, i) => {
          const entry: DecisionEntry = {
            requestId: `r${b}-${i}`,
            model: b === 2 ? { ...model, name: `model of batch ${b}` } : model,
            result,
            endpoint: i % 2 === 0 ? '/v1/gate' : `/endpoint-${b}`,
            ...(override === undefined ? {} : { override }),
            ...(i % 3 === 0 ? { shadowOf: `live-${i}`, serverMs: 2.5 } : {}),
          };
          packer.add(entry, 'abcdef0123456789', '{"kind":"policy"}', time);
          expected.push(decisionLineOf(entry, 'abcdef0123456789', build, time));
        });
        const seed = packer.labels();
        const batch = packer.take();
        for (const { line } of unpacker.lines(batch)) got.push(line());
        // An unpacker that starts at this batch (the log's own, when the thread is gone), seeded.
        if (b === 1) {
          const seeded = new BatchUnpacker(build, seed);
          const lines = [...seeded.lines(batch)].map(({ line }) => line());
          expect(lines).toEqual(expected.slice(-all.length));
        }
      }
      expect(got).toEqual(expected);
    }
  });

  it('an entry with a signal that is not a number is sent as a finished line', async () => {
    const scorer = signalScorer();
    const gate = createGate({ scorer, policy: { threshold: 0.5 } });
    const result = await gate.filter('what do cells do', passages);
    const odd = {
      ...result,
      excluded: result.excluded.map((item, i) =>
        i === 0 ? { ...item, signals: { ...item.signals, note: 'not a number' } } : item,
      ),
    } as unknown as GateResult;
    const build = { includeQuery: false, includeText: false };
    const packer = new BatchPacker(build);
    const entry = { requestId: 'r', model: { name: 'm', scorer, policy: {} }, result: odd };
    const time = new Date();
    packer.add(entry, 'h', '{}', time);
    const batch = packer.take();
    expect(batch.records[0]).toHaveProperty('line');
    expect(batch.labels).toEqual([]);
    const [only] = [...new BatchUnpacker(build).lines(batch)];
    expect(only?.line()).toBe(JSON.stringify(decisionRecordOf(entry, 'h', build, time)));
  });

  it('write version 2: each passage hash is passageHash of its text', async () => {
    const scorer = signalScorer();
    const gate = createGate({ scorer, policy: { threshold: 0.5 } });
    const result = await gate.filter('what do cells do', passages);
    const model = { name: 'm', scorer, policy: {} };
    const record = JSON.parse(
      decisionLineOf(
        { requestId: 'r', model, result },
        'h',
        {
          includeQuery: false,
          includeText: false,
        },
        new Date(),
      ),
    ) as { v: number; passages: Array<{ rank: number; hash: string; signals: Record<string, number> }> };
    expect(record.v).toBe(DECISION_LOG_VERSION);
    expect(DECISION_LOG_VERSION).toBe(2);
    for (const p of record.passages) {
      expect(p.hash).toMatch(/^[0-9a-f]{16}$/);
      expect(p.hash).toBe(passageHash(passages[p.rank].text));
      expect(p.signals.evidence).toBe(unit(passages[p.rank].text, 3));
    }
    // Distinct texts, distinct hashes; the hash reads the exact string (a lone surrogate included).
    expect(new Set(record.passages.map((p) => p.hash)).size).toBe(passages.length);
    expect(passageHash('a\ud800')).not.toBe(passageHash('a\ud801'));
  });
});
