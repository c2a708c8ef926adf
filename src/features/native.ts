/**
 * The slice of the native addon the feature subsystem uses, checked once against the
 * TypeScript schema so a stale build can never produce columns under the wrong names.
 */
import { loadAddon } from '../native/addon.js';
import { NativeAddonError } from '../errors.js';
import { FEATURE_NAMES, FEATURE_SCHEMA_VERSION, TOKENIZER_VERSION, BM25_PARAMETERS } from './schema.js';

export type NativeText = string | Uint8Array;

export interface NativeCorpusStats {
  lookup(term: string): [number, number, number];
  readonly size: number;
  readonly docCount: number;
  readonly avgBodyLength: number;
  readonly avgTitleLength: number;
}

export interface NativeCorpusStatsBuilder {
  add(title: NativeText, text: NativeText): void;
  finish(): {
    terms: string;
    dfBody: Uint32Array;
    dfTitle: Uint32Array;
    dfAny: Uint32Array;
    docCount: number;
    totalBodyLength: number;
    totalTitleLength: number;
  };
  readonly docCount: number;
}

export interface FeaturesAddon {
  FeatureCorpusStats: new (
    terms: string,
    dfBody: Uint32Array,
    dfTitle: Uint32Array,
    dfAny: Uint32Array,
    docCount: number,
    avgBodyLength: number,
    avgTitleLength: number,
  ) => NativeCorpusStats;
  FeatureCorpusStatsBuilder: new () => NativeCorpusStatsBuilder;
  featuresTokenize(text: NativeText): string[];
  featuresExtract(
    stats: NativeCorpusStats,
    query: NativeText,
    titles: ReadonlyArray<NativeText | undefined> | null,
    texts: readonly NativeText[],
    passthrough: Float32Array | null,
  ): Float32Array;
  featuresExtractAsync(
    stats: NativeCorpusStats,
    query: NativeText,
    titles: ReadonlyArray<NativeText | undefined> | null,
    texts: readonly NativeText[],
    passthrough: Float32Array | null,
  ): Promise<Float32Array>;
  featuresSchema(): {
    version: string;
    tokenizerVersion: string;
    names: string[];
    numPassthrough: number;
    bm25: { k1: number; b: number };
  };
}

let checked: FeaturesAddon | undefined;

export function featuresAddon(): FeaturesAddon {
  if (checked) return checked;
  const addon = loadAddon() as Partial<FeaturesAddon>;
  if (typeof addon.featuresExtract !== 'function' || typeof addon.featuresSchema !== 'function') {
    throw new NativeAddonError('the native addon has no feature extractor; rebuild it with `npx node-gyp rebuild`');
  }
  const s = addon.featuresSchema();
  const same =
    s.version === FEATURE_SCHEMA_VERSION &&
    s.tokenizerVersion === TOKENIZER_VERSION &&
    s.bm25.k1 === BM25_PARAMETERS.k1 &&
    s.bm25.b === BM25_PARAMETERS.b &&
    s.names.length === FEATURE_NAMES.length &&
    s.names.every((n, i) => n === FEATURE_NAMES[i]);
  if (!same) {
    throw new NativeAddonError(
      `native feature extractor (${s.version}/${s.tokenizerVersion}: ${s.names.join(',')}) does not match ` +
        `src/features/schema.ts (${FEATURE_SCHEMA_VERSION}/${TOKENIZER_VERSION}); rebuild the addon`,
    );
  }
  checked = addon as FeaturesAddon;
  return checked;
}
