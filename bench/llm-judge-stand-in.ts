/**
 * The chat-completions protocol stand-in as a separate process for bench/llm-judge.ts, so the
 * server's work and its measurements (requests in flight, cancellations) do not share the bench's
 * event loop. Answers with a fixed latency and a deterministic P(yes) per (query, passage,
 * question). Talks to its parent over IPC: { type: 'stats' | 'reset' | 'requests' | 'close' }.
 *
 *   (started by bench/llm-judge.ts; argv: <latencyMs>)
 */
import { fnv1a } from '../src/util/seeded-random.js';
import { oracleHandler } from '../test/llm-judge/helpers.js';
import { startStandInServer } from '../test/llm-judge/stand-in-server.js';

const latencyMs = Number(process.argv[2] ?? '50');
/** Deterministic "judge": P(yes) from a hash of the query, the passage and the question. */
const oracle = (query: string, p: { text: string }, instruction: string): number =>
  0.02 + 0.96 * ((fnv1a(`${query}\0${p.text}\0${instruction}`) % 1000) / 999);

const server = await startStandInServer(oracleHandler(oracle, { delayMs: latencyMs }));
const send = (message: unknown): void => {
  process.send?.(message);
};
process.on('message', (message: { type: string }) => {
  if (message.type === 'stats')
    send({
      type: 'stats',
      requests: server.requests.length,
      maxInFlight: server.maxInFlight(),
      maxInFlightAnswered: server.maxInFlightAnswered(),
      cancelled: server.cancelled(),
      answered: server.answered(),
    });
  else if (message.type === 'reset') {
    server.resetCounters();
    send({ type: 'reset' });
  } else if (message.type === 'requests') send({ type: 'requests', bodies: server.requests.map((r) => r.body) });
  else if (message.type === 'close') void server.close().then(() => process.exit(0));
});
send({ type: 'ready', baseURL: server.baseURL });
