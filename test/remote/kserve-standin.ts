/**
 * A stand-in for a Triton / KServe inference server, written from the Open Inference Protocol
 * (KServe v2) HTTP/REST specification, that runs real ONNX cross-encoders with onnxruntime-node:
 *   GET  /v2/health/live, /v2/health/ready               200, or 400 while not ready (the spec: 4xx = false)
 *   GET  /v2/models/<m>[/versions/<v>]                    model metadata {name, versions, platform, inputs, outputs}
 *   GET  /v2/models/<m>[/versions/<v>]/ready              200 / 400
 *   GET  /v2/models/<m>[/versions/<v>]/config             Triton's model configuration (max_batch_size), when enabled
 *   POST /v2/models/<m>[/versions/<v>]/infer              JSON tensors in, JSON tensors out
 * Errors are an HTTP status with `{"error": "..."}`, with Triton's messages where a client reads
 * them (an unknown model, a batch over max_batch_size). Also: a request-body limit answered 413
 * (a proxy in front of the server), models that never answer or that fail, and counters of what
 * was asked (rows per infer, requests whose client went away before the answer).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';

export interface StandinModel {
  /** A model folder with onnx/model.onnx (a generated cross-encoder). */
  readonly dir: string;
  /** Triton's max_batch_size: > 0 caps the rows of one request; 0: no batching limit. Default 0. */
  readonly maxBatchSize?: number;
  /** Versions served; default ['1']. */
  readonly versions?: readonly string[];
  /** Infer requests are held and never answered. */
  readonly hang?: boolean;
  /** Infer requests are answered with this error. */
  readonly fail?: { readonly status: number; readonly message: string };
}

export interface StandinOptions {
  readonly models: Readonly<Record<string, StandinModel>>;
  /** Serve Triton's GET …/config (a KServe server has none: 404). Default true. */
  readonly config?: boolean;
  /** Request bodies above this many bytes are answered 413. */
  readonly maxBodyBytes?: number;
}

export interface Standin {
  readonly url: string;
  /** What GET /v2/health/ready answers; settable. */
  ready: boolean;
  /** Rows of every infer request that reached a model (answered or not), in arrival order. */
  readonly inferRows: number[];
  /** Infer requests answered 413 for their size. */
  tooLarge: number;
  /** GET requests, by path. */
  readonly gets: string[];
  /** Held (hang) infer requests whose client closed the connection before an answer. */
  cancelled: number;
  close(): Promise<void>;
}

const ORT_TO_V2: Readonly<Record<string, string>> = { int64: 'INT64', int32: 'INT32', float32: 'FP32' };

interface Loaded {
  readonly session: ort.InferenceSession;
  readonly inputs: ReadonlyArray<{ name: string; datatype: string; shape: number[] }>;
  readonly outputs: ReadonlyArray<{ name: string; datatype: string; shape: number[] }>;
}

function tensorsOf(metadata: readonly ort.InferenceSession.ValueMetadata[]) {
  return metadata.map((m) => {
    if (!m.isTensor) throw new Error(`${m.name} is not a tensor`);
    return {
      name: m.name,
      datatype: ORT_TO_V2[m.type] ?? m.type.toUpperCase(),
      // Symbolic dimensions are variable: -1, as the protocol writes them.
      shape: m.shape.map((d) => (typeof d === 'number' ? d : -1)),
    };
  });
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Row-major data, flat or nested, as one flat list. */
function flat(data: unknown): unknown[] {
  return Array.isArray(data) ? data.flatMap((v) => (Array.isArray(v) ? flat(v) : [v])) : [];
}

export async function startStandin(options: StandinOptions): Promise<Standin> {
  const loaded = new Map<string, Loaded>();
  for (const [name, model] of Object.entries(options.models)) {
    const session = await ort.InferenceSession.create(join(model.dir, 'onnx', 'model.onnx'), {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
    });
    loaded.set(name, { session, inputs: tensorsOf(session.inputMetadata), outputs: tensorsOf(session.outputMetadata) });
  }
  const held = new Set<ServerResponse>();

  const state: Standin = {
    url: '',
    ready: true,
    inferRows: [],
    tooLarge: 0,
    gets: [],
    cancelled: 0,
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      for (const l of loaded.values()) await l.session.release();
    },
  };

  /** The model and version a path names; Triton's message for one it does not serve. */
  const modelAt = (name: string, version: string | undefined): [StandinModel, Loaded] => {
    const model = options.models[name];
    const versions = model?.versions ?? ['1'];
    if (model === undefined) throw new HttpError(400, `Request for unknown model: '${name}' is not found`);
    if (version !== undefined && !versions.includes(version))
      throw new HttpError(400, `Request for unknown model: '${name}' version ${version} is not found`);
    return [model, loaded.get(name) as Loaded];
  };

  const infer = async (
    name: string,
    model: StandinModel,
    l: Loaded,
    body: Buffer,
    res: ServerResponse,
  ): Promise<void> => {
    let request: { id?: unknown; inputs?: unknown; outputs?: unknown };
    try {
      request = JSON.parse(body.toString('utf8'));
    } catch (error) {
      throw new HttpError(400, `failed to parse the request JSON buffer: ${(error as Error).message}`);
    }
    if (!Array.isArray(request.inputs)) throw new HttpError(400, 'inference request has no inputs');
    const given = new Map<string, { shape: number[]; datatype: string; data: unknown }>();
    for (const input of request.inputs as Array<Record<string, unknown>>) given.set(String(input.name), input as never);
    let batch = -1;
    const feeds: Record<string, ort.Tensor> = {};
    for (const expected of l.inputs) {
      const input = given.get(expected.name);
      if (input === undefined)
        throw new HttpError(400, `expected ${l.inputs.length} inputs but got ${given.size} inputs for model '${name}'`);
      if (input.datatype !== expected.datatype)
        throw new HttpError(
          400,
          `unexpected datatype ${input.datatype} for inference input '${expected.name}', expecting ${expected.datatype}`,
        );
      const shape = input.shape;
      if (!Array.isArray(shape) || shape.length !== expected.shape.length)
        throw new HttpError(400, `unexpected shape for input '${expected.name}' for model '${name}'`);
      if (batch >= 0 && shape[0] !== batch) throw new HttpError(400, 'inputs disagree on the batch size');
      batch = shape[0];
      const values = flat(input.data);
      const count = shape.reduce((a, b) => a * b, 1);
      if (values.length !== count || !values.every((v) => Number.isSafeInteger(v)))
        throw new HttpError(400, `unexpected number of elements for input '${expected.name}'`);
      feeds[expected.name] =
        expected.datatype === 'INT64'
          ? new ort.Tensor(
              'int64',
              BigInt64Array.from(values as number[], (v) => BigInt(v)),
              shape,
            )
          : new ort.Tensor('int32', Int32Array.from(values as number[]), shape);
    }
    for (const key of given.keys())
      if (!l.inputs.some((i) => i.name === key))
        throw new HttpError(400, `unexpected inference input '${key}' for model '${name}'`);
    const max = model.maxBatchSize ?? 0;
    if (max > 0 && batch > max)
      throw new HttpError(400, `inference request batch-size must be <= ${max} for '${name}'`);
    state.inferRows.push(batch);
    if (model.hang === true) {
      held.add(res);
      res.on('close', () => {
        if (held.delete(res) && !res.writableEnded) state.cancelled++;
      });
      return;
    }
    if (model.fail !== undefined) throw new HttpError(model.fail.status, model.fail.message);
    const requested = Array.isArray(request.outputs)
      ? (request.outputs as Array<{ name?: unknown }>).map((o) => String(o.name))
      : l.outputs.map((o) => o.name);
    for (const r of requested)
      if (!l.outputs.some((o) => o.name === r)) throw new HttpError(400, `unexpected inference output '${r}'`);
    const results = await l.session.run(feeds);
    send(res, 200, {
      ...(typeof request.id === 'string' ? { id: request.id } : {}),
      model_name: name,
      model_version: (model.versions ?? ['1'])[0],
      outputs: requested.map((r) => {
        const t = results[r];
        return {
          name: r,
          datatype: ORT_TO_V2[t.type] ?? t.type,
          shape: t.dims,
          data: Array.from(t.data as Float32Array),
        };
      }),
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const body = await readBody(req);
    if (options.maxBodyBytes !== undefined && body.length > options.maxBodyBytes) {
      state.tooLarge++;
      throw new HttpError(413, `request body of ${body.length} bytes is over the ${options.maxBodyBytes}-byte limit`);
    }
    if (req.method === 'GET') state.gets.push(path);
    if (req.method === 'GET' && path === '/v2/health/live') return send(res, 200, { live: true });
    if (req.method === 'GET' && path === '/v2/health/ready')
      return send(res, state.ready ? 200 : 400, { ready: state.ready });
    const m = /^\/v2\/models\/([^/]+)(?:\/versions\/([^/]+))?(\/ready|\/config|\/infer)?$/.exec(path);
    if (m === null) throw new HttpError(404, 'Not Found');
    const name = decodeURIComponent(m[1]);
    const version = m[2] === undefined ? undefined : decodeURIComponent(m[2]);
    const [model, l] = modelAt(name, version);
    const what = m[3] ?? '';
    if (req.method === 'GET' && what === '')
      return send(res, 200, {
        name,
        versions: model.versions ?? ['1'],
        platform: 'onnxruntime_onnx',
        inputs: l.inputs,
        outputs: l.outputs,
      });
    if (req.method === 'GET' && what === '/ready')
      return send(res, state.ready ? 200 : 400, { name, ready: state.ready });
    if (req.method === 'GET' && what === '/config') {
      if (options.config === false) throw new HttpError(404, 'Not Found');
      const max = model.maxBatchSize ?? 0;
      // With batching, Triton's dims leave out the batch dimension.
      const dims = (shape: number[]) => (max > 0 ? shape.slice(1) : shape);
      return send(res, 200, {
        name,
        platform: 'onnxruntime_onnx',
        backend: 'onnxruntime',
        max_batch_size: max,
        input: l.inputs.map((i) => ({ name: i.name, data_type: `TYPE_${i.datatype}`, dims: dims(i.shape) })),
        output: l.outputs.map((o) => ({ name: o.name, data_type: `TYPE_${o.datatype}`, dims: dims(o.shape) })),
      });
    }
    if (req.method === 'POST' && what === '/infer') return infer(name, model, l, body, res);
    throw new HttpError(405, `${req.method} is not allowed on ${path}`);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent || res.destroyed) return;
      if (error instanceof HttpError) send(res, error.status, { error: error.message });
      else send(res, 500, { error: (error as Error).message });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}
