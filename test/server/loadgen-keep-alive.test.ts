/**
 * The HTTP load generator closes an idle keep-alive connection before the server would (the
 * server's `Keep-Alive: timeout` hint, 1 s early), so a request never goes out on a connection the
 * server is closing at that moment (the keep-alive race: ECONNRESET, counted as the target's error).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpTarget } from '../../src/tooling/loadgen/http-target.js';

let server: Server;
let url = '';
/** Per connection: when the last response ended, and when the client's FIN arrived (it closed first). */
const connections: { answeredAt: number; clientEndAt?: number; closedAt?: number }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"results":[]}', () => {
        const entry = (req.socket as Socket & { entry?: (typeof connections)[number] }).entry;
        if (entry !== undefined) entry.answeredAt = Date.now();
      });
    });
  });
  // Announced as `Keep-Alive: timeout=2`: the client should close after about 1 s of idleness.
  server.keepAliveTimeout = 2500;
  server.on('connection', (socket: Socket & { entry?: (typeof connections)[number] }) => {
    const entry: (typeof connections)[number] = { answeredAt: 0 };
    socket.entry = entry;
    connections.push(entry);
    socket.on('end', () => {
      entry.clientEndAt = Date.now();
    });
    socket.on('close', () => {
      entry.closedAt = Date.now();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('keep-alive connections of the HTTP load generator', () => {
  it("are closed by the generator before the server's keep-alive timeout", async () => {
    const target = createHttpTarget({ url, protocol: 'cohere' });
    try {
      await target.filter('q', [{ id: 'a', text: 'one passage' }], { deadline: Date.now() + 1000 });
      await new Promise((resolve) => setTimeout(resolve, 2200));
      expect(connections).toHaveLength(1);
      const [c] = connections;
      expect(c.clientEndAt).toBeDefined(); // the client sent FIN: it closed the connection...
      const idleMs = (c.clientEndAt as number) - c.answeredAt;
      expect(idleMs).toBeGreaterThan(800); // ...after the hinted idle time less 1 s...
      expect(idleMs).toBeLessThan(2000); // ...before the server's 2.5 s would have closed it
    } finally {
      target.close();
    }
  });
});
