/**
 * One compiled model used from several worker threads at once: each worker attaches to the
 * SharedArrayBuffer image with treeModelFromShared (no copy) and predicts concurrently with the
 * main thread; every thread must get exactly the main thread's margins.
 */
import { Worker } from 'node:worker_threads';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadXGBoostJson } from '../../src/tiers/fast-path/loaders/xgboost-json.js';
import { createTreeModel } from '../../src/tiers/fast-path/tree-model.js';
import { fixturePath, readMatrix } from './loader-fixtures.js';

interface WorkerReply {
  first: Float32Array;
  stable: boolean;
  asyncSame: boolean;
  shared: boolean;
}

describe('worker threads share one model', () => {
  it('three workers and the main thread predict the same margins concurrently', async () => {
    const model = createTreeModel(loadXGBoostJson(readFileSync(fixturePath('logistic_t500_d6.json'), 'utf8')), {
      asyncRowThreshold: 100,
    });
    const { rows, nRows, nCols } = readMatrix('logistic_t500_d6');
    const expected = model.predict(rows, nRows, { output: 'margin' });
    const handle = model.share();
    const replies = Array.from({ length: 3 }, (_, w) => {
      // Each worker gets a different slice so a mix-up between threads would show.
      const start = w * 150;
      const slice = rows.slice(start * nCols, (start + 200) * nCols);
      // The worker runs TypeScript source through tsx's loader, as the tests themselves do.
      const entry = new URL('./native-worker-thread.ts', import.meta.url).href;
      const worker = new Worker(
        `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(entry)}, ${JSON.stringify(import.meta.url)}))`,
        { eval: true, workerData: { handle, rows: slice, nRows: 200, repeats: 30 } },
      );
      return new Promise<{ start: number; reply: WorkerReply }>((resolve, reject) => {
        worker.once('message', (reply: WorkerReply) => resolve({ start, reply }));
        worker.once('error', reject);
        worker.once('exit', (code) => code !== 0 && reject(new Error(`worker exited with ${code}`)));
      });
    });
    // The main thread keeps predicting while the workers run.
    for (let i = 0; i < 30; i++) expect(model.predict(rows, nRows, { output: 'margin' })).toEqual(expected);
    for (const { start, reply } of await Promise.all(replies)) {
      expect(reply.shared).toBe(true);
      expect(reply.stable).toBe(true);
      expect(reply.asyncSame).toBe(true);
      expect(reply.first).toEqual(expected.subarray(start, start + 200));
    }
    model.dispose();
  }, 60_000);
});
