/**
 * Piscina worker of the cross-encoder tier. Each worker owns one onnxruntime InferenceSession and
 * one tokenizer; `session.run` blocks the calling thread, which is why it lives here and not on
 * the main thread. Tasks: `describe` (load + contract), `tokenize` (one request's pairs → packed
 * ids), `infer` (a batch of tokenized pairs → logits). Buffers come back transferred.
 */
import { endianness } from 'node:os';
import { performance } from 'node:perf_hooks';
import * as ort from 'onnxruntime-node';
import { move, transferableSymbol, valueSymbol, workerData } from 'piscina';
import { ExecutionProviderUnavailableError, ModelContractError, serializeError } from './errors.js';
import { discoverContract, signalCount, type ModelContract } from './model-contract.js';
import type {
  DescribeResult,
  InferResult,
  InferTask,
  TokenizeResult,
  WorkerConfig,
  WorkerFailure,
  WorkerTask,
} from './protocol.js';
import { PairTokenizer } from './tokenize-pairs.js';

interface WorkerState {
  readonly session: ort.InferenceSession;
  readonly tokenizer: PairTokenizer;
  readonly contract: ModelContract;
  readonly signals: number;
}

const LITTLE_ENDIAN = endianness() === 'LE';

async function createSession(config: WorkerConfig): Promise<ort.InferenceSession> {
  const options: ort.InferenceSession.SessionOptions = {
    executionProviders: [config.executionProvider],
    intraOpNumThreads: config.intraOpThreads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    // Spinning intra-op threads burn the cores other workers need (measured: heavy jitter with
    // two sessions on two cores), so threads block instead.
    extra: { 'session.intra_op.allow_spinning': '0' } as unknown as ort.InferenceSession.SessionOptions['extra'],
  };
  if (config.executionProvider === 'cuda') {
    const available = ort.listSupportedBackends().some((b) => b.name === 'cuda');
    if (!available) {
      throw new ExecutionProviderUnavailableError(
        'executionProvider "cuda" was requested but this onnxruntime-node build has no CUDA backend on this platform',
      );
    }
    try {
      return await ort.InferenceSession.create(config.modelPath, options);
    } catch (cause) {
      throw new ExecutionProviderUnavailableError(
        `executionProvider "cuda" was requested but the CUDA session could not be created (CUDA/cuDNN libraries or GPU missing?): ${(cause as Error).message}`,
        { cause },
      );
    }
  }
  return ort.InferenceSession.create(config.modelPath, options);
}

async function init(config: WorkerConfig): Promise<WorkerState> {
  const tokenizer = PairTokenizer.fromFile({
    tokenizerPath: config.tokenizerPath,
    maxLength: config.maxLength,
    truncation: config.truncation,
  });
  const session = await createSession(config);
  const contract = discoverContract(session.inputMetadata, session.outputMetadata);
  const state: WorkerState = { session, tokenizer, contract, signals: signalCount(contract) };
  // Probe: a model whose metadata fits may still fail to run or return unexpected shapes.
  // Two real pairs of different lengths (so padding is exercised), ids from this tokenizer.
  const probeTokens = await tokenizer.encodePairs('probe query', ['a probe passage of a few words', 'x']);
  const probe = await infer(state, {
    kind: 'infer',
    ids: probeTokens.ids,
    typeIds: contract.tokenTypeIds === null ? null : probeTokens.typeIds,
    lengths: probeTokens.lengths,
  });
  if (probe.logits.length !== 2 * state.signals || probe.logits.some((v) => !Number.isFinite(v))) {
    throw new ModelContractError(
      `probe run returned ${probe.logits.length} values for 2 pairs × ${state.signals} signals`,
    );
  }
  return state;
}

/** Writes int32 values into an int64 tensor buffer without per-element BigInt conversion. */
function int64Tensor(batch: number, seq: number, fill: (view: Int32Array, stride: number) => void): ort.Tensor {
  const data = new BigInt64Array(batch * seq);
  if (LITTLE_ENDIAN) {
    fill(new Int32Array(data.buffer), 2);
  } else {
    const tmp = new Int32Array(batch * seq);
    fill(tmp, 1);
    for (let i = 0; i < tmp.length; i++) data[i] = BigInt(tmp[i]);
  }
  return new ort.Tensor('int64', data, [batch, seq]);
}

/** The output's float32 data, checked to hold batch × width values. */
function outputData(
  out: ort.InferenceSession.OnnxValueMapType,
  name: string,
  batch: number,
  width: number,
): Float32Array {
  const value = out[name];
  const data = value?.data;
  if (!(data instanceof Float32Array) || data.length !== batch * width) {
    throw new ModelContractError(
      `output "${name}" returned ${data instanceof Float32Array ? data.length : 'no float32'} values for a batch of ${batch} (expected ${batch * width})`,
    );
  }
  return data;
}

async function infer(state: WorkerState, task: InferTask): Promise<InferResult> {
  const started = performance.now();
  const { contract } = state;
  const batch = task.lengths.length;
  let seq = 1;
  for (let i = 0; i < batch; i++) seq = Math.max(seq, task.lengths[i]);
  const offsets = new Int32Array(batch);
  for (let i = 1; i < batch; i++) offsets[i] = offsets[i - 1] + task.lengths[i - 1];

  const feeds: Record<string, ort.Tensor> = {};
  feeds[contract.inputIds] = int64Tensor(batch, seq, (view, stride) => {
    for (let b = 0; b < batch; b++) {
      const len = task.lengths[b];
      const src = offsets[b];
      const dst = b * seq * stride;
      for (let t = 0; t < len; t++) view[dst + t * stride] = task.ids[src + t];
    }
  });
  feeds[contract.attentionMask] = int64Tensor(batch, seq, (view, stride) => {
    for (let b = 0; b < batch; b++) {
      const dst = b * seq * stride;
      for (let t = 0; t < task.lengths[b]; t++) view[dst + t * stride] = 1;
    }
  });
  if (contract.tokenTypeIds !== null) {
    const typeIds = task.typeIds;
    feeds[contract.tokenTypeIds] = int64Tensor(batch, seq, (view, stride) => {
      if (typeIds === null) return;
      for (let b = 0; b < batch; b++) {
        const len = task.lengths[b];
        const src = offsets[b];
        const dst = b * seq * stride;
        for (let t = 0; t < len; t++) view[dst + t * stride] = typeIds[src + t];
      }
    });
  }

  const out = await state.session.run(feeds);
  const signals = state.signals;
  const logits = new Float64Array(batch * signals);
  const head = contract.head;
  if (head.kind === 'single') {
    const data = outputData(out, head.name, batch, 1);
    for (let b = 0; b < batch; b++) logits[b] = data[b];
  } else if (head.kind === 'binary') {
    const data = outputData(out, head.name, batch, 2);
    for (let b = 0; b < batch; b++) logits[b] = data[2 * b + 1] - data[2 * b];
  } else {
    head.names.forEach((name, s) => {
      const data = outputData(out, name, batch, 1);
      for (let b = 0; b < batch; b++) logits[b * signals + s] = data[b];
    });
  }
  for (const value of Object.values(out)) value.dispose?.();
  return { logits, runMs: performance.now() - started };
}

/** Wraps a result so piscina transfers (not copies) the given buffers. */
function transferring<T>(value: T, buffers: ArrayBufferLike[]): T {
  const transferable = {
    get [transferableSymbol]() {
      return buffers;
    },
    get [valueSymbol]() {
      return value;
    },
  };
  return move(transferable as never) as unknown as T;
}

const config = workerData as WorkerConfig;
const ready: Promise<WorkerState> = init(config);
// Failures are reported per task (as data); keep an early rejection from crashing the thread.
ready.catch(() => undefined);

export default async function handle(
  task: WorkerTask,
): Promise<DescribeResult | TokenizeResult | InferResult | WorkerFailure> {
  try {
    const state = await ready;
    switch (task.kind) {
      case 'describe':
        return { contract: state.contract, vocabSize: state.tokenizer.vocabSize() };
      case 'tokenize': {
        const enc = await state.tokenizer.encodePairs(task.query, task.passages);
        const result: TokenizeResult = {
          ids: enc.ids,
          typeIds: enc.typeIds,
          lengths: enc.lengths,
          offsets: enc.offsets,
        };
        return transferring(result, [enc.ids.buffer, enc.typeIds.buffer, enc.lengths.buffer, enc.offsets.buffer]);
      }
      case 'infer': {
        const result = await infer(state, task);
        return transferring(result, [result.logits.buffer]);
      }
      default:
        throw new Error(`unknown task kind ${(task as { kind: unknown }).kind as string}`);
    }
  } catch (err) {
    return { error: serializeError(err) };
  }
}
