import { describe, expect, it } from 'vitest';
import { buildCorpusStats } from '../../src/features/corpus-stats.js';
import { featuresAddon } from '../../src/features/native.js';

// The native functions validate every argument themselves: a wrong call throws a JS error, it
// never crashes the process (the TypeScript wrappers add typed errors on top).
describe('native feature extractor boundary', () => {
  it('throws on malformed arguments instead of crashing', async () => {
    const a = featuresAddon();
    const stats = (await buildCorpusStats([{ text: 'wing flutter' }])).native;
    const calls: Array<() => unknown> = [
      () => (a.featuresExtract as unknown as (...x: unknown[]) => unknown)(),
      () => a.featuresExtract({} as typeof stats, 'q', null, ['t'], null),
      () => a.featuresExtract(Object.create(stats) as typeof stats, 'q', null, ['t'], null),
      () => a.featuresExtract(stats, 5 as unknown as string, null, ['t'], null),
      () => a.featuresExtract(stats, 'q', null, 't' as unknown as string[], null),
      () => a.featuresExtract(stats, 'q', null, [5 as unknown as string], null),
      () => a.featuresExtract(stats, 'q', ['a', 'b'], ['t'], null),
      () => a.featuresExtract(stats, 'q', [5 as unknown as string], ['t'], null),
      () => a.featuresExtract(stats, 'q', null, ['t'], new Float32Array(2)),
      () => a.featuresExtract(stats, 'q', null, ['t'], new Float64Array(3) as unknown as Float32Array),
      () => a.featuresExtract(stats, 'q', null, [new Uint16Array(4) as unknown as Uint8Array], null),
      () => a.featuresTokenize(undefined as unknown as string),
      () => new a.FeatureCorpusStats('a\nb', new Uint32Array(1), new Uint32Array(1), new Uint32Array(1), 1, 1, 1),
      () => new a.FeatureCorpusStats('a', new Uint32Array(1), new Uint32Array(2), new Uint32Array(1), 1, 1, 1),
      () => new a.FeatureCorpusStats('a', new Uint32Array(1), new Uint32Array(1), new Uint32Array(1), -1, 1, 1),
      () => new a.FeatureCorpusStats('a', new Uint32Array(1), new Uint32Array(1), new Uint32Array(1), 1, Number.NaN, 1),
      () => new a.FeatureCorpusStats('', new Uint32Array(1), new Uint32Array(1), new Uint32Array(1), 1, 1, 1),
      () =>
        new a.FeatureCorpusStats('a', [1] as unknown as Uint32Array, new Uint32Array(1), new Uint32Array(1), 1, 1, 1),
      () => new a.FeatureCorpusStatsBuilder().add(1 as unknown as string, 'x'),
    ];
    for (const call of calls) expect(call).toThrow();
    await expect(
      Promise.resolve().then(() => a.featuresExtractAsync(stats, 'q', null, [{} as unknown as string], null)),
    ).rejects.toThrow();
    // A well-formed call still works afterwards, also on Buffers with invalid UTF-8.
    const rows = a.featuresExtract(
      stats,
      Buffer.from([0x77, 0x69, 0x6e, 0x67, 0xc0]),
      [undefined],
      [Buffer.from([0xff, 0x77, 0x69, 0x6e, 0x67])],
      null,
    );
    expect(rows[0]).toBeGreaterThan(0);
  });
});
