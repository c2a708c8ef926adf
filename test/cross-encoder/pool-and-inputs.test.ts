/**
 * The worker pool's life cycle and the encoder's input checks, on the generated tiny model:
 * close() lets running batches finish (their requests resolve) and rejects queued work; a worker
 * that dies fails only its batch and is replaced; input mistakes get typed errors.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { statSync } from 'node:fs';
import { availableParallelism, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DisposedError, InvalidArgumentError, ModelFormatError } from '../../src/errors.js';
import {
  createCrossEncoder,
  createCrossEncoderWithFaults,
  type CrossEncoder,
} from '../../src/tiers/cross-encoder/cross-encoder.js';
import { InferenceError, InputLimitError } from '../../src/tiers/cross-encoder/errors.js';
import { writeCrossEncoderModelDir } from '../../src/tooling/model-gen/index.js';
import { defaultPoolSize, modelDimensionsFromConfig } from '../../src/tiers/cross-encoder/pool-sizing.js';

let root: string;
let tiny: string;
let ce: CrossEncoder;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rg-pool-'));
  tiny = (await writeCrossEncoderModelDir(join(root, 'tiny'), 'tiny', { seed: 42 })).dir;
  ce = await createCrossEncoder({ modelDir: tiny, workers: 1, maxPassageChars: 1000, maxRequestChars: 3000 });
});

afterAll(async () => {
  await ce?.close();
  await rm(root, { recursive: true, force: true });
});

async function until(condition: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('input checks', () => {
  it('accepts null or absent options and refuses non-objects with InvalidArgumentError', async () => {
    const a = await ce.score('q', ['p'], null);
    const b = await ce.score('q', ['p']);
    expect(a.logits[0]).toBe(b.logits[0]);
    await expect(ce.score('q', ['p'], 'soon' as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(ce.score('q', ['p'], { deadline: 'x' } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('refuses inputs over the character and pair limits with InputLimitError (RG_ERR_INPUT_LIMIT)', async () => {
    const over = await ce.score('q', ['x'.repeat(1001)]).catch((e: unknown) => e);
    expect(over).toBeInstanceOf(InputLimitError);
    expect(over).toBeInstanceOf(InvalidArgumentError);
    expect(over).toMatchObject({ code: 'RG_ERR_INPUT_LIMIT', limit: 'maxPassageChars', max: 1000, actual: 1001 });
    const request = await ce
      .score('q', ['x'.repeat(900), 'y'.repeat(900), 'z'.repeat(900), 'w'.repeat(900)])
      .catch((e: unknown) => e);
    expect(request).toMatchObject({ code: 'RG_ERR_INPUT_LIMIT', limit: 'maxRequestChars' });
    const query = await ce.score('q'.repeat(20_001), ['p']).catch((e: unknown) => e);
    expect(query).toMatchObject({ code: 'RG_ERR_INPUT_LIMIT', limit: 'maxQueryChars' });
    const pairs = await ce.score('q', new Array(1025).fill('p')).catch((e: unknown) => e);
    expect(pairs).toMatchObject({ code: 'RG_ERR_INPUT_LIMIT', limit: 'maxPassagesPerRequest' });
  });

  it('refuses absurd numeric options (1e300 is an integer to JS) with InvalidArgumentError', async () => {
    for (const bad of [
      { workers: 1e300 },
      { workers: 257 },
      { intraOpThreads: 1e300 },
      { maxBatchTokens: 2 ** 60 },
      { maxLength: 1e300 },
    ]) {
      await expect(createCrossEncoder({ modelDir: tiny, ...bad })).rejects.toBeInstanceOf(InvalidArgumentError);
    }
  });

  it('a directory in place of onnx/model.onnx is an InvalidArgumentError; a corrupt file a ModelFormatError', async () => {
    const dir = join(root, 'dir-model');
    await cp(tiny, dir, { recursive: true });
    await rm(join(dir, 'onnx', 'model.onnx'));
    await mkdir(join(dir, 'onnx', 'model.onnx'));
    await expect(createCrossEncoder({ modelDir: dir, workers: 2 })).rejects.toBeInstanceOf(InvalidArgumentError);
    const bad = join(root, 'corrupt');
    await cp(tiny, bad, { recursive: true });
    await writeFile(
      join(bad, 'onnx', 'model.onnx'),
      (await readFile(join(tiny, 'onnx', 'model.onnx'))).subarray(0, 5000),
    );
    await expect(createCrossEncoder({ modelDir: bad, workers: 2 })).rejects.toBeInstanceOf(ModelFormatError);
  });
});

describe('worker pool life cycle', () => {
  it('without workers / intraOpThreads the pool is sized by defaultPoolSize for this host and model', async () => {
    const config = JSON.parse(await readFile(join(tiny, 'config.json'), 'utf8'));
    const modelFile = join(tiny, 'onnx', 'model.onnx');
    const expected = defaultPoolSize({
      cores: availableParallelism(),
      model: modelDimensionsFromConfig(config),
      modelBytes: statSync(modelFile).size,
      memoryBytes: totalmem() / 2,
    });
    const sized = await createCrossEncoder({ modelDir: tiny });
    try {
      expect({ workers: sized.info.workers, intraOpThreads: sized.info.intraOpThreads }).toEqual({
        workers: expected.workers,
        intraOpThreads: expected.intraOpThreads,
      });
      expect(sized.stats().workers.readyWorkers).toBe(expected.workers);
    } finally {
      await sized.close();
    }
  });

  it('close() lets a running batch finish (its request resolves) and rejects queued work', async () => {
    const slow = await createCrossEncoderWithFaults(
      { modelDir: tiny, workers: 1, maxBatchTokens: 64 },
      { blockInferMs: 300 },
    );
    const running = slow.score('query', ['a passage']);
    await until(() => slow.stats().inFlightBatches === 1);
    const queued = slow.score('another query', ['x', 'y', 'z']);
    const queuedOutcome = queued.catch((e: unknown) => e);
    await until(() => slow.stats().queuedPairs > 0 || slow.stats().tokenizingPairs > 0);
    await slow.close();
    expect((await running).logits.length).toBe(1);
    expect(await queuedOutcome).toBeInstanceOf(DisposedError);
    expect(slow.stats().workers.readyWorkers).toBe(0);
  });

  it('close() with a timeout shorter than the running batch returns on time and rejects it', async () => {
    const slow = await createCrossEncoderWithFaults(
      { modelDir: tiny, workers: 1, closeTimeoutMs: 50 },
      { blockInferMs: 400 },
    );
    const running = slow.score('query', ['a passage']).catch((e: unknown) => e);
    await until(() => slow.stats().inFlightBatches === 1);
    await slow.close();
    // On time: close() returned while the batch was still running (its worker still there).
    expect(slow.stats().workers.readyWorkers).toBe(1);
    expect(await running).toBeInstanceOf(DisposedError);
    // The worker was not terminated mid-run: it finishes and exits by itself shortly after.
    await until(() => slow.stats().workers.readyWorkers === 0, 5000);
  });

  it('a worker that dies fails only its own batch (InferenceError) and is replaced', async () => {
    const faulty = await createCrossEncoderWithFaults(
      { modelDir: tiny, workers: 1, maxBatchTokens: 64 },
      { exitOnInfer: 1 },
    );
    try {
      const first = await faulty.score('q', ['dies with its worker']).catch((e: unknown) => e);
      expect(first).toBeInstanceOf(InferenceError);
      await until(() => faulty.stats().workers.readyWorkers === 1);
      expect(faulty.stats().workers).toMatchObject({ crashes: 1, replacements: 1, tasksLostToCrashes: 1 });
      const again = await faulty.score('q', ['scored by the replacement']);
      const clean = await ce.score('q', ['scored by the replacement']);
      expect(Math.abs(again.logits[0] - clean.logits[0])).toBeLessThan(1e-5);
    } finally {
      await faulty.close();
    }
  });
});
