/**
 * The HTTP floor of `bench --http-compare`: a bare Fastify app that parses the JSON body (as the
 * server does) and answers a constant-shaped body, run in a child process. What the server adds
 * on top of this floor is its own cost; what the floor costs is HTTP + JSON + the client.
 * Started with child_process.fork; it sends `{ type: 'listening', url }` and exits with its parent.
 */

async function main(): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false, bodyLimit: 2 * 1024 * 1024 });
  const tier = { scorer: 'floor', name: 'floor', counts: {} };
  const answer = (body: unknown) => {
    const b = (body as { passages?: unknown[]; documents?: unknown[]; texts?: unknown[] } | null) ?? {};
    const k = (b.passages ?? b.documents ?? b.texts ?? []).length;
    return { tier, stats: { retrieved: k, unscored: 0, unscoredByReason: {} }, results: [] };
  };
  for (const path of ['/v1/gate', '/v1/rerank', '/v2/rerank']) app.post(path, async (request) => answer(request.body));
  app.post('/rerank', async () => []);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const stop = (): void => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('disconnect', stop);
  process.on('SIGTERM', stop);
  process.send?.({ type: 'listening', url });
}

main().catch((error: unknown) => {
  process.send?.({ type: 'failed', error: error instanceof Error ? error.message : String(error) });
  process.exit(1);
});
