/**
 * `relevance-gate bench`: open-loop load test of the gate + router + tiers in-process, with
 * coordinated-omission-safe HDR latencies, per-tier shares, a table, JSON and an SVG plot.
 * See docs/bench.md.
 */
import type { Command } from 'commander';
import type { BenchCommandOptions } from '../../tooling/loadgen/bench-command.js';

export function register(program: Command): void {
  program
    .command('bench')
    .description(
      'Open-loop load test (Poisson arrivals, latency from the scheduled send time, HDR histograms) of the gate with the tier router, ' +
        'on BM25 top-k passages of a real collection; table, JSON and an SVG of latency percentiles vs offered QPS.',
    )
    .requiredOption('--collection <dir>', 'collection folder: docs.jsonl, queries.jsonl, qrels.tsv')
    .option('--k <n>', 'passages per request (BM25 top-k)', '20')
    .requiredOption(
      '--qps <list>',
      "offered requests/s, comma list for a sweep; 'Nx' = N × the measured cross-encoder capacity (e.g. 2x)",
    )
    .option('--duration <sec>', 'measured seconds per point', '10')
    .option('--warmup <sec>', 'unmeasured seconds before each point at the same rate', '2')
    .option('--budget-ms <ms>', 'latency budget per request', '100')
    .option('--routing <list>', 'fixed | budget | cascade, comma list to compare in one run', 'cascade')
    .option('--fixed-tier <tier>', 'tier of fixed routing: cross-encoder | fast-path', 'cross-encoder')
    .option(
      '--cross-encoder <dir>',
      "cross-encoder model folder (a missing or empty one is generated as the TinyBERT-L2 speed/shape model), or shipped: the package's trained model",
      'shipped',
    )
    .option('--fast-path <dir>', 'fast-path model folder', 'models/fast-path-lexical')
    .option('--zipf <s>', 'draw queries by Zipf(s) over the distinct queries (default uniform)')
    .option(
      '--distinct <n>',
      'distinct queries (more than the collection has: synthesised pairs of queries, see docs/bench.md)',
    )
    .option('--json <file>', 'write the JSON report here')
    .option('--plot <file.svg>', 'write the latency-vs-offered-QPS plot here')
    .option('--no-cache', 'run without the score cache')
    .option('--cache-mb <mb>', 'score cache size', '256')
    .option(
      '--background-fill',
      'router: send shed pairs to the idle cross-encoder in the background, through the cache',
      false,
    )
    .option('--no-cache-fast-path', 'do not cache fast-path scores (cross-encoder scores only)')
    .option('--workers <n>', 'cross-encoder worker threads (default: the tier default)')
    .option('--max-batch-tokens <n>', 'cross-encoder batch token budget')
    .option('--max-queue-delay-ms <ms>', 'cross-encoder max queue delay')
    .option('--max-length <n>', 'cross-encoder max tokens per pair')
    .option('--threshold <p>', "cascade decision threshold (default: the fast-path model's recommended threshold)")
    .option('--headroom <f>', 'share of the remaining budget a prediction may fill (router)')
    .option('--return-margin-ms <ms>', 'router answers this long before the deadline')
    .option('--max-queued-pairs <n>', 'router bound on pairs outstanding on the cross-encoder')
    .option(
      '--no-loop-watch',
      "router: learn the answer-lag allowance from late answers only, not from the event loop's own stalls",
    )
    .option(
      '--capacity <sec>',
      'measure the cross-encoder capacity first for this long (auto 8 s when a QPS is relative)',
      '0',
    )
    .option(
      '--fixed-deadline',
      'pass the budget to the gate in fixed routing too (default: fixed = the naive policy, no deadline)',
      false,
    )
    .option('--seed <n>', 'workload seed', '1')
    .option(
      '--worker-nice <n>',
      'Linux: nice value (0..19) for the cross-encoder worker threads, so the event loop keeps priority (default 10, the cross-encoder default; 0: the process priority)',
    )
    .option(
      '--heap-headroom-mb <mb>',
      'garbage this process keeps between major GCs (the generator and an in-process gate); 0 = V8 sizing (default 192)',
    )
    .option('--no-progress', 'no live progress line')
    .option(
      '--url <url>',
      'drive a running server over HTTP instead of the in-process gate (e.g. http://127.0.0.1:8080)',
    )
    .option('--protocol <p>', 'protocol over HTTP: gate | cohere | tei', 'gate')
    .option(
      '--model <name>',
      'model name sent over HTTP (default: the server default; with --http-compare the routing mode)',
    )
    .option(
      '--api-key <key>',
      'Bearer token for the server (default: RELEVANCE_GATE_API_KEY; on the command line ps shows it)',
    )
    .option(
      '--no-request-start',
      'over HTTP, do not send x-request-start (the send time a load balancer adds; the server counts socket waits with it)',
    )
    .option(
      '--http-compare',
      'run in-process, then the same load over HTTP against a server started in a child process with the same tiers, then against a bare Fastify route (the HTTP floor): one table',
      false,
    )
    .action(async (opts: BenchCommandOptions) => {
      const { runBenchCommand } = await import('../../tooling/loadgen/bench-command.js');
      await runBenchCommand(opts);
    });
}
