/**
 * A served model's `operatingPoints` file: requests without a policy decide by its `balanced` point,
 * exactly as the library does with the same file; a file fitted for another model stops the server
 * from starting, naming the model; a file and `policy.operatingPoints` together are refused.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGate, loadFastPathScorer, loadOperatingPoints, type OperatingPointsFile } from '../../src/index.js';
import { OPERATING_POINTS_FORMAT } from '../../src/operating-points/file.js';
import { modelIdOf } from '../../src/gate/policies/operating-points.js';
import { type RelevanceGateServer, resolveServerConfig, ServerConfigError } from '../../src/server/index.js';
import { postJson, scifactRequests, start } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'rg-server-points-'));
let server: RelevanceGateServer;
let url: string;
let pointsPath: string;
const [sample] = scifactRequests(1, 20);

function pointsFile(model: string): OperatingPointsFile {
  // A recall-leaning table without a verdict: its balanced point keeps more passages than the shipped one.
  return {
    format: OPERATING_POINTS_FORMAT,
    model,
    gateK: 20,
    points: {
      precise: { beta: 0.25, shift: -3, floor: 0 },
      balanced: { beta: 4, shift: 1, floor: 0 },
      related: { beta: 4, shift: 0, floor: 0 },
    },
    fittedOn: [{ collection: 'scifact', fingerprint: 'f'.repeat(64), queries: 300 }],
  };
}

interface GateJson {
  included: Array<{ index: number; rule: string }>;
  stats: { threshold: number; rankingCut: number | null };
}

beforeAll(async () => {
  const scorer = await loadFastPathScorer();
  pointsPath = join(dir, 'points.json');
  writeFileSync(pointsPath, JSON.stringify(pointsFile(modelIdOf(scorer.id))));
  scorer.model.dispose();
  server = await start({
    models: { 'fast-path': { type: 'fast-path' }, tight: { type: 'fast-path', operatingPoints: pointsPath } },
  });
  url = server.url as string;
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a served model's operating-points file", () => {
  it('decides requests without a policy by its balanced point, as the library does with the file', async () => {
    const scorer = await loadFastPathScorer();
    const points = await loadOperatingPoints(pointsPath, scorer);
    const passages = sample.documents.map((text, i) => ({ id: String(i), text }));
    const library = await createGate({ scorer, policy: { operatingPoints: points } }).filter(sample.query, passages);
    const shipped = await createGate({ scorer }).filter(sample.query, passages);
    scorer.model.dispose();
    // The file's point really differs from the shipped one on this request.
    expect(library.included.length).toBeGreaterThan(shipped.included.length);

    const tight = (
      await postJson(`${url}/v1/gate`, { model: 'tight', query: sample.query, passages: sample.documents })
    ).body as GateJson;
    expect(tight.included.map((i) => i.index)).toEqual(library.included.map((i) => Number(i.id)));
    expect(tight.stats.threshold).toBe(library.stats.threshold);
    expect(tight.included.every((i) => i.rule === 'ranked-cut')).toBe(true);
    const models = (await (await fetch(`${url}/v1/models`)).json()) as {
      models: Array<{ name: string; mode: string }>;
    };
    expect(models.models.find((m) => m.name === 'tight')?.mode).toBe('balanced');
    // A per-request mode picks the file's other points.
    const precise = (
      await postJson(`${url}/v1/gate`, {
        model: 'tight',
        query: sample.query,
        passages: sample.documents,
        policy: { mode: 'precise' },
      })
    ).body as GateJson;
    expect(precise.included.length).toBeLessThanOrEqual(tight.included.length);
  });

  it('refuses to start with a file fitted for another model, naming the model', async () => {
    const other = join(dir, 'other.json');
    writeFileSync(other, JSON.stringify(pointsFile('cross-encoder:0123456789abcdef:len512:longest_first')));
    await expect(start({ models: { 'fast-path': { type: 'fast-path', operatingPoints: other } } })).rejects.toThrow(
      /model "fast-path" failed to load: operating points were fitted for model "cross-encoder:0123456789abcdef/,
    );
  });

  it('refuses a file and policy.operatingPoints together, and a non-string path', () => {
    expect(() =>
      resolveServerConfig({
        models: {
          'fast-path': {
            type: 'fast-path',
            operatingPoints: pointsPath,
            policy: { operatingPoints: pointsFile('x').points },
          },
        },
      }),
    ).toThrow(/operatingPoints \(a file\) or policy\.operatingPoints, not both/);
    expect(() =>
      resolveServerConfig({ models: { 'fast-path': { type: 'fast-path', operatingPoints: 3 } } } as never),
    ).toThrow(ServerConfigError);
  });
});
