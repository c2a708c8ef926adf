/**
 * The server keeps the heap headroom while its HTTP server listens, whichever way it starts
 * listening (its own listen(), or a cluster worker listening on its private port through the
 * Fastify instance), and gives it back on close().
 */
import { describe, expect, it } from 'vitest';
import { createServer } from '../../src/server/index.js';
import { heldHeapHeadroomMb } from '../../src/util/heap-headroom.js';

const SILENT = { host: '127.0.0.1', port: 0, logLevel: 'silent', heapHeadroomMb: 999 } as const;
// Test files share worker processes: another file's server may hold the default headroom, so the
// checks compare with what was held before and use a headroom above the default.

describe('server heap headroom', () => {
  it('is held from listen() until close()', async () => {
    const before = heldHeapHeadroomMb();
    const server = await createServer(SILENT, { defaultMetrics: false });
    expect(heldHeapHeadroomMb()).toBe(before);
    await server.listen();
    expect(heldHeapHeadroomMb()).toBe(999);
    await server.close();
    expect(heldHeapHeadroomMb()).toBe(before);
  });

  it('is held when the Fastify instance listens by itself, as a cluster worker does', async () => {
    const before = heldHeapHeadroomMb();
    const server = await createServer(SILENT, { defaultMetrics: false });
    await server.app.listen({ host: '127.0.0.1', port: 0 });
    expect(heldHeapHeadroomMb()).toBe(999);
    const metrics = await (await fetch(`http://127.0.0.1:${portOf(server.app.server.address())}/metrics`)).text();
    expect(metrics).toMatch(/^relevance_gate_heap_headroom_bytes 1047527424$/m);
    await server.close();
    expect(heldHeapHeadroomMb()).toBe(before);
  });
});

function portOf(address: ReturnType<import('node:net').Server['address']>): number {
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}
