/**
 * `relevance-gate serve`: the HTTP reranking server (src/server). With no flags it serves the
 * shipped fast-path model as `fast-path` on 127.0.0.1:8080. Configuration layers, later winning:
 * config file (--config / RELEVANCE_GATE_CONFIG) < environment (RELEVANCE_GATE_*) < flags.
 * The API key comes from --api-key-file or RELEVANCE_GATE_API_KEY; --api-key still works but warns,
 * since every user of the host can read a process's command line.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InvalidArgumentError } from '../../errors.js';
import { isPositive, isPositiveInt, optionalNumberOption } from '../../util/number-option.js';
import { SHIPPED_MODEL_NAME } from '../../tiers/cross-encoder/shipped-model.js';

interface ServeCliOptions {
  host?: string;
  port?: string;
  apiKey?: string;
  apiKeyFile?: string;
  config?: string;
  processes?: string;
  model?: string;
  stats?: string;
  /** true: `--cross-encoder` given without a folder (the shipped model). */
  crossEncoder?: string | true;
  embedding?: string;
  routing?: string;
  defaultModel?: string;
  budgetMs?: string;
  cache: boolean;
  cacheMb?: string;
  redisUrl?: string;
  redisCluster?: string;
  approximateCache?: string;
  approximateThreshold?: string;
  maxDocuments?: string;
  maxDocumentChars?: string;
  bodyLimit?: string;
  maxInFlightPairs?: string;
  maxConcurrentRequests?: string;
  maxQueueMs?: string;
  admission?: string;
  ignoreRequestStart?: boolean;
  workers?: string;
  logLevel?: string;
  logPassages?: boolean;
  drainDelayMs?: string;
  heapHeadroomMb?: string;
  shutdownTimeoutMs?: string;
  printConfig?: boolean;
  decisionLog?: string;
  decisionLogSample?: string;
  inspector?: boolean;
  shadow?: string;
  shadowSample?: string;
}

const ENDPOINTS = [
  'POST /v1/rerank, POST /v2/rerank (Cohere; also Jina clients)',
  'POST /rerank, GET /info, GET /health (text-embeddings-inference)',
  'POST /v1/gate, POST /v1/gate/stream (NDJSON or SSE), GET /v1/models (gate decisions)',
  'GET /metrics (Prometheus), GET /health/live, GET /health/ready',
];

async function runServe(opts: ServeCliOptions): Promise<void> {
  const server = await import('../../server/index.js');
  const { isClusterWorker } = await import('../../server/cluster.js');
  if (isClusterWorker()) {
    // A forked worker: the primary resolved the configuration once and passes it down.
    await server.runCluster(server.resolveServerConfig({}), { log: (line) => process.stderr.write(`${line}\n`) });
    return;
  }
  const num = optionalNumberOption;
  if (opts.apiKey !== undefined && opts.apiKeyFile !== undefined)
    throw new InvalidArgumentError('give --api-key-file or --api-key, not both');
  if (opts.apiKey !== undefined)
    process.stderr.write(
      `relevance-gate: warning: --api-key puts the key on the command line, where any user of this host can read it (ps, /proc/<pid>/cmdline); give it with --api-key-file <path> or the ${server.ENVIRONMENT_VARIABLES.apiKey} environment variable instead\n`,
    );
  const { readApiKeyFile } = await import('../../server/config/index.js');
  const apiKey = opts.apiKeyFile === undefined ? opts.apiKey : await readApiKeyFile(opts.apiKeyFile);
  const configFile = opts.config ?? process.env[server.ENVIRONMENT_VARIABLES.config];
  const fromFile = configFile === undefined ? {} : await server.readConfigFile(configFile);
  const models: Record<string, unknown> = {};
  if (opts.model !== undefined || opts.stats !== undefined)
    models[server.DEFAULT_MODEL_NAME] = {
      ...((fromFile.models?.[server.DEFAULT_MODEL_NAME] as object | undefined) ?? {}),
      type: 'fast-path',
      ...(opts.model === undefined ? {} : { dir: opts.model }),
      ...(opts.stats === undefined ? {} : { stats: opts.stats }),
    };
  const workers = num('workers', opts.workers, isPositiveInt, 'a positive integer');
  if (opts.crossEncoder !== undefined || opts.embedding !== undefined) {
    const routing = opts.routing ?? 'cascade';
    if (routing !== 'fixed' && routing !== 'budget' && routing !== 'cascade')
      throw new InvalidArgumentError(`--routing must be fixed, budget or cascade, got "${routing}"`);
    const tiers = [server.DEFAULT_MODEL_NAME];
    if (opts.embedding !== undefined) {
      models.embedding = { type: 'embedding', dir: opts.embedding, ...(workers === undefined ? {} : { workers }) };
      tiers.push('embedding');
    }
    if (opts.crossEncoder !== undefined) {
      models['cross-encoder'] = {
        type: 'cross-encoder',
        dir: opts.crossEncoder === true ? SHIPPED_MODEL_NAME : opts.crossEncoder,
        ...(workers === undefined ? {} : { workers }),
      };
      tiers.push('cross-encoder');
    }
    models[routing] = { type: 'router', tiers, routing };
  }
  if (opts.admission !== undefined && opts.admission !== 'predictive' && opts.admission !== 'bounds')
    throw new InvalidArgumentError(`--admission must be predictive or bounds, got "${opts.admission}"`);
  if (opts.decisionLogSample !== undefined && opts.decisionLog === undefined)
    throw new InvalidArgumentError('--decision-log-sample needs --decision-log <dir>');
  const decisionLogSample = num(
    'decision-log-sample',
    opts.decisionLogSample,
    (n) => n >= 0 && n <= 1,
    'a rate in [0, 1]',
  );
  const flags: Record<string, unknown> = {
    decisionLog:
      opts.decisionLog === undefined
        ? undefined
        : { dir: opts.decisionLog, ...(decisionLogSample === undefined ? {} : { sample: decisionLogSample }) },
    inspector: opts.inspector === true ? true : undefined,
    shadows:
      opts.shadow === undefined
        ? undefined
        : {
            [opts.defaultModel ?? fromFile.defaultModel ?? server.DEFAULT_MODEL_NAME]: {
              model: opts.shadow,
              ...(opts.shadowSample === undefined
                ? {}
                : { sample: num('shadow-sample', opts.shadowSample, (n) => n >= 0 && n <= 1, 'a rate in [0, 1]') }),
            },
          },
    admission: {
      ...(opts.maxConcurrentRequests === undefined
        ? {}
        : {
            maxConcurrentRequests: num(
              'max-concurrent-requests',
              opts.maxConcurrentRequests,
              isPositiveInt,
              'a positive integer',
            ),
          }),
      ...(opts.maxQueueMs === undefined
        ? {}
        : { maxQueueMs: num('max-queue-ms', opts.maxQueueMs, (n) => n >= 0, 'a number of ms ≥ 0') }),
      ...(opts.admission === undefined ? {} : { predictive: opts.admission === 'predictive' }),
      ...(opts.ignoreRequestStart === true ? { requestStartHeader: false } : {}),
    },
    host: opts.host,
    port: num('port', opts.port, (n) => Number.isInteger(n) && n >= 0 && n <= 65_535, 'a port number 0..65535'),
    apiKey,
    processes: num('processes', opts.processes, isPositiveInt, 'a positive integer'),
    defaultModel: opts.defaultModel,
    budgetMs: num('budget-ms', opts.budgetMs, isPositive, 'a positive number of ms'),
    logLevel: opts.logLevel,
    logPassages: opts.logPassages === true ? true : undefined,
    heapHeadroomMb: num('heap-headroom-mb', opts.heapHeadroomMb, (n) => n >= 0, 'a number of MiB ≥ 0'),
    drainDelayMs: num('drain-delay-ms', opts.drainDelayMs, (n) => Number.isInteger(n) && n >= 0, 'an integer ≥ 0'),
    shutdownTimeoutMs: num(
      'shutdown-timeout-ms',
      opts.shutdownTimeoutMs,
      (n) => Number.isInteger(n) && n >= 0,
      'an integer ≥ 0',
    ),
    models: Object.keys(models).length === 0 ? undefined : models,
    cache: {
      ...(opts.cache ? {} : { enabled: false }),
      ...(opts.cacheMb === undefined ? {} : { l1Mb: num('cache-mb', opts.cacheMb, isPositive, 'a positive number') }),
      ...(opts.redisUrl === undefined ? {} : { redisUrl: opts.redisUrl }),
      ...(opts.redisCluster === undefined ? {} : { redisCluster: opts.redisCluster.split(',').map((n) => n.trim()) }),
      ...approximateCacheInput(opts),
    },
    limits: {
      ...(opts.maxDocuments === undefined
        ? {}
        : { documentsPerRequest: num('max-documents', opts.maxDocuments, isPositiveInt, 'a positive integer') }),
      ...(opts.maxDocumentChars === undefined
        ? {}
        : { maxDocumentChars: num('max-document-chars', opts.maxDocumentChars, isPositiveInt, 'a positive integer') }),
      ...(opts.bodyLimit === undefined
        ? {}
        : { bodyBytes: num('body-limit', opts.bodyLimit, isPositiveInt, 'a positive number of bytes') }),
      ...(opts.maxInFlightPairs === undefined
        ? {}
        : {
            maxInFlightPairs: num('max-in-flight-pairs', opts.maxInFlightPairs, isPositiveInt, 'a positive integer'),
          }),
    },
  };
  const config = server.resolveServerConfig(
    server.mergeConfigInputs(
      fromFile,
      server.configFromEnvironment(),
      flags as Parameters<typeof server.mergeConfigInputs>[0],
    ),
  );
  if (opts.printConfig) {
    process.stdout.write(
      `${JSON.stringify({ ...config, apiKey: config.apiKey === undefined ? null : '[set]' }, null, 2)}\n`,
    );
    return;
  }

  const flagsMissing = server.missingServingFlags(process.execArgv);
  const serving = describeProcesses(config.processes, flagsMissing);
  const describe = (url: string, scorers: string): string =>
    [
      `relevance-gate serving on ${url} (${serving})`,
      `  models: ${scorers}`,
      ...ENDPOINTS.map((e) => `  ${e}`),
      ...(config.decisionLog === undefined
        ? []
        : [
            `  decision log: ${config.decisionLog.dir} (sample ${config.decisionLog.sample}; replay with relevance-gate replay)`,
          ]),
      ...(config.inspector ? [`  inspector: ${url}/inspect`] : []),
      `  auth: ${config.apiKey === undefined ? `none (set --api-key-file or ${server.ENVIRONMENT_VARIABLES.apiKey} to require a Bearer token)` : 'Bearer token required (health and metrics open)'}`,
      `  try: curl -s ${url}/v1/rerank -H 'content-type: application/json' -d '{"query":"what is BM25?","documents":["BM25 is a ranking function","bananas are yellow"]}'`,
      '',
    ].join('\n');
  const modelList = Object.entries(config.models)
    .map(([name, m]) => `${name}${name === config.defaultModel ? ' (default)' : ''} [${m.type}]`)
    .join(', ');

  // What a reload (SIGHUP) reads: the config file and the environment again, with the same flags.
  const reloadInput = async () =>
    server.mergeConfigInputs(
      configFile === undefined ? {} : await server.readConfigFile(configFile),
      server.configFromEnvironment(),
      flags as Parameters<typeof server.mergeConfigInputs>[0],
    );
  // One process serves in this one only when node already runs with the serving flags
  // (`node --no-memory-reducer …/relevance-gate serve`); otherwise a worker started with them does.
  if (config.processes > 1 || flagsMissing.length > 0) {
    const code = await server.runCluster(config, {
      log: (line) => process.stderr.write(`${line}\n`),
      onReady: (url) => process.stdout.write(describe(url, modelList)),
      reloadInput,
    });
    process.exit(code);
  }

  const handle = await server.createServer(config);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    handle.app.log.info(`${signal}: draining in-flight requests, then exiting`);
    handle.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`relevance-gate: shutdown failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // SIGHUP: the config file and environment read again, the models rebuilt, warmed and swapped in;
  // requests in flight finish on the old ones (src/server/reload.ts).
  process.on('SIGHUP', () => {
    reloadInput()
      .then((input) => handle.reload(input))
      .then(
        () => handle.app.log.info('SIGHUP: models and policy reloaded'),
        (error: unknown) =>
          handle.app.log.error(`SIGHUP: reload failed, the previous models keep serving: ${(error as Error).message}`),
      );
  });
  let url: string;
  try {
    url = await handle.listen();
    await handle.ready;
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
  const described = handle.registry
    .all()
    .map(
      (m) =>
        `${m.name}${m.name === config.defaultModel ? ' (default)' : ''} [${m.description.type}${m.description.routing === undefined ? '' : ` ${m.description.routing}`}]`,
    )
    .join(', ');
  process.stdout.write(describe(url, described));
}

export function register(program: Command): void {
  program
    .command('serve')
    .description(
      'HTTP reranking server: Cohere v1/v2 and TEI rerank protocols, the gate API, Prometheus metrics (default: the shipped fast path on 127.0.0.1:8080)',
    )
    .option('--host <host>', 'interface to bind (default 127.0.0.1; 0.0.0.0 to serve the network)')
    .option('--port <port>', 'port (default 8080; 0 = any free port)')
    .option(
      '--api-key-file <path>',
      'require Authorization: Bearer <key> on everything but health and metrics, the key read from this file (or set RELEVANCE_GATE_API_KEY)',
    )
    .option('--api-key <key>', 'the same with the key on the command line (visible in ps: prefer --api-key-file)')
    .option('--config <file>', 'JSON config file (models, policy, cache, limits; see docs/server.md)')
    .option('--processes <n>', 'HTTP processes sharing the port (node:cluster); default 1')
    .option('--model <dir>', 'fast-path model directory served as "fast-path" (default: the shipped model)')
    .option('--stats <file>', 'corpus statistics of your collection for the fast path (relevance-gate stats)')
    .option(
      '--cross-encoder [dir]',
      'also serve a cross-encoder as "cross-encoder" and a router over both: this folder, or the package\'s trained model (no folder, or shipped)',
    )
    .option(
      '--embedding <dir>',
      'also serve this bi-encoder folder (import-model --as bi-encoder) as "embedding", a router tier between the fast path and a cross-encoder',
    )
    .option('--routing <mode>', 'routing of that router, also its model name: cascade | budget | fixed', 'cascade')
    .option(
      '--workers <n>',
      'cross-encoder / embedding worker threads per process (default: cores shared by all processes)',
    )
    .option('--default-model <name>', 'model used when a request names none (default fast-path)')
    .option('--budget-ms <ms>', 'latency budget of requests that carry none (default 100)')
    .option('--no-cache', 'run without the score cache')
    .option('--cache-mb <mb>', 'score cache (L1) size, MiB (default 256)')
    .option('--redis-url <url>', 'shared L2 score cache (redis://...)')
    .option(
      '--redis-cluster <nodes>',
      'shared L2 score cache on a Redis Cluster: start-up nodes host:port,host:port,...',
    )
    .option(
      '--approximate-cache <embedding-model-dir>',
      "reuse near-identical queries' scores (off by default; docs/cache.md): queries embedded with this bi-encoder folder",
    )
    .option(
      '--approximate-threshold <cosine>',
      'with --approximate-cache: query-embedding cosine at or above which scores are reused (default 0.96)',
    )
    .option('--max-documents <n>', 'documents per request at most (default 1000)')
    .option('--max-document-chars <n>', 'characters of a document scored, the rest truncated (default 32768)')
    .option('--body-limit <bytes>', 'request body limit (default 2097152)')
    .option('--max-in-flight-pairs <n>', 'pairs in flight per model before 429 (default 16384)')
    .option(
      '--max-concurrent-requests <n>',
      'requests served at once per process before 429 at arrival, like TEI (default 512)',
    )
    .option(
      '--max-queue-ms <ms>',
      'longest wait for a saturated event loop before a request is refused (429) at arrival (default 5)',
    )
    .option(
      '--admission <mode>',
      'predictive: also refuse (429) what its age and model prediction say cannot finish in its budget; bounds: the bounds only (default predictive)',
    )
    .option('--ignore-request-start', 'do not honour the client send time in x-request-start')
    .option('--log-level <level>', 'fatal | error | warn | info | debug | trace | silent (default info)')
    .option('--log-passages', 'log each query text at debug level (off by default; document text is never logged)')
    .option(
      '--heap-headroom-mb <mb>',
      'garbage kept between major GCs: fewer main-thread pauses for that much more heap; 0 = V8 sizing (default 192)',
    )
    .option('--drain-delay-ms <ms>', 'after SIGTERM, answer readiness 503 this long before closing (default 0)')
    .option('--shutdown-timeout-ms <ms>', 'longest wait for in-flight requests at shutdown (default 30000)')
    .option(
      '--decision-log <dir>',
      'record decisions (query hash, signals, route, rule per passage) as NDJSON files in <dir>, rotated and bounded (docs/decision-log.md)',
    )
    .option('--decision-log-sample <rate>', 'share of requests the decision log records, 0..1 (default 1)')
    .option('--inspector', 'serve the inspector page at /inspect (behind the API key when one is set)')
    .option(
      '--shadow <model>',
      "a configured model (e.g. cross-encoder) that also decides a sample of the default model's requests in the background, into the decision log",
    )
    .option('--shadow-sample <rate>', 'share of requests the shadow decides, 0..1 (default 0.1)')
    .option('--print-config', 'print the resolved configuration and exit')
    .action(runServe);
}

/** cache.approximate from --approximate-cache / --approximate-threshold (a path made absolute: the config's baseDir is not the shell's). */
function approximateCacheInput(opts: ServeCliOptions): {
  approximate?: { embeddingModel: string; threshold?: number };
} {
  if (opts.approximateCache === undefined) {
    if (opts.approximateThreshold !== undefined)
      throw new InvalidArgumentError('--approximate-threshold needs --approximate-cache <embedding-model-dir>');
    return {};
  }
  const threshold = optionalNumberOption(
    'approximate-threshold',
    opts.approximateThreshold,
    (n) => n > 0 && n <= 1,
    'a cosine in (0, 1]',
  );
  return {
    approximate: {
      embeddingModel: resolve(opts.approximateCache),
      ...(threshold === undefined ? {} : { threshold }),
    },
  };
}

/** What serves, for the start-up line: this process alone, or workers (and the flags they get). */
function describeProcesses(processes: number, flagsMissing: readonly string[]): string {
  if (processes === 1 && flagsMissing.length === 0) return '1 process';
  const workers = `${processes} worker process${processes === 1 ? '' : 'es'}`;
  return flagsMissing.length === 0 ? workers : `${workers} with ${flagsMissing.join(' ')}`;
}
