import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { Packr } from 'msgpackr';
import { CorpusStats, CorpusStatsFormatError, InvalidArgumentError, loadCorpusStats } from '../../src/index.js';
import { CorpusStatsBuilder, buildCorpusStats, saveCorpusStats } from '../../src/features/corpus-stats.js';
import { extractFeatures } from '../../src/features/extract.js';

const dir = mkdtempSync(join(tmpdir(), 'rg-stats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const docs = [
  { id: '1', title: 'Boundary layer', text: 'The boundary layer of a flat plate in supersonic flow.' },
  { id: '2', title: '', text: 'Heat transfer in hypersonic flow; heat flux measurements.' },
  { id: '3', title: 'Wings', text: 'Wing flutter of swept wings at transonic speeds.' },
];

function writeJsonl(name: string, lines: readonly string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

describe('corpus statistics files', () => {
  it('builds the same statistics from a docs.jsonl and from an iterable', async () => {
    const path = writeJsonl(
      'docs.jsonl',
      docs.map((d) => JSON.stringify(d)),
    );
    const fromFile = await buildCorpusStats(path);
    const fromIterable = await buildCorpusStats(docs, { source: path });
    expect(fromFile.docCount).toBe(3);
    expect(Buffer.from(fromFile.encode()).equals(Buffer.from(fromIterable.encode()))).toBe(true);
    expect(fromFile.documentFrequency('flow')).toEqual({ body: 2, title: 0, any: 2 });
    expect(fromFile.documentFrequency('wing')).toEqual({ body: 1, title: 1, any: 1 });
  });

  it('round-trips through a file with identical bytes and identical features', async () => {
    const stats = await buildCorpusStats(docs);
    const file = join(dir, 'stats.msgpack');
    await saveCorpusStats(stats, file);
    const loaded = await loadCorpusStats(file);
    expect(loaded.docCount).toBe(stats.docCount);
    expect(loaded.termCount).toBe(stats.termCount);
    expect(loaded.avgBodyLength).toBe(stats.avgBodyLength);
    expect(loaded.avgTitleLength).toBe(stats.avgTitleLength);
    expect(Buffer.from(loaded.encode()).equals(readFileSync(file))).toBe(true);
    const passages = [{ title: 'Swept wings', text: 'flutter of swept wings in supersonic flow' }];
    expect(Array.from(extractFeatures(loaded, 'wing flutter supersonic', passages))).toEqual(
      Array.from(extractFeatures(stats, 'wing flutter supersonic', passages)),
    );
  });

  it('is deterministic: the same input gives the same bytes', async () => {
    const a = (await buildCorpusStats(docs)).encode();
    const b = (await buildCorpusStats(docs)).encode();
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
  });

  it('refuses corrupt files, other formats and other tokenizer versions with CorpusStatsFormatError', async () => {
    const good = (await buildCorpusStats(docs)).encode();
    expect(() => CorpusStats.decode(good.subarray(0, good.length - 10))).toThrow(CorpusStatsFormatError);
    expect(() => CorpusStats.decode(new Uint8Array([1, 2, 3]))).toThrow(CorpusStatsFormatError);
    const packr = new Packr({ useRecords: false });
    const base = packr.unpack(good) as Record<string, unknown>;
    const variants: Array<Record<string, unknown>> = [
      { ...base, format: 'something-else' },
      { ...base, formatVersion: 99 },
      { ...base, tokenizerVersion: 'rg-tok-0' },
      { ...base, docCount: -1 },
      { ...base, dfBody: (base.dfBody as number[]).slice(1) },
      { ...base, dfAny: (base.dfAny as number[]).map(() => 1e9) },
      { ...base, terms: 'a\nb' },
      { ...base, terms: 42 },
    ];
    for (const v of variants) expect(() => CorpusStats.decode(packr.pack(v))).toThrow(CorpusStatsFormatError);
    await expect(loadCorpusStats(join(dir, 'missing.msgpack'))).rejects.toThrow(InvalidArgumentError);
    await expect(saveCorpusStats(await buildCorpusStats(docs), join(dir, 'no-such-dir', 'x.msgpack'))).rejects.toThrow(
      InvalidArgumentError,
    );
  });

  it('reports malformed docs.jsonl lines with their line number', async () => {
    const bad = writeJsonl('bad.jsonl', [JSON.stringify(docs[0]), '{not json']);
    await expect(buildCorpusStats(bad)).rejects.toThrow(/bad\.jsonl:2/);
    const wrongType = writeJsonl('wrong.jsonl', [JSON.stringify({ id: 'x', title: 't', text: 5 })]);
    await expect(buildCorpusStats(wrongType)).rejects.toThrow(InvalidArgumentError);
    await expect(buildCorpusStats(join(dir, 'nope.jsonl'))).rejects.toThrow(InvalidArgumentError);
    await expect(buildCorpusStats(42 as unknown as string)).rejects.toThrow(InvalidArgumentError);
  });

  it('builder refuses use after finish()', () => {
    const b = new CorpusStatsBuilder();
    b.add({ text: 'one doc' });
    b.finish();
    expect(() => b.add({ text: 'again' })).toThrow(InvalidArgumentError);
  });

  it('`relevance-gate stats` writes a loadable file', async () => {
    const path = writeJsonl(
      'cli.jsonl',
      docs.map((d) => JSON.stringify(d)),
    );
    const out = join(dir, 'cli.msgpack');
    const stdout = execFileSync(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'stats', '--docs', path, '--out', out],
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    expect(stdout).toMatch(/3 documents/);
    const loaded = await loadCorpusStats(out);
    expect(Buffer.from(loaded.encode()).equals(Buffer.from((await buildCorpusStats(path)).encode()))).toBe(true);
  });
});
