/**
 * Worker-thread side of native-worker.test.ts: attaches to a model shared by the main thread
 * (no copy: the image is a SharedArrayBuffer) and predicts the rows it was given many times,
 * reporting the first result and whether every repetition agreed.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { treeModelFromShared, type SharedTreeModel } from '../../src/tiers/fast-path/tree-model.js';

const { handle, rows, nRows, repeats } = workerData as {
  handle: SharedTreeModel;
  rows: Float32Array;
  nRows: number;
  repeats: number;
};
const model = treeModelFromShared(handle);
const first = model.predict(rows, nRows, { output: 'margin' }) as Float32Array;
let stable = true;
for (let i = 0; i < repeats; i++) {
  const again = model.predict(rows, nRows, { output: 'margin' });
  for (let j = 0; j < first.length; j++) if (again[j] !== first[j]) stable = false;
}
const asyncOut = await model.predictAsync(rows, nRows, { output: 'margin' });
const asyncSame = asyncOut.every((v, j) => v === first[j]);
parentPort!.postMessage({ first, stable, asyncSame, shared: handle.image.buffer instanceof SharedArrayBuffer });
model.dispose();
