/**
 * The decision log behind `serve`: every protocol's requests are logged under the id the caller
 * got back, `relevance-gate replay` reproduces the live answers and reports in log order, an
 * unwritable directory never fails a request, and the drift figures reach /metrics.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDecisionLog } from '../../src/decision-log/index.js';
import type { RelevanceGateServer } from '../../src/server/index.js';
import { packageRoot } from '../../src/util/package-root.js';
import { postJson, scifactRequests, start } from '../server/helpers.js';
import { signalScorer, tempDir } from './helpers.js';

const run = promisify(execFile);
const RULES = {
  rules: [
    { name: 'contradicted', when: { signal: 'contradiction', op: '>', value: 0.4 }, route: 'conflicting' },
    { name: 'relevant', when: { signal: 'relevant', op: '>=', value: 'threshold' }, route: 'included' },
  ],
  threshold: 0.5,
  minKept: 1,
} as const;

interface GateAnswer {
  id: string;
  included: Array<{ id: string }>;
  conflicting: Array<{ id: string }>;
  excluded: Array<{ id: string }>;
}

async function replayCli(args: readonly string[]): Promise<{ stdout: string }> {
  const root = packageRoot();
  return run(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts'), 'replay', ...args], {
    cwd: root,
  });
}

describe('serve --decision-log and relevance-gate replay', () => {
  const t = tempDir();
  const logDir = join(t.dir, 'log');
  let server: RelevanceGateServer;
  const answers: GateAnswer[] = [];
  const work = scifactRequests(12, 10);

  beforeAll(async () => {
    server = await start({
      decisionLog: { dir: logDir },
      models: { signals: { type: 'scorer', scorer: signalScorer(), policy: RULES } },
    });
    const url = server.url as string;
    for (const [i, r] of work.entries()) {
      const model = i % 2 === 0 ? 'fast-path' : 'signals';
      const body = {
        model,
        query: r.query,
        passages: r.documents,
        ...(i % 4 === 1 ? { policy: { maxKept: 1 } } : {}),
      };
      const res = await postJson(`${url}/v1/gate`, body);
      expect(res.status).toBe(200);
      answers.push(res.body as GateAnswer);
    }
    const rerank = await postJson(`${url}/v1/rerank`, { query: work[0].query, documents: work[0].documents });
    expect(rerank.status).toBe(200);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/relevance_gate_signal_bucket\{model="signals",signal="evidence",le="0\.5"\} \d+/);
    expect(metrics).toMatch(/relevance_gate_decided_requests_total\{model="fast-path"\} 7/);
    expect(metrics).toMatch(
      /relevance_gate_decided_pairs_total\{model="signals",route="included",rule="relevant"\} \d+/,
    );
    expect(metrics).toMatch(/relevance_gate_empty_answers_total\{model="signals"\} \d+/);
    await server.close();
  });

  afterAll(() => {
    t.remove();
  });

  it('logs each answered request under the id the caller got, with the model policy and the call override', async () => {
    const { decisions, policies } = await readDecisionLog(logDir);
    expect(decisions.map((d) => d.requestId)).toEqual([...answers.map((a) => a.id), expect.any(String)]);
    expect(decisions.map((d) => d.endpoint)).toEqual([...answers.map(() => '/v1/gate'), '/v1/rerank']);
    expect(decisions[1].override).toEqual({ maxKept: 1 });
    expect(decisions[1].model).toBe('signals');
    expect(policies.get(decisions[1].policyHash)?.policy).toMatchObject({ threshold: 0.5, minKept: 1 });
    for (const [i, a] of answers.entries()) {
      const d = decisions[i];
      const routes = Object.fromEntries(d.passages.map((p) => [p.id, p.route]));
      for (const item of a.included) expect(routes[item.id]).toBe('included');
      for (const item of a.excluded) expect(routes[item.id]).toBe('excluded');
    }
  });

  it('replay --policy --json: requests, pairs and perRequest in log order; the same policy keeps every answer', async () => {
    const same = join(t.dir, 'same.json');
    writeFileSync(same, '{}');
    const out = join(t.dir, 'same-report.json');
    const { stdout } = await replayCli(['--log', logDir, '--policy', same, '--json', out]);
    expect(stdout).toMatch(/13 requests/);
    const report = JSON.parse(readFileSync(out, 'utf8')) as {
      requests: number;
      pairs: number;
      perRequest: Array<{ requestId: string; includedBefore: number; includedAfter: number }>;
      moves: unknown[];
    };
    expect(report.requests).toBe(13);
    expect(report.pairs).toBe(13 * 10);
    expect(report.moves).toEqual([]);
    for (const [i, a] of answers.entries())
      expect(report.perRequest[i]).toMatchObject({
        requestId: a.id,
        includedBefore: a.included.length,
        includedAfter: a.included.length,
      });
  });

  it('replay under another policy moves passages without scoring', async () => {
    const loose = join(t.dir, 'loose.json');
    writeFileSync(loose, JSON.stringify({ mode: 'threshold', threshold: 0.05, rules: null, minKept: 0 }));
    const out = join(t.dir, 'loose-report.json');
    await replayCli(['--log', logDir, '--policy', loose, '--json', out]);
    const report = JSON.parse(readFileSync(out, 'utf8')) as {
      perRequest: Array<{ includedBefore: number; includedAfter: number }>;
      routes: { before: { included: number }; after: { included: number } };
    };
    expect(report.routes.after.included).toBeGreaterThan(report.routes.before.included);
  });
});

describe('an unwritable decision-log directory', () => {
  it('keeps answering every request and counts the dropped records in /metrics', async () => {
    const t = tempDir();
    const file = join(t.dir, 'a-file');
    writeFileSync(file, 'not a directory');
    const server = await start({ decisionLog: { dir: join(file, 'log') } });
    try {
      const url = server.url as string;
      const [r] = scifactRequests(1, 6);
      for (let i = 0; i < 20; i++) {
        const res = await postJson(`${url}/v1/gate`, { query: r.query, passages: r.documents });
        expect(res.status).toBe(200);
      }
      // The log hands records to its writer thread in batches: the drops show up within moments.
      let metrics = '';
      let dropped: RegExpExecArray | null = null;
      for (let wait = 0; wait < 100 && !(Number(dropped?.[1]) > 0); wait++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        metrics = await (await fetch(`${url}/metrics`)).text();
        dropped = /relevance_gate_decision_log_dropped_total\{reason="write-error"\} (\d+)/.exec(metrics);
      }
      expect(Number(dropped?.[1])).toBeGreaterThan(0);
      expect(metrics).toMatch(/relevance_gate_decision_log_records_total\{outcome="written"\} 0/);
    } finally {
      await server.close();
      t.remove();
    }
  });
});

describe('serve flags', () => {
  const serve = (args: readonly string[]) =>
    run(process.execPath, ['--import', 'tsx', join(packageRoot(), 'src', 'cli', 'main.ts'), 'serve', ...args], {
      cwd: packageRoot(),
    });

  it('--decision-log <dir> --decision-log-sample <rate> --inspector reach the configuration', async () => {
    const { stdout } = await serve([
      '--print-config',
      '--decision-log',
      'logs/decisions',
      '--decision-log-sample',
      '0.25',
      '--inspector',
    ]);
    const config = JSON.parse(stdout) as { decisionLog: { dir: string; sample: number }; inspector: boolean };
    expect(config.decisionLog.dir).toBe(join(packageRoot(), 'logs', 'decisions'));
    expect(config.decisionLog.sample).toBe(0.25);
    expect(config.inspector).toBe(true);
  });

  it('refuses a sample rate outside [0, 1] and a rate without a directory', async () => {
    await expect(serve(['--print-config', '--decision-log', 'x', '--decision-log-sample', '1.5'])).rejects.toThrow(
      /decision-log-sample must be a rate in \[0, 1\]/,
    );
    await expect(serve(['--print-config', '--decision-log-sample', '0.5'])).rejects.toThrow(
      /--decision-log-sample needs --decision-log/,
    );
  });
});
