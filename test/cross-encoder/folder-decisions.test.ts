/**
 * What a cross-encoder model folder decides besides its graph: the ONNX file loaded when the folder
 * ships a single variant, and the operating points of its operating-points.json (fitted for exactly
 * this model), which make createGate({ scorer }) decide by `balanced` without a policy. On a
 * generated SPEED/SHAPE graph (random weights): the decisions, not relevance, are under test.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGate } from '../../src/gate/gate.js';
import { OperatingPointsFormatError } from '../../src/operating-points/errors.js';
import { modelIdOf } from '../../src/operating-points/types.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { createCrossEncoder } from '../../src/tiers/cross-encoder/cross-encoder.js';
import { createCrossEncoderScorer } from '../../src/tiers/cross-encoder/scorer.js';
import { FAMILY_CASES, writeFamily } from './family-models.js';

let root: string;
let bertDir: string;

const FOLDER_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json'];

/** A copy of bertDir holding only the given ONNX files (renamed as given). */
async function folderWith(name: string, onnx: Readonly<Record<string, string>>): Promise<string> {
  const dir = join(root, name);
  await mkdir(join(dir, 'onnx'), { recursive: true });
  for (const file of FOLDER_FILES) await copyFile(join(bertDir, file), join(dir, file)).catch(() => undefined);
  for (const [from, to] of Object.entries(onnx)) await copyFile(join(bertDir, from), join(dir, to));
  return dir;
}

/** An operating-points file for `model`: the shipped fast path's points with another model id. */
async function pointsFileFor(model: string): Promise<Record<string, unknown>> {
  const file = JSON.parse(await readFile('models/fast-path-lexical/operating-points.json', 'utf8')) as Record<
    string,
    unknown
  >;
  return { ...file, model };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rg-ce-folder-'));
  const bert = FAMILY_CASES.find((c) => c.name === 'bert');
  if (bert === undefined) throw new Error('no bert family case');
  bertDir = await writeFamily(join(root, 'bert'), bert, { variants: ['quint8_avx2'] });
}, 120_000);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the ONNX file of a folder', () => {
  it('loads the only ONNX file of a folder that ships one variant', async () => {
    const dir = await folderWith('int8-only', { 'onnx/model_quint8_avx2.onnx': 'onnx/model_int8.onnx' });
    const ce = await createCrossEncoder({ modelDir: dir, workers: 1 });
    try {
      expect(ce.info.modelPath).toBe(join(dir, 'onnx', 'model_int8.onnx'));
      const scores = await ce.score('a query', ['a passage', 'another passage']);
      expect(scores.probabilities).toHaveLength(2);
      for (const p of scores.probabilities) expect(p).toBeGreaterThanOrEqual(0);
    } finally {
      await ce.close();
    }
  });

  it('refuses to guess between two non-default ONNX files', async () => {
    const dir = await folderWith('two-variants', {
      'onnx/model_quint8_avx2.onnx': 'onnx/model_int8.onnx',
      'onnx/model.onnx': 'onnx/model_fp16.onnx',
    });
    await expect(createCrossEncoder({ modelDir: dir, workers: 1 })).rejects.toThrow(
      /no onnx\/model\.onnx, model\.onnx or single ONNX file/,
    );
    await expect(createCrossEncoder({ modelDir: dir, workers: 1 })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe("the folder's operating points", () => {
  it('a file fitted for this model: the scorer declares its points and the gate decides by balanced', async () => {
    const dir = await folderWith('with-points', { 'onnx/model.onnx': 'onnx/model.onnx' });
    const probe = await createCrossEncoder({ modelDir: dir, workers: 1 });
    const id = probe.info.id;
    await probe.close();
    const file = await pointsFileFor(modelIdOf(id));
    await writeFile(join(dir, 'operating-points.json'), JSON.stringify(file));

    const ce = await createCrossEncoder({ modelDir: dir, workers: 1 });
    try {
      const scorer = createCrossEncoderScorer(ce);
      expect(scorer.decisions?.operatingPoints).toEqual(file.points);
      const gate = createGate({ scorer });
      expect(gate.mode).toBe('balanced');
      expect(gate.operatingPoint).toEqual((file.points as Record<string, unknown>).balanced);
      const precise = createGate({ scorer, policy: { mode: 'precise' } });
      expect(precise.operatingPoint).toEqual((file.points as Record<string, unknown>).precise);
      const result = await gate.filter('a query', [
        { id: 'a', text: 'first passage' },
        { id: 'b', text: 'second passage' },
      ]);
      expect(result.stats.retrieved).toBe(2);
      expect(result.stats.unscored).toBe(0);
    } finally {
      await ce.close();
    }
  });

  it('a file fitted for another configuration is not applied (another max length is another score)', async () => {
    const dir = await folderWith('other-points', { 'onnx/model.onnx': 'onnx/model.onnx' });
    const probe = await createCrossEncoder({ modelDir: dir, workers: 1 });
    const id = probe.info.id;
    await probe.close();
    await writeFile(join(dir, 'operating-points.json'), JSON.stringify(await pointsFileFor(modelIdOf(id))));
    const ce = await createCrossEncoder({ modelDir: dir, workers: 1, maxLength: 64 });
    try {
      expect(ce.info.id).not.toBe(id);
      const scorer = createCrossEncoderScorer(ce);
      expect(scorer.decisions).toBeUndefined();
      expect(createGate({ scorer }).mode).toBe('threshold');
    } finally {
      await ce.close();
    }
  });

  it('a malformed file fails the load with a typed error', async () => {
    const dir = await folderWith('bad-points', { 'onnx/model.onnx': 'onnx/model.onnx' });
    await writeFile(join(dir, 'operating-points.json'), '{"format": "relevance-gate/operating-points@1", "points": 3');
    await expect(createCrossEncoder({ modelDir: dir, workers: 1 })).rejects.toBeInstanceOf(OperatingPointsFormatError);
  });
});
