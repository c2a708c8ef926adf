/**
 * Corpus statistics for the lexical features: per-term document frequencies (body, title, either
 * field), document count and average field lengths, computed with the shared tokenizer. Built from
 * a docs.jsonl or any iterable of documents, saved compactly with msgpackr, and loaded once into a
 * native hash map that the extractor reads.
 *
 * File format (msgpack map, see docs/features.md): format, formatVersion, tokenizerVersion,
 * docCount, totalBodyLength, totalTitleLength, terms ("\n"-joined normalised terms), dfBody,
 * dfTitle, dfAny (arrays of counts parallel to terms), source (free text). No timestamps, so the
 * same input gives the same bytes.
 */
import { createReadStream, type ReadStream } from 'node:fs';
import { readFile, writeFile, rename, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { InvalidArgumentError } from '../errors.js';
import { requirePackage } from '../util/optional-package.js';
import { CorpusStatsFormatError } from './errors.js';
import { featuresAddon, type NativeCorpusStats, type NativeCorpusStatsBuilder } from './native.js';
import { TOKENIZER_VERSION } from './schema.js';
import { describe } from './tokenize.js';

/** msgpackr loads when statistics are first read or written, not when the package is imported. */
function msgpackr(): typeof import('msgpackr') {
  return requirePackage<typeof import('msgpackr')>('msgpackr', 'corpus statistics files');
}

export const CORPUS_STATS_FORMAT = 'relevance-gate/corpus-stats';
export const CORPUS_STATS_FORMAT_VERSION = 1;

/** A document as the statistics see it (the docs.jsonl record shape; `id` is not needed). */
export interface StatsDocument {
  readonly id?: string;
  readonly title?: string | null;
  readonly text: string;
}

/** Document frequencies of one term. */
export interface TermDocumentFrequency {
  readonly body: number;
  readonly title: number;
  readonly any: number;
}

interface CorpusStatsFields {
  readonly docCount: number;
  readonly totalBodyLength: number;
  readonly totalTitleLength: number;
  readonly terms: string;
  readonly dfBody: Uint32Array;
  readonly dfTitle: Uint32Array;
  readonly dfAny: Uint32Array;
  readonly source: string;
}

export class CorpusStats {
  /** @internal The native map the extractor reads. */
  readonly native: NativeCorpusStats;
  readonly docCount: number;
  readonly totalBodyLength: number;
  readonly totalTitleLength: number;
  readonly avgBodyLength: number;
  readonly avgTitleLength: number;
  /** Number of distinct terms. */
  readonly termCount: number;
  /** Where the statistics came from (free text, e.g. the docs path). */
  readonly source: string;
  readonly tokenizerVersion = TOKENIZER_VERSION;
  readonly #fields: CorpusStatsFields;

  private constructor(fields: CorpusStatsFields) {
    this.#fields = fields;
    this.docCount = fields.docCount;
    this.totalBodyLength = fields.totalBodyLength;
    this.totalTitleLength = fields.totalTitleLength;
    this.avgBodyLength = fields.docCount > 0 ? fields.totalBodyLength / fields.docCount : 0;
    this.avgTitleLength = fields.docCount > 0 ? fields.totalTitleLength / fields.docCount : 0;
    this.termCount = fields.dfBody.length;
    this.source = fields.source;
    const { FeatureCorpusStats } = featuresAddon();
    this.native = new FeatureCorpusStats(
      fields.terms,
      fields.dfBody,
      fields.dfTitle,
      fields.dfAny,
      fields.docCount,
      this.avgBodyLength,
      this.avgTitleLength,
    );
  }

  /** @internal */
  static fromFields(fields: CorpusStatsFields): CorpusStats {
    return new CorpusStats(fields);
  }

  /** Document frequencies of a term as `tokenize` returns it (normalised); zeros when unseen. */
  documentFrequency(term: string): TermDocumentFrequency {
    if (typeof term !== 'string') throw new InvalidArgumentError(`term must be a string, got ${describe(term)}`);
    const [body, title, any] = this.native.lookup(term);
    return { body, title, any };
  }

  /** The statistics as msgpack bytes (deterministic for the same input). */
  encode(): Uint8Array {
    const f = this.#fields;
    const packr = new (msgpackr().Packr)({ useRecords: false });
    return packr.pack({
      format: CORPUS_STATS_FORMAT,
      formatVersion: CORPUS_STATS_FORMAT_VERSION,
      tokenizerVersion: TOKENIZER_VERSION,
      docCount: f.docCount,
      totalBodyLength: f.totalBodyLength,
      totalTitleLength: f.totalTitleLength,
      termCount: f.dfBody.length,
      terms: f.terms,
      dfBody: Array.from(f.dfBody),
      dfTitle: Array.from(f.dfTitle),
      dfAny: Array.from(f.dfAny),
      source: f.source,
    });
  }

  /** Parses bytes written by encode(); CorpusStatsFormatError when they are not valid statistics. */
  static decode(bytes: Uint8Array, where = 'corpus statistics'): CorpusStats {
    if (!(bytes instanceof Uint8Array))
      throw new InvalidArgumentError(`corpus statistics must be bytes, got ${describe(bytes)}`);
    let raw: unknown;
    try {
      raw = msgpackr().unpack(bytes);
    } catch (cause) {
      throw new CorpusStatsFormatError(`${where}: not a msgpack corpus-statistics file (${(cause as Error).message})`, {
        cause,
      });
    }
    if (typeof raw !== 'object' || raw === null)
      throw new CorpusStatsFormatError(`${where}: not a corpus-statistics file`);
    const o = raw as Record<string, unknown>;
    if (o.format !== CORPUS_STATS_FORMAT)
      throw new CorpusStatsFormatError(`${where}: not a corpus-statistics file (format ${String(o.format)})`);
    if (o.formatVersion !== CORPUS_STATS_FORMAT_VERSION) {
      throw new CorpusStatsFormatError(
        `${where}: format version ${String(o.formatVersion)} is not supported (expected ${CORPUS_STATS_FORMAT_VERSION})`,
      );
    }
    if (o.tokenizerVersion !== TOKENIZER_VERSION) {
      throw new CorpusStatsFormatError(
        `${where}: built with tokenizer ${String(o.tokenizerVersion)}, this build tokenises with ${TOKENIZER_VERSION}; rebuild the statistics`,
      );
    }
    const count = (name: string): number => {
      const v = o[name];
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
        throw new CorpusStatsFormatError(`${where}: ${name} is not a non-negative integer`);
      return v;
    };
    const docCount = count('docCount');
    const totalBodyLength = count('totalBodyLength');
    const totalTitleLength = count('totalTitleLength');
    const termCount = count('termCount');
    if (typeof o.terms !== 'string') throw new CorpusStatsFormatError(`${where}: terms is not a string`);
    const dfs = (name: string): Uint32Array => {
      const v = o[name];
      if (!Array.isArray(v) || v.length !== termCount)
        throw new CorpusStatsFormatError(`${where}: ${name} does not hold ${termCount} counts`);
      const out = new Uint32Array(termCount);
      for (let i = 0; i < termCount; i++) {
        const x: unknown = v[i];
        if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x > docCount) {
          throw new CorpusStatsFormatError(`${where}: ${name}[${i}] is not a count in [0, docCount]`);
        }
        out[i] = x;
      }
      return out;
    };
    const fields: CorpusStatsFields = {
      docCount,
      totalBodyLength,
      totalTitleLength,
      terms: o.terms,
      dfBody: dfs('dfBody'),
      dfTitle: dfs('dfTitle'),
      dfAny: dfs('dfAny'),
      source: typeof o.source === 'string' ? o.source : '',
    };
    try {
      return new CorpusStats(fields);
    } catch (cause) {
      throw new CorpusStatsFormatError(`${where}: ${(cause as Error).message}`, { cause });
    }
  }
}

/** Accumulates statistics one document at a time (for callers that stream their own corpus). */
export class CorpusStatsBuilder {
  #native: NativeCorpusStatsBuilder | undefined;
  readonly #source: string;

  constructor(source = '') {
    this.#native = new (featuresAddon().FeatureCorpusStatsBuilder)();
    this.#source = source;
  }

  get docCount(): number {
    return this.#native?.docCount ?? 0;
  }

  add(doc: StatsDocument): void {
    const b = this.#live();
    if (typeof doc !== 'object' || doc === null)
      throw new InvalidArgumentError(`document must be an object, got ${describe(doc)}`);
    const { title, text } = doc;
    if (typeof text !== 'string')
      throw new InvalidArgumentError(`document text must be a string, got ${describe(text)}`);
    if (title !== undefined && title !== null && typeof title !== 'string') {
      throw new InvalidArgumentError(`document title must be a string, got ${describe(title)}`);
    }
    b.add(title ?? '', text);
  }

  finish(): CorpusStats {
    const b = this.#live();
    this.#native = undefined;
    const r = b.finish();
    return CorpusStats.fromFields({ ...r, source: this.#source });
  }

  #live(): NativeCorpusStatsBuilder {
    if (!this.#native) throw new InvalidArgumentError('CorpusStatsBuilder.finish() was already called');
    return this.#native;
  }
}

export interface BuildCorpusStatsOptions {
  /** Called every `progressEvery` documents (and at the end) with the documents and bytes read so far. */
  readonly onProgress?: (docs: number, bytesRead: number) => void;
  readonly progressEvery?: number;
  /** Stored in the file as its `source`; defaults to the docs path. */
  readonly source?: string;
}

/** Builds statistics from a docs.jsonl path (one {id, title, text} per line) or an iterable of documents. */
export async function buildCorpusStats(
  docs: string | Iterable<StatsDocument> | AsyncIterable<StatsDocument>,
  options: BuildCorpusStatsOptions = {},
): Promise<CorpusStats> {
  const every = options.progressEvery ?? 1000;
  if (typeof docs === 'string') {
    const builder = new CorpusStatsBuilder(options.source ?? docs);
    let stream: ReadStream;
    try {
      stream = createReadStream(docs);
      await new Promise<void>((resolve, reject) => {
        stream.once('open', () => resolve());
        stream.once('error', reject);
      });
    } catch (cause) {
      throw new InvalidArgumentError(`cannot read ${docs}: ${(cause as Error).message}`, { cause });
    }
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    let lineNo = 0;
    for await (const line of lines) {
      lineNo++;
      if (line.trim() === '') continue;
      let doc: unknown;
      try {
        doc = JSON.parse(line);
      } catch (cause) {
        stream.destroy();
        throw new InvalidArgumentError(`${docs}:${lineNo}: not valid JSON (${(cause as Error).message})`, { cause });
      }
      try {
        builder.add(doc as StatsDocument);
      } catch (cause) {
        stream.destroy();
        throw new InvalidArgumentError(`${docs}:${lineNo}: ${(cause as Error).message}`, { cause });
      }
      if (options.onProgress && builder.docCount % every === 0) options.onProgress(builder.docCount, stream.bytesRead);
    }
    options.onProgress?.(builder.docCount, stream.bytesRead);
    return builder.finish();
  }
  if (docs === null || typeof docs !== 'object' || (!(Symbol.iterator in docs) && !(Symbol.asyncIterator in docs))) {
    throw new InvalidArgumentError(
      `buildCorpusStats expects a docs.jsonl path or an iterable of documents, got ${describe(docs)}`,
    );
  }
  const builder = new CorpusStatsBuilder(options.source ?? '');
  for await (const doc of docs as AsyncIterable<StatsDocument>) {
    builder.add(doc);
    if (options.onProgress && builder.docCount % every === 0) options.onProgress(builder.docCount, 0);
  }
  options.onProgress?.(builder.docCount, 0);
  return builder.finish();
}

/** Writes statistics to a file (atomically: a temporary file renamed into place). */
export async function saveCorpusStats(stats: CorpusStats, path: string): Promise<void> {
  if (!(stats instanceof CorpusStats)) throw new InvalidArgumentError('saveCorpusStats expects a CorpusStats');
  if (typeof path !== 'string' || path === '') throw new InvalidArgumentError('saveCorpusStats expects a file path');
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    await writeFile(tmp, stats.encode());
    await rename(tmp, path);
  } catch (cause) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw new InvalidArgumentError(`cannot write corpus statistics ${path}: ${(cause as Error).message}`, { cause });
  }
}

/** Reads statistics written by saveCorpusStats. */
export async function loadCorpusStats(path: string): Promise<CorpusStats> {
  if (typeof path !== 'string' || path === '') throw new InvalidArgumentError('loadCorpusStats expects a file path');
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (cause) {
    throw new InvalidArgumentError(`cannot read corpus statistics ${path}: ${(cause as Error).message}`, { cause });
  }
  return CorpusStats.decode(bytes, path);
}
