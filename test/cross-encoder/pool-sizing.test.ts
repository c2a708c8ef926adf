/**
 * The pool-sizing rule: workers × intra-op threads from cores and model size (pure function).
 * Model sizes are the config.json sizes of real checkpoints (hidden_size, num_hidden_layers).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/util/package-root.js';
import {
  computeUnits,
  defaultPoolSize,
  MAX_DEFAULT_WORKERS,
  MAX_INTRA_OP_THREADS,
  modelClassOf,
  modelDimensionsFromConfig,
  RESERVE_CORE_FROM,
} from '../../src/tiers/cross-encoder/pool-sizing.js';

const SHARED_TOKENIZERS = join(packageRoot(), '..', 'shared', 'tokenizers');
const realConfig = (folder: string): unknown =>
  JSON.parse(readFileSync(join(SHARED_TOKENIZERS, folder, 'config.json'), 'utf8'));

const TINYBERT_L2 = { hiddenSize: 128, layers: 2 };
const MINILM_L6 = { hiddenSize: 384, layers: 6 };
const MINILM_L12 = { hiddenSize: 384, layers: 12 };
const BERT_BASE = { hiddenSize: 768, layers: 12 };
const MODERNBERT_BASE = { hiddenSize: 768, layers: 22, intermediateSize: 1152 };
const ROBERTA_LARGE = { hiddenSize: 1024, layers: 24 };
const XXL = { hiddenSize: 1536, layers: 48 };

describe('computeUnits / modelClassOf', () => {
  it('classes real checkpoint sizes: TinyBERT/MiniLM small, base models base, large models large', () => {
    expect(computeUnits(MINILM_L6)).toBeCloseTo(0.885, 3);
    expect(computeUnits(BERT_BASE)).toBeCloseTo(7.08, 2);
    expect(computeUnits(ROBERTA_LARGE)).toBeCloseTo(25.17, 2);
    expect(modelClassOf(computeUnits(TINYBERT_L2))).toBe('small');
    expect(modelClassOf(computeUnits(MINILM_L6))).toBe('small');
    expect(modelClassOf(computeUnits(MINILM_L12))).toBe('small');
    expect(modelClassOf(computeUnits(BERT_BASE))).toBe('base');
    expect(computeUnits(MODERNBERT_BASE)).toBeCloseTo(7.57, 2);
    expect(modelClassOf(computeUnits(MODERNBERT_BASE))).toBe('base');
    // Without intermediate_size a 4× FFN is assumed: the same checkpoint would count as large.
    expect(modelClassOf(computeUnits({ hiddenSize: 768, layers: 22 }))).toBe('large');
    expect(modelClassOf(computeUnits(ROBERTA_LARGE))).toBe('large');
    expect(modelClassOf(computeUnits(XXL))).toBe('xlarge');
  });

  it('a parameter count stands in for the sizes (12·h²·L per encoder), bad sizes count as small', () => {
    expect(computeUnits({ parameters: 85e6 })).toBeCloseTo(7.08, 1);
    expect(modelClassOf(computeUnits({ parameters: 22.7e6 }))).toBe('small');
    for (const bad of [
      { hiddenSize: Number.NaN, layers: 6 },
      { hiddenSize: 384, layers: -1 },
      { hiddenSize: Number.POSITIVE_INFINITY, layers: 6 },
      { hiddenSize: 384, layers: 6, intermediateSize: 0 },
      { parameters: 0 },
      { parameters: Number.NaN },
    ]) {
      expect(computeUnits(bad)).toBe(0);
    }
    expect(computeUnits(undefined)).toBe(0);
  });
});

describe('defaultPoolSize', () => {
  it('small hosts: one single-threaded worker per core, no core reserved (measured best on 2 cores)', () => {
    for (const cores of [1, 2, 4]) {
      const s = defaultPoolSize({ cores, model: MINILM_L6 });
      expect(s).toMatchObject({ workers: cores, intraOpThreads: 1, reservedCores: 0, modelClass: 'small' });
    }
  });

  it('big hosts keep one core for the event loop and use every other core, no cap at 4', () => {
    const s = defaultPoolSize({ cores: 16, model: MINILM_L6 });
    expect(s).toMatchObject({ workers: 15, intraOpThreads: 1, reservedCores: 1 });
    expect(defaultPoolSize({ cores: RESERVE_CORE_FROM - 1, model: MINILM_L6 }).workers).toBe(RESERVE_CORE_FROM - 1);
    expect(defaultPoolSize({ cores: RESERVE_CORE_FROM, model: MINILM_L6 }).workers).toBe(RESERVE_CORE_FROM - 1);
  });

  it('workers × intra-op threads never exceed the usable cores', () => {
    const models = [undefined, TINYBERT_L2, MINILM_L6, BERT_BASE, MODERNBERT_BASE, ROBERTA_LARGE, XXL];
    for (let cores = 1; cores <= 128; cores++) {
      for (const model of models) {
        for (const prefer of ['throughput', 'latency'] as const) {
          const s = defaultPoolSize({ cores, model, prefer });
          expect(s.workers).toBeGreaterThanOrEqual(1);
          expect(s.intraOpThreads).toBeGreaterThanOrEqual(1);
          expect(s.intraOpThreads).toBeLessThanOrEqual(MAX_INTRA_OP_THREADS);
          expect(s.workers).toBeLessThanOrEqual(MAX_DEFAULT_WORKERS);
          expect(s.workers * s.intraOpThreads).toBeLessThanOrEqual(Math.max(1, cores - s.reservedCores));
        }
      }
    }
  });

  it('prefer latency: more threads per worker for large models only', () => {
    expect(defaultPoolSize({ cores: 16, model: MINILM_L6, prefer: 'latency' })).toMatchObject({
      workers: 15,
      intraOpThreads: 1,
    });
    // Base-size models: measured no gain from intra-op threads on 2 cores (docs/cross-encoder-sizing.md).
    expect(defaultPoolSize({ cores: 16, model: BERT_BASE, prefer: 'latency' })).toMatchObject({
      workers: 15,
      intraOpThreads: 1,
    });
    expect(defaultPoolSize({ cores: 16, model: ROBERTA_LARGE, prefer: 'latency' })).toMatchObject({
      workers: 7,
      intraOpThreads: 2,
    });
    expect(defaultPoolSize({ cores: 16, model: XXL, prefer: 'latency' })).toMatchObject({
      workers: 3,
      intraOpThreads: 4,
    });
    expect(defaultPoolSize({ cores: 16, model: ROBERTA_LARGE })).toMatchObject({ workers: 15, intraOpThreads: 1 });
    // On 2 cores the latency setting of an xlarge model is clamped to the cores there are.
    expect(defaultPoolSize({ cores: 2, model: XXL, prefer: 'latency' })).toMatchObject({
      workers: 1,
      intraOpThreads: 2,
    });
  });

  it('very large models get 2 threads per worker even for throughput', () => {
    expect(defaultPoolSize({ cores: 16, model: XXL })).toMatchObject({ workers: 7, intraOpThreads: 2 });
  });

  it('beyond the worker cap, spare cores become intra-op threads', () => {
    const s = defaultPoolSize({ cores: 64, model: MINILM_L6 });
    expect(s.workers).toBe(MAX_DEFAULT_WORKERS);
    expect(s.intraOpThreads).toBe(3); // floor(63 / 16)
    expect(s.reason).toContain('capped');
  });

  it('memory caps the sessions, and the cores they leave go to their threads', () => {
    const GB = 1024 ** 3;
    // XLM-R large: ~2.2 GB per session, 8 GB for the pool → 2 sessions on a 16-core host.
    const s = defaultPoolSize({ cores: 16, model: ROBERTA_LARGE, modelBytes: 2.2 * GB, memoryBytes: 8 * GB });
    expect(s.workers).toBe(2);
    expect(s.intraOpThreads).toBe(7); // floor(15 / 2)
    expect(s.reason).toContain('memory fits 2');
    // Not even one fits: still one worker (the load then fails or succeeds on its own terms).
    expect(defaultPoolSize({ cores: 4, model: MINILM_L6, modelBytes: 10 * GB, memoryBytes: GB }).workers).toBe(1);
    // Plenty of memory changes nothing.
    expect(defaultPoolSize({ cores: 4, model: MINILM_L6, modelBytes: 1e8, memoryBytes: 64 * GB }).workers).toBe(4);
  });

  it('cuda: two workers share the device, one CPU thread each', () => {
    expect(defaultPoolSize({ cores: 16, model: BERT_BASE, executionProvider: 'cuda' })).toMatchObject({
      workers: 2,
      intraOpThreads: 1,
    });
    expect(defaultPoolSize({ cores: 1, executionProvider: 'cuda' }).workers).toBe(1);
  });

  it('nonsense core counts fall back to one core', () => {
    for (const cores of [0, -3, Number.NaN, 0.5]) {
      expect(defaultPoolSize({ cores, model: MINILM_L6 })).toMatchObject({ workers: 1, intraOpThreads: 1 });
    }
    expect(defaultPoolSize({ cores: 3.9, model: MINILM_L6 }).workers).toBe(3);
  });
});

describe('modelDimensionsFromConfig', () => {
  it('reads the sizes of real config.json files and classes them', () => {
    const cases: Array<[string, { hiddenSize: number; layers: number; intermediateSize: number }, string]> = [
      ['ms-marco-MiniLM-L-6-v2', { hiddenSize: 384, layers: 6, intermediateSize: 1536 }, 'small'],
      ['ms-marco-TinyBERT-L-2-v2', { hiddenSize: 128, layers: 2, intermediateSize: 512 }, 'small'],
      ['roberta-large-mnli', { hiddenSize: 1024, layers: 24, intermediateSize: 4096 }, 'large'],
      ['bge-reranker-large', { hiddenSize: 1024, layers: 24, intermediateSize: 4096 }, 'large'],
      ['modernbert-large', { hiddenSize: 1024, layers: 28, intermediateSize: 2624 }, 'large'],
      ['deberta-v3-base-injection-finetune', { hiddenSize: 768, layers: 12, intermediateSize: 3072 }, 'base'],
    ];
    for (const [folder, dims, cls] of cases) {
      const got = modelDimensionsFromConfig(realConfig(folder));
      expect(got, folder).toEqual(dims);
      expect(modelClassOf(computeUnits(got)), folder).toBe(cls);
    }
  });

  it('anything else is undefined (the rule then sizes for a small model)', () => {
    for (const bad of [null, 'x', 42, [], {}, { hidden_size: 384 }, { hidden_size: '384', num_hidden_layers: 6 }]) {
      expect(modelDimensionsFromConfig(bad)).toBeUndefined();
    }
    expect(modelDimensionsFromConfig({ hidden_size: 384, num_hidden_layers: 6, intermediate_size: -1 })).toEqual({
      hiddenSize: 384,
      layers: 6,
    });
    expect(defaultPoolSize({ cores: 4, model: modelDimensionsFromConfig({}) })).toMatchObject({
      workers: 4,
      intraOpThreads: 1,
      modelClass: 'small',
    });
  });
});
