/**
 * The HTTP load generator sends each request's send time in `x-request-start` (what a load
 * balancer adds), in a form the server's admission reads back to the same millisecond, so the
 * server counts socket waits against the budget; `requestStart: false` leaves it out.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRequestStart, REQUEST_START_HEADER } from '../../src/server/admission.js';
import { createHttpTarget } from '../../src/tooling/loadgen/http-target.js';

let server: Server;
let url = '';
const seen: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"results":[]}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const passages = [{ id: 'a', text: 'one passage' }];

describe('x-request-start from the HTTP load generator', () => {
  it('carries the send time, read back by the server to the millisecond, beside the remaining budget', async () => {
    const target = createHttpTarget({ url, protocol: 'cohere' });
    try {
      seen.length = 0;
      const before = Date.now();
      await target.filter('q', passages, { deadline: before + 100 });
      const after = Date.now();
      const headers = seen[0] as IncomingHttpHeaders;
      const header = headers[REQUEST_START_HEADER];
      expect(header).toMatch(/^t=\d+$/);
      const sentAt = parseRequestStart(header);
      expect(sentAt).toBeGreaterThanOrEqual(before);
      expect(sentAt).toBeLessThanOrEqual(after);
      // The budget is what is left of the deadline at that send time.
      expect(Number(headers['x-budget-ms'])).toBeCloseTo(before + 100 - (sentAt as number), 6);
    } finally {
      target.close();
    }
  });

  it('is left out with requestStart: false', async () => {
    const target = createHttpTarget({ url, protocol: 'cohere', requestStart: false });
    try {
      seen.length = 0;
      await target.filter('q', passages, { deadline: Date.now() + 100 });
      expect(seen).toHaveLength(1);
      expect((seen[0] as IncomingHttpHeaders)[REQUEST_START_HEADER]).toBeUndefined();
      expect(Number((seen[0] as IncomingHttpHeaders)['x-budget-ms'])).toBeGreaterThan(0);
    } finally {
      target.close();
    }
  });
});
