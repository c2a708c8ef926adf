/**
 * The server configuration's defaults: what resolveServerConfig fills in for a field a config
 * leaves out, and the cross-encoder thread sizing a model gets when it gives no `workers` /
 * `intraOpThreads`.
 */
import { availableParallelism } from 'node:os';

/**
 * The budget of requests that carry none, ms: the router's default budget (one owner; the server
 * hands the budget to the router unchanged).
 */
export { DEFAULT_BUDGET_MS } from '../../router/config.js';

/** The model name served when a request names none, and the shipped fast path's name. */
export const DEFAULT_MODEL_NAME = 'fast-path';
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8080;
export const DEFAULT_BODY_LIMIT_BYTES = 2 * 1024 * 1024;
export const DEFAULT_MAX_DOCUMENTS = 1000;
/** Characters of a document that are scored; the rest is cut (TEI `truncate: false` refuses longer ones). */
export const DEFAULT_MAX_DOCUMENT_CHARS = 32_768;
export const DEFAULT_MAX_QUERY_CHARS = 8192;
export const DEFAULT_MAX_BUDGET_MS = 60_000;
/** The gate is asked to answer this long before the request's deadline, leaving time to serialise and write. */
export const DEFAULT_RESPONSE_MARGIN_MS = 5;
export const DEFAULT_MAX_IN_FLIGHT_PAIRS = 16_384;
/**
 * Requests one process serves at once, server-wide, before it refuses more with 429 (TEI's
 * `--max-concurrent-requests`, whose default it shares). Measured capacity of one process on the
 * 2-core VM (bench/admission.ts): 1,900–2,900 fast-path requests/s (20 SciFact documents, no
 * cache) and 16–20 cross-encoder requests/s (TinyBERT-L2 shape, 1 worker, 8 documents), i.e. ~190–290
 * and ~6 requests completed within 100 ms / 300 ms budgets; 512 never binds before the queue, age
 * and prediction rules (docs/server.md "Under load") in steady operation, and bounds what clients
 * that hold requests open (slow bodies, long budgets) can pin.
 */
export const DEFAULT_MAX_CONCURRENT_REQUESTS = 512;
/**
 * Longest a request may wait for the event loop, within the loop's turn that handles it, once the
 * loop holds a standing queue (every wait above this for 50 ms: CoDel's test), ms; beyond it the
 * request is refused (429) at arrival. A turn then lasts about this long plus its refusals, so
 * every answer comes within a few turns of its request's arrival: 5 ms is CoDel's target.
 */
export const DEFAULT_MAX_QUEUE_MS = 5;
export const DEFAULT_CACHE_MB = 256;
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

/** Most worker sessions per cross-encoder per process (each holds a copy of the model), as the library's default. */
export const MAX_DEFAULT_CROSS_ENCODER_WORKERS = 4;

/**
 * Cross-encoder threads per process when the config gives none: every HTTP process keeps one core
 * for its event loop (HTTP, JSON, the fast path); the other cores are split evenly between the
 * processes' cross-encoder pools, as worker threads (at most 4 sessions each, like the library's
 * default) times onnxruntime intra-op threads. So processes × (1 + workers × intra-op threads)
 * never exceeds the cores, except that every pool keeps one worker on hosts with fewer cores.
 */
export function defaultCrossEncoderThreads(
  processes: number,
  crossEncoders: number,
  cores = availableParallelism(),
): { readonly workers: number; readonly intraOpThreads: number } {
  const perPool = Math.floor(Math.max(0, cores - processes) / Math.max(1, processes * crossEncoders));
  const workers = Math.max(1, Math.min(MAX_DEFAULT_CROSS_ENCODER_WORKERS, perPool));
  return { workers, intraOpThreads: Math.max(1, Math.floor(perPool / workers)) };
}
