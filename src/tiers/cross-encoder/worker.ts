/**
 * Worker thread of the cross-encoder tier. Each worker owns one onnxruntime InferenceSession and
 * one tokenizer; `session.run` blocks the calling thread, which is why it lives here and not on
 * the main thread. Protocol and life cycle: protocol.ts. The worker loads and probes the model,
 * reports `ready` or `init-failed`, then runs one task at a time; on `shutdown` (sent only while
 * it runs nothing) it releases the session and exits by itself.
 */
import { endianness } from 'node:os';
import { performance } from 'node:perf_hooks';
import * as ort from 'onnxruntime-node';
import { parentPort, workerData } from 'node:worker_threads';
import { ModelFormatError } from '../../errors.js';
import { ExecutionProviderUnavailableError, ModelContractError, serializeError } from './errors.js';
import {
  discoverContract,
  discoverEmbeddingContract,
  signalCount,
  type IntegerInputType,
  type ModelContract,
} from './model-contract.js';
import type {
  DescribeResult,
  FromWorker,
  InferResult,
  InferTask,
  ToWorker,
  TokenizeResult,
  WorkerConfig,
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
  try {
    return await ort.InferenceSession.create(config.modelPath, options);
  } catch (cause) {
    throw new ModelFormatError(
      `onnxruntime cannot load ${config.modelPath} (corrupt, truncated or not an ONNX model?): ${(cause as Error).message}`,
      { cause },
    );
  }
}

async function init(config: WorkerConfig): Promise<WorkerState> {
  const tokenizer = PairTokenizer.fromFile({
    tokenizerPath: config.tokenizerPath,
    maxLength: config.maxLength,
    truncation: config.truncation,
    chunking: config.chunking,
  });
  const session = await createSession(config);
  const embedding = config.embedding;
  const contract =
    embedding === undefined
      ? discoverContract(session.inputMetadata, session.outputMetadata, config.modelConfig)
      : discoverEmbeddingContract(
          session.inputMetadata,
          session.outputMetadata,
          config.modelConfig ?? {},
          embedding.output,
          embedding.dimensions,
        );
  const state: WorkerState = { session, tokenizer, contract, signals: signalCount(contract) };
  // Probe: a model whose metadata fits may still fail to run or return unexpected shapes.
  // Two real pairs of different lengths (so padding is exercised), ids from this tokenizer; a
  // bi-encoder gets two single texts, as it reads them.
  const probeTexts = ['a probe passage of a few words', 'x'];
  const probeTokens =
    embedding === undefined
      ? await tokenizer.encodePairs('probe query', probeTexts)
      : await tokenizer.encodeInputs('', probeTexts, 'passage');
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
  // The largest id the tokenizer can emit must index the model's embedding table; otherwise every
  // call that meets that token would fail. One pair holding that id settles it at load.
  const maxTokenId = tokenizer.maxTokenId();
  const ids = Int32Array.from(probeTokens.ids.subarray(0, probeTokens.lengths[0]));
  ids[1] = maxTokenId;
  try {
    await infer(state, {
      kind: 'infer',
      ids,
      typeIds: contract.tokenTypeIds === null ? null : probeTokens.typeIds.slice(0, ids.length),
      lengths: Int32Array.of(ids.length),
    });
  } catch (cause) {
    throw new ModelContractError(
      `the tokenizer emits ids up to ${maxTokenId} but the model cannot embed id ${maxTokenId}: tokenizer and model do not match (${(cause as Error).message})`,
      { cause },
    );
  }
  return state;
}

/**
 * An integer input tensor of the element type the graph declares. `fill` writes int32 values at
 * `index × stride`: for int64 into the low words of the BigInt64Array buffer (no per-element
 * BigInt conversion; every value written is ≥ 0, so the high words stay 0).
 */
function intTensor(
  type: IntegerInputType,
  batch: number,
  seq: number,
  fill: (view: Int32Array, stride: number) => void,
): ort.Tensor {
  if (type === 'int32') {
    const data = new Int32Array(batch * seq);
    fill(data, 1);
    return new ort.Tensor('int32', data, [batch, seq]);
  }
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
  const types = contract.inputTypes;
  const pad = contract.padTokenId;
  feeds[contract.inputIds] = intTensor(types[contract.inputIds], batch, seq, (view, stride) => {
    // Padding slots hold pad_token_id, as the exporter's tokenizer pads (RoBERTa-style graphs derive
    // positions from ids ≠ pad).
    if (pad !== 0) for (let k = 0; k < batch * seq; k++) view[k * stride] = pad;
    for (let b = 0; b < batch; b++) {
      const len = task.lengths[b];
      const src = offsets[b];
      const dst = b * seq * stride;
      for (let t = 0; t < len; t++) view[dst + t * stride] = task.ids[src + t];
    }
  });
  feeds[contract.attentionMask] = intTensor(types[contract.attentionMask], batch, seq, (view, stride) => {
    for (let b = 0; b < batch; b++) {
      const dst = b * seq * stride;
      for (let t = 0; t < task.lengths[b]; t++) view[dst + t * stride] = 1;
    }
  });
  if (contract.tokenTypeIds !== null) {
    const typeIds = task.typeIds;
    feeds[contract.tokenTypeIds] = intTensor(types[contract.tokenTypeIds], batch, seq, (view, stride) => {
      if (typeIds === null) return;
      for (let b = 0; b < batch; b++) {
        const len = task.lengths[b];
        const src = offsets[b];
        const dst = b * seq * stride;
        for (let t = 0; t < len; t++) view[dst + t * stride] = typeIds[src + t];
      }
    });
  }

  if (contract.positionIds !== null) {
    // 0…S−1, or RoBERTa's padding_idx + 1 + i for tokens and padding_idx for pads.
    const offset = contract.positionScheme === 'padding-offset';
    feeds[contract.positionIds] = intTensor(types[contract.positionIds], batch, seq, (view, stride) => {
      for (let b = 0; b < batch; b++) {
        const len = task.lengths[b];
        const dst = b * seq * stride;
        for (let t = 0; t < seq; t++) view[dst + t * stride] = offset ? (t < len ? pad + 1 + t : pad) : t;
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
  } else if (head.kind === 'labels' || head.kind === 'vector') {
    // Row-major [batch, labels] (or [batch, dimensions] of a bi-encoder), as the output is.
    const data = outputData(out, head.name, batch, head.width);
    for (let j = 0; j < batch * head.width; j++) logits[j] = data[j];
  } else {
    head.names.forEach((name, s) => {
      const data = outputData(out, name, batch, 1);
      for (let b = 0; b < batch; b++) logits[b * signals + s] = data[b];
    });
  }
  for (const value of Object.values(out)) value.dispose?.();
  return { logits, runMs: performance.now() - started };
}

const config = workerData as WorkerConfig;
const port = parentPort;
if (port === null) throw new Error('worker.ts must run in a worker thread');
const faults = (config.replacement === true ? undefined : config.faults) ?? {};
let infers = 0;

async function setNice(increment: number | undefined): Promise<void> {
  if (increment === undefined || increment === 0) return;
  try {
    // Optional native helper (@napi-rs/nice); without it the worker keeps its priority.
    const mod = (await import('@napi-rs/nice' as string)) as { nice(inc: number): number };
    mod.nice(increment);
  } catch {
    // not available on this platform: documented as best effort
  }
}

function post(message: FromWorker, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer);
}

async function run(
  state: WorkerState,
  task: WorkerTask,
): Promise<{ result: TokenizeResult | InferResult; transfer: ArrayBuffer[] }> {
  if (task.kind === 'tokenize') {
    const enc = await state.tokenizer.encodeInputs(task.query, task.passages, config.pairInput ?? 'query-passage');
    const result: TokenizeResult = {
      ids: enc.ids,
      typeIds: enc.typeIds,
      lengths: enc.lengths,
      offsets: enc.offsets,
      ...(enc.chunks === undefined ? {} : { chunks: enc.chunks }),
    };
    const transfer = [enc.ids.buffer, enc.typeIds.buffer, enc.lengths.buffer, enc.offsets.buffer] as ArrayBuffer[];
    if (enc.chunks !== undefined) transfer.push(enc.chunks.buffer as ArrayBuffer);
    return { result, transfer };
  }
  if (task.kind === 'infer') {
    infers++;
    if (faults.exitOnInfer === infers) process.exit(7);
    if (faults.throwOnInfer === infers) {
      setImmediate(() => {
        throw new Error('injected uncaught error in a cross-encoder worker');
      });
      await new Promise(() => undefined);
    }
    if (faults.blockInferMs !== undefined)
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, faults.blockInferMs);
    const result = await infer(state, task);
    return { result, transfer: [result.logits.buffer as ArrayBuffer] };
  }
  throw new Error(`unknown task kind ${(task as { kind: unknown }).kind as string}`);
}

async function main(): Promise<void> {
  await setNice(config.niceIncrement);
  let state: WorkerState;
  try {
    state = await init(config);
    const injected = faults.failLoadOfWorker;
    if (injected !== undefined && injected.index === config.workerIndex) {
      await new Promise((r) => setTimeout(r, injected.delayMs));
      throw new ModelContractError(`injected load failure of worker ${injected.index}`);
    }
  } catch (err) {
    post({ type: 'init-failed', error: serializeError(err) });
    // Nothing runs any more: leaving is safe. The main thread may also stop us after this message.
    port?.close();
    return;
  }
  const describe: DescribeResult = {
    contract: state.contract,
    vocabSize: state.tokenizer.vocabSize(),
    maxTokenId: state.tokenizer.maxTokenId(),
  };
  // Tasks arrive one at a time (the pool never sends a second before the first is answered), but
  // chain them anyway so a shutdown can never overtake a running task.
  let chain: Promise<void> = Promise.resolve();
  port?.on('message', (message: ToWorker) => {
    chain = chain.then(async () => {
      if (message.type === 'shutdown') {
        await state.session.release().catch(() => undefined);
        port?.close();
        return;
      }
      try {
        const { result, transfer } = await run(state, message.task);
        post({ type: 'result', id: message.id, result }, transfer);
      } catch (err) {
        post({ type: 'failure', id: message.id, error: serializeError(err) });
      }
    });
  });
  post({ type: 'ready', describe });
}

void main();
