/**
 * The node flags serving needs (src/server/node-flags.ts): `serve` with one process runs as a
 * primary and one worker started with `--no-memory-reducer`, unless node already runs with the
 * flag (or the operator set it either way), in which case it serves in its own process. Either
 * way the process that serves keeps the heap headroom.
 */
import { describe, expect, it } from 'vitest';
import { SERVING_NODE_FLAGS, missingServingFlags } from '../../src/server/index.js';
import { cmdlineOf, workersOf } from '../faults/serve-process.js';
import { postJson, spawnServeCli, waitForServing } from './helpers.js';

describe('missingServingFlags', () => {
  it('names --no-memory-reducer until it is given, in any of V8 spellings, or the operator chose otherwise', () => {
    expect(SERVING_NODE_FLAGS).toEqual(['--no-memory-reducer']);
    expect(missingServingFlags([])).toEqual(['--no-memory-reducer']);
    expect(missingServingFlags(['--import', 'tsx', '--max-old-space-size=512'])).toEqual(['--no-memory-reducer']);
    for (const given of ['--no-memory-reducer', '--nomemory-reducer', '--no-memory_reducer', '--memory-reducer'])
      expect(missingServingFlags(['--import', 'tsx', given]), given).toEqual([]);
    // A different flag that merely starts the same way is not it.
    expect(missingServingFlags(['--memory-reducer-for-small-heaps'])).toEqual(['--no-memory-reducer']);
    expect(missingServingFlags(['memory-reducer'])).toEqual(['--no-memory-reducer']);
  });
});

/** The process that serves keeps the default heap headroom (192 MiB), as the server's own listen() does. */
async function keepsHeapHeadroom(url: string): Promise<void> {
  const metrics = await (await fetch(`${url}/metrics`)).text();
  expect(metrics).toMatch(/^relevance_gate_heap_headroom_bytes 201326592$/m);
}

async function answersRerank(url: string): Promise<void> {
  const res = await postJson(`${url}/v1/rerank`, {
    query: 'what is BM25?',
    documents: ['BM25 is a ranking function used by search engines', 'bananas are yellow'],
  });
  expect(res.status).toBe(200);
  expect((res.body as { results: Array<{ index: number }> }).results[0].index).toBe(0);
}

describe.skipIf(process.platform !== 'linux')('serve and the serving node flags', () => {
  it('without the flag, one worker process started with it serves; SIGTERM stops both', async () => {
    const serve = spawnServeCli();
    try {
      const url = await waitForServing(serve, 600);
      expect(url, serve.stderr()).toBeDefined();
      expect(serve.stdout()).toMatch(/\(1 worker process with --no-memory-reducer\)/);
      const workers = workersOf(serve.child.pid as number);
      expect(workers).toHaveLength(1);
      expect(cmdlineOf(workers[0])).toContain('--no-memory-reducer');
      expect(cmdlineOf(serve.child.pid as number)).not.toContain('--no-memory-reducer');
      await answersRerank(url as string);
      await keepsHeapHeadroom(url as string);
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
      expect(workersOf(serve.child.pid as number)).toEqual([]);
    } finally {
      if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
    }
  }, 90_000);

  it('started with the flag, it serves in its own process', async () => {
    const serve = spawnServeCli([], ['--no-memory-reducer']);
    try {
      const url = await waitForServing(serve, 600);
      expect(url, serve.stderr()).toBeDefined();
      expect(serve.stdout()).toMatch(/\(1 process\)/);
      expect(workersOf(serve.child.pid as number)).toEqual([]);
      await answersRerank(url as string);
      await keepsHeapHeadroom(url as string);
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
    } finally {
      if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
    }
  }, 90_000);
});
