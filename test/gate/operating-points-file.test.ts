/**
 * Operating-points files: the format is checked field by field, points belong to one model (refused
 * for another, whatever corpus statistics the fast path runs with), and a loaded file makes the gate
 * decide by its `balanced` point.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createGate,
  loadOperatingPoints,
  type OperatingPointsFile,
  OperatingPointsFormatError,
  OperatingPointsModelMismatchError,
} from '../../src/index.js';
import {
  OPERATING_POINTS_FORMAT,
  operatingPointsForScorer,
  parseOperatingPointsFile,
  readOperatingPointsFile,
  serializeOperatingPointsFile,
} from '../../src/operating-points/file.js';
import type { Passage, Scorer } from '../../src/types.js';

const dir = mkdtempSync(join(tmpdir(), 'rg-points-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FILE: OperatingPointsFile = {
  format: OPERATING_POINTS_FORMAT,
  model: 'cross-encoder:0123456789abcdef:len512:longest_first',
  gateK: 20,
  points: {
    precise: { beta: 0.25, shift: -1, floor: 0 },
    balanced: { beta: 1, shift: -0.5, floor: 0 },
    related: { beta: 4, shift: 0, floor: 0.05 },
  },
  fittedOn: [{ collection: 'a', fingerprint: 'f'.repeat(64), queries: 30 }],
  heldOut: [
    {
      collection: 'a',
      point: 'balanced',
      precision: 0.5,
      recall: 0.75,
      f1Ratio: 1.4,
      nothingKeptShare: 0,
      keptPerQuery: 6.5,
    },
  ],
};

/** A scorer whose relevance is given per passage text, so a decision can be checked by hand. */
function fixedScorer(id: string, relevance: Record<string, number>): Scorer {
  return {
    id,
    async score(_query: string, passages: readonly Passage[]) {
      return passages.map((p) => ({ relevant: relevance[p.text] ?? 0 }));
    },
  };
}

function write(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('operating-points files', () => {
  it('round-trips through serialize and parse', () => {
    const parsed = parseOperatingPointsFile(JSON.parse(serializeOperatingPointsFile(FILE)));
    expect(parsed).toEqual(FILE);
    expect(Object.isFrozen(parsed.points.balanced)).toBe(true);
  });

  it('refuses a malformed file, naming the field', () => {
    const bad: Array<[unknown, RegExp]> = [
      [[], /JSON object/],
      [{ ...FILE, format: 'relevance-gate/operating-points@0' }, /format/],
      [{ ...FILE, model: '' }, /model/],
      [{ ...FILE, gateK: 0 }, /gateK/],
      [{ ...FILE, points: { ...FILE.points, balanced: { beta: 0, shift: 0 } } }, /points\.balanced\.beta/],
      [{ ...FILE, points: { precise: FILE.points.precise, balanced: FILE.points.balanced } }, /related/],
      [{ ...FILE, points: { ...FILE.points, balanced: { beta: 1, shift: Number.NaN } } }, /shift/],
      [{ ...FILE, fittedOn: {} }, /fittedOn must be an array/],
      [{ ...FILE, fittedOn: [{ collection: 'a', fingerprint: 'x', queries: -1 }] }, /fittedOn\[0\]\.queries/],
      [{ ...FILE, heldOut: [{ ...FILE.heldOut![0], point: 'strict' }] }, /heldOut\[0\]\.point/],
      [{ ...FILE, heldOut: [{ ...FILE.heldOut![0], recall: 1.5 }] }, /heldOut\[0\]\.recall/],
    ];
    for (const [value, message] of bad) {
      expect(() => parseOperatingPointsFile(value)).toThrow(OperatingPointsFormatError);
      expect(() => parseOperatingPointsFile(value)).toThrow(message);
    }
    expect(() => serializeOperatingPointsFile({ ...FILE, gateK: 1.5 })).toThrow(/gateK/);
  });

  it('belongs to one model: another is refused, corpus statistics after @ do not matter', () => {
    expect(operatingPointsForScorer(FILE, FILE.model)).toBe(FILE.points);
    expect(operatingPointsForScorer(FILE, `${FILE.model}@stats/abc`)).toBe(FILE.points);
    const mismatch = (() => {
      try {
        operatingPointsForScorer(FILE, 'cross-encoder:fedcba9876543210:len512:longest_first');
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(mismatch).toBeInstanceOf(OperatingPointsModelMismatchError);
    expect(mismatch).toMatchObject({
      code: 'RG_ERR_OPERATING_POINTS_MODEL_MISMATCH',
      expectedModel: FILE.model,
      actualModel: 'cross-encoder:fedcba9876543210:len512:longest_first',
    });
  });

  it('reads a file, and says which file when it cannot', async () => {
    const good = write('good.json', FILE);
    expect(await readOperatingPointsFile(good)).toEqual(FILE);
    await expect(readOperatingPointsFile(join(dir, 'missing.json'))).rejects.toThrow(OperatingPointsFormatError);
    await expect(readOperatingPointsFile(write('broken.json', '{"format":'))).rejects.toThrow(
      /broken\.json: invalid JSON/,
    );
    await expect(readOperatingPointsFile(write('bad.json', { ...FILE, gateK: -1 }))).rejects.toThrow(
      /bad\.json: gateK/,
    );
    await expect(loadOperatingPoints(good, { id: 'fastpath/lexical-v1/x' })).rejects.toThrow(
      OperatingPointsModelMismatchError,
    );
  });

  it("makes the gate decide by the file's balanced point by default, and by the others on request", async () => {
    const relevance: Record<string, number> = { a: 0.9, b: 0.8, c: 0.55, d: 0.3, e: 0.1, f: 0.05 };
    const scorer = fixedScorer(FILE.model, relevance);
    const points = await loadOperatingPoints(write('gate.json', FILE), scorer);
    const passages = Object.keys(relevance).map((text) => ({ id: text, text }));

    const gate = createGate({ scorer, policy: { operatingPoints: points } });
    expect(gate.mode).toBe('balanced');
    expect(gate.operatingPoint).toEqual(FILE.points.balanced);
    const { operatingPointThreshold } = await import('../../src/gate/index.js');
    const kept: number[] = [];
    for (const mode of ['precise', 'balanced', 'related'] as const) {
      const result = await createGate({ scorer, policy: { operatingPoints: points, mode } }).filter('q', passages);
      const threshold = operatingPointThreshold(FILE.points[mode], Object.values(relevance));
      const expected = Object.entries(relevance)
        .filter(([, r]) => r >= threshold)
        .map(([text]) => text);
      expect(result.included.map((i) => i.id)).toEqual(expected);
      expect(result.stats.threshold).toBe(threshold);
      kept.push(result.included.length);
    }
    // The three points of this file keep different sets here, so each mode is really read from it.
    expect(new Set(kept).size).toBe(3);
    // Without the file the same scorer has no operating points: balanced is refused by name.
    expect(() => createGate({ scorer, policy: { mode: 'balanced' } })).toThrow(/needs operating points/);
  });
});
