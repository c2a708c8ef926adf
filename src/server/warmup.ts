/**
 * Warm-up before readiness: a freshly loaded tier is slow on its first calls (JIT of the feature
 * and tree code, onnxruntime's first runs allocating on every worker). Without this the first
 * second of traffic pays for it — measured over HTTP as a ~300 ms stall right after start while
 * the in-process bench, which warms its pool first, had none. The tiers are called directly
 * (not through the gates) so the score cache does not fill with warm-up pairs.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Passage, Scorer } from '../index.js';
import { packageRoot } from '../util/package-root.js';

interface WarmupRequest {
  readonly query: string;
  readonly passages: readonly Passage[];
}

/** The shipped example request (a real query and 20 retrieved passages), or a synthetic one. */
export async function warmupRequest(): Promise<WarmupRequest> {
  try {
    const raw = JSON.parse(await readFile(join(packageRoot(), 'examples', 'request.json'), 'utf8')) as {
      query?: unknown;
      passages?: unknown;
    };
    if (typeof raw.query === 'string' && Array.isArray(raw.passages)) {
      const passages = raw.passages
        .filter((p): p is { text: string; title?: unknown } => typeof (p as { text?: unknown }).text === 'string')
        .map((p, i) => ({
          id: `warmup-${i}`,
          text: p.text,
          ...(typeof p.title === 'string' ? { title: p.title } : {}),
        }));
      if (passages.length > 0) return { query: raw.query, passages };
    }
  } catch {
    // fall through to the synthetic request
  }
  const words = 'relevance ranking retrieval passage query document evidence study result method'.split(' ');
  const passages = Array.from({ length: 20 }, (_, i) => ({
    id: `warmup-${i}`,
    text: Array.from({ length: 120 }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(' '),
  }));
  return { query: 'relevance ranking of retrieved passages', passages };
}

/** Calls the scorer `rounds` times with `parallel` concurrent requests; failures are ignored here (load errors surfaced earlier). */
export async function warmUp(scorer: Scorer, request: WarmupRequest, rounds: number, parallel: number): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    await Promise.all(
      Array.from({ length: parallel }, () =>
        Promise.resolve(scorer.score(request.query, request.passages)).catch(() => undefined),
      ),
    );
  }
}
