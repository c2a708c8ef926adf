/**
 * The inspector page in headless Chromium over a real logged run: it lists the decisions, shows a
 * request's dropped passages, and moving the threshold changes the counts to exactly what
 * `relevance-gate replay` (replayDecisionLog) computes from the log files for the same policy.
 * Also: the inspector is off by default and behind the API key (header or sign-in cookie).
 * Set INSPECTOR_SCREENSHOT=<file.png> to save a screenshot of the page.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayDecisionLog } from '../../src/decision-log/index.js';
import type { RelevanceGateServer } from '../../src/server/index.js';
import { postJson, scifactRequests, start } from '../server/helpers.js';
import { type Browser, chromiumPath, launchChromium, type Page } from './chromium.js';
import { signalScorer, tempDir } from './helpers.js';

const KEY = 'inspector-test-key-0123456789';
const auth = { authorization: `Bearer ${KEY}` };
const chromium = chromiumPath();
if (chromium === undefined && process.env.CI !== undefined)
  throw new Error('CI needs chromium for the inspector test (.ci/run installs the Debian package)');

describe('the inspector is opt-in and behind the API key', () => {
  it('is not served without --inspector', async () => {
    const server = await start({});
    try {
      expect((await fetch(`${server.url}/inspect`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it('needs the key as a Bearer header or the sign-in cookie', async () => {
    const server = await start({ inspector: true, apiKey: KEY });
    const url = server.url as string;
    try {
      expect((await fetch(`${url}/inspect`)).status).toBe(401);
      expect((await fetch(`${url}/inspect/api/decisions`)).status).toBe(401);
      expect((await fetch(`${url}/inspect`, { headers: auth })).status).toBe(200);
      expect((await fetch(`${url}/inspect/login`)).status).toBe(200);
      expect((await postJson(`${url}/inspect/login`, { key: 'wrong' })).status).toBe(401);
      const signedIn = await postJson(`${url}/inspect/login`, { key: KEY });
      expect(signedIn.status).toBe(200);
      const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0];
      expect(cookie).toMatch(/^rg_inspect=/);
      expect((await fetch(`${url}/inspect/api/decisions`, { headers: { cookie } })).status).toBe(200);
      // The cookie opens the inspector only, never the scoring API.
      expect((await postJson(`${url}/v1/gate`, { query: 'q', passages: ['p'] }, { cookie })).status).toBe(401);
    } finally {
      await server.close();
    }
  });
});

describe.skipIf(chromium === undefined)('the inspector page in headless Chromium', () => {
  const t = tempDir();
  const logDir = join(t.dir, 'log');
  let server: RelevanceGateServer;
  let browser: Browser;
  let page: Page;
  const work = scifactRequests(12, 10);

  beforeAll(async () => {
    server = await start({
      apiKey: KEY,
      inspector: true,
      decisionLog: { dir: logDir, includeQuery: true },
      models: { signals: { type: 'scorer', scorer: signalScorer(), policy: { threshold: 0.5, minKept: 1 } } },
      // The shipped fast path shadows the signals model: its decisions are in the window too.
      shadows: { signals: { model: 'fast-path', sample: 1, maxInFlight: 8 } },
    });
    const url = server.url as string;
    for (const [i, r] of work.entries()) {
      const res = await postJson(
        `${url}/v1/gate`,
        { model: i % 3 === 0 ? 'signals' : 'fast-path', query: r.query, passages: r.documents },
        auth,
      );
      expect(res.status).toBe(200);
    }
    browser = await launchChromium(chromium as string);
    page = await browser.open(`${url}/inspect/login`);
    await page.evaluate(`document.getElementById('key').value = ${JSON.stringify(KEY)}`);
    const loaded = page.evaluate(`document.getElementById('form').requestSubmit()`);
    await loaded;
    await page.waitFor(`location.pathname === '/inspect' && document.body.dataset.ready === 'true'`);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    t.remove();
  });

  /** Sets the page's threshold slider and waits for the re-route it triggers; the page's counts. */
  async function moveThreshold(value: number) {
    await page.evaluate(
      `(() => { const s = document.getElementById('threshold'); s.value = '${value}'; s.dispatchEvent(new Event('input')); })()`,
    );
    await page.waitFor(
      `document.getElementById('replay-status').textContent === 'done' && JSON.parse(document.getElementById('replay-status').dataset.policy).threshold === ${value}`,
    );
    return page.evaluate<Record<string, number>>(`(() => {
      const n = (id) => Number(document.getElementById(id).textContent);
      return { requests: n('replay-requests'), pairs: n('replay-pairs'), included: n('after-included'),
        conflicting: n('after-conflicting'), excluded: n('after-excluded'), empty: n('empty-after'), includedBefore: n('before-included') };
    })()`);
  }

  it('lists the decisions of the run (and its shadow decisions), newest first, and a request\u2019s dropped passages', async () => {
    // 12 requests, 4 of them to the shadowed model: 16 decisions.
    await page.waitFor(
      `(document.getElementById('refresh').click(), document.getElementById('decisions').dataset.count === '16')`,
    );
    const rows = await page.evaluate<string[]>(
      `[...document.querySelectorAll('#decisions tbody tr')].map((tr) => tr.dataset.requestId)`,
    );
    expect(rows).toHaveLength(16);
    const models = await page.evaluate<string[]>(
      `[...document.querySelectorAll('#decisions tbody tr td:nth-child(3)')].map((td) => td.textContent)`,
    );
    expect(models.filter((m) => m === 'fast-path (shadow)')).toHaveLength(4);
    expect(await page.evaluate<number>(`document.querySelectorAll('#timeline tbody tr').length`)).toBeGreaterThan(0);
    await page.evaluate(`document.querySelector('#decisions tbody tr').click()`);
    const all = await page.evaluate<number>(`document.querySelectorAll('#passages tbody tr').length`);
    expect(all).toBe(10);
    await page.evaluate(
      `(() => { const c = document.getElementById('dropped-only'); c.checked = true; c.dispatchEvent(new Event('change')); })()`,
    );
    const routes = await page.evaluate<string[]>(
      `[...document.querySelectorAll('#passages tbody tr td:nth-child(3)')].map((td) => td.textContent)`,
    );
    expect(routes.every((r) => r === 'excluded')).toBe(true);
    const histograms = await page.evaluate<number>(`document.querySelectorAll('#histograms .hist').length`);
    expect(histograms).toBeGreaterThan(0);
  });

  it('moving the threshold re-routes the window to the counts replay computes for the same policy', async () => {
    const low = await moveThreshold(0.2);
    const high = await moveThreshold(0.7);
    const shadowLine = await page.evaluate<string>(`document.getElementById('shadow-line').textContent`);
    expect(low.requests).toBe(12);
    expect(low.pairs).toBe(120);
    expect(low.included).toBeGreaterThan(high.included);
    if (process.env.INSPECTOR_SCREENSHOT !== undefined) {
      await page.evaluate(`document.querySelector('#decisions tbody tr:nth-child(2)').click()`);
      writeFileSync(process.env.INSPECTOR_SCREENSHOT, await page.screenshot());
    }
    await server.close();
    for (const [threshold, seen] of [
      [0.2, low],
      [0.7, high],
    ] as const) {
      const report = await replayDecisionLog(logDir, { policy: { mode: 'threshold', threshold } });
      expect({
        requests: report.requests,
        pairs: report.pairs,
        included: report.routes.after.included,
        conflicting: report.routes.after.conflicting,
        excluded: report.routes.after.excluded,
        empty: report.emptyAnswers.after,
        includedBefore: report.routes.before.included,
      }).toEqual(seen);
      expect(shadowLine).toBe(
        `shadow: ${report.shadow?.disagreements} of ${report.shadow?.pairs} pairs of ${report.shadow?.requests} requests routed otherwise than live (as logged)`,
      );
    }
  });
});
