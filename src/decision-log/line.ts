/**
 * Writes a decision line straight from the gate result: the exact text
 * `JSON.stringify(decisionRecordOf(...))` gives (test/decision-log/line.test.ts holds the two
 * equal), without building the record object and walking it again. A record is about a hundred
 * numbers, and turning a double into its shortest decimal is most of what JSON.stringify spends
 * here; a pair's relevance and score are usually two of its signals, so each is written once and
 * its text reused. Strings that repeat on every line (routes, rules, tiers, signal names) are
 * quoted once per process.
 */
import { countWords } from '../gate/policies/adaptive.js';
import type { GateItem, GatePolicy, GateStats, GateTimings } from '../gate/types.js';
import { canonicalJson, passageHash, sha256Hex } from './hash.js';
import type { BuildOptions } from './record.js';
import { DECISION_LOG_VERSION } from './types.js';

/** What a line reads of a gate item (a GateItem, or one the log's writer thread rebuilt). */
export type LineItem = Pick<
  GateItem,
  'id' | 'rank' | 'route' | 'rule' | 'reason' | 'tier' | 'cached' | 'relevance' | 'score' | 'signals' | 'raw'
> & { readonly passage: { readonly text: string } };

/** What a line reads of a DecisionEntry: any DecisionEntry is one. */
export interface LineEntry {
  readonly requestId: string;
  readonly model: { readonly name: string };
  readonly result: {
    readonly query: string;
    readonly queryClass: string | undefined;
    readonly included: readonly LineItem[];
    readonly conflicting: readonly LineItem[];
    readonly excluded: readonly LineItem[];
    readonly stats: Pick<
      GateStats,
      'threshold' | 'rankingCut' | 'sufficiency' | 'fallbackTriggered' | 'insufficientContext'
    >;
    readonly tier: { readonly scorer: string; readonly counts: Readonly<Record<string, unknown>> };
    readonly timings: Pick<GateTimings, 'scoringMs' | 'totalMs'>;
  };
  readonly override?: GatePolicy;
  readonly endpoint?: string;
  readonly serverMs?: number;
  readonly shadowOf?: string;
}

/** A passage's `hash` in the line; the writer thread passes the hashes computed before the hand-over. */
export type HashOf = (item: LineItem) => string;

const hashOfText: HashOf = (item) => passageHash(item.passage.text);

/** Quoted strings kept at most; past it the cache starts over (labels are few, this only bounds misuse). */
const MAX_QUOTED = 4096;
const quotedCache = new Map<string, string>();

/** JSON of a string that recurs across lines (a label, not an id or a text). */
function label(s: string): string {
  let out = quotedCache.get(s);
  if (out === undefined) {
    out = JSON.stringify(s);
    if (quotedCache.size >= MAX_QUOTED) quotedCache.clear();
    quotedCache.set(s, out);
  }
  return out;
}

/** JSON of a number as JSON.stringify writes it (not finite: null). */
function num(x: number): string {
  return Number.isFinite(x) ? JSON.stringify(x) : 'null';
}

/** JSON of a nullable number. */
function numOrNull(x: number | null | undefined): string {
  return typeof x === 'number' ? num(x) : 'null';
}

/**
 * JSON of a flat record of numbers (signals, raw scores, tier counts), keys in their own order as
 * JSON.stringify takes them; `a`/`b` (with their texts) are values already written on this line.
 * A value that is not a number is written as JSON.stringify would (left out when undefined).
 */
function numbers(
  values: Readonly<Record<string, unknown>>,
  a: number | null,
  aText: string,
  b: number | null,
  bText: string,
): string {
  let out = '{';
  for (const key of Object.keys(values)) {
    const v = values[key];
    let text: string | undefined;
    if (typeof v === 'number') text = v === a ? aText : v === b ? bText : num(v);
    else text = JSON.stringify(v) as string | undefined;
    if (text === undefined) continue;
    out += out.length === 1 ? `${label(key)}:${text}` : `,${label(key)}:${text}`;
  }
  return `${out}}`;
}

function passageLine(item: LineItem, includeText: boolean, hashOf: HashOf): string {
  const relevance = item.relevance;
  const relevanceText = numOrNull(relevance);
  const score = item.score;
  const scoreText = score === relevance ? relevanceText : numOrNull(score);
  const signals = item.signals;
  const raw = item.raw;
  return (
    `{"id":${JSON.stringify(item.id)},"rank":${num(item.rank)},"hash":"${hashOf(item)}"` +
    `,"route":${label(item.route)},"rule":${label(item.rule)}` +
    `,"reason":${item.reason == null ? 'null' : label(item.reason)}` +
    `,"tier":${item.tier == null ? 'null' : label(item.tier)},"cached":${item.cached ? 'true' : 'false'}` +
    `,"relevance":${relevanceText},"score":${scoreText}` +
    `,"signals":${signals == null ? 'null' : numbers(signals, relevance, relevanceText, score, scoreText)}` +
    `,"raw":${raw == null ? 'null' : numbers(raw, null, '', null, '')}` +
    (includeText ? `,"text":${JSON.stringify(item.passage.text)}}` : '}')
  );
}

/** The items in input order: placed by rank, or sorted (stably) when ranks are not 0..n-1 each once. */
function inInputOrder(lists: ReadonlyArray<readonly LineItem[]>, n: number): LineItem[] {
  const out = new Array<LineItem>(n);
  let placed = 0;
  for (const list of lists)
    for (const item of list) {
      const r = item.rank;
      if (!(Number.isInteger(r) && r >= 0 && r < n) || out[r] !== undefined) {
        return lists.flat().sort((x, y) => x.rank - y.rank);
      }
      out[r] = item;
      placed++;
    }
  return placed === n ? out : lists.flat().sort((x, y) => x.rank - y.rank);
}

let lastMs = Number.NaN;
let lastIso = '';
/** ISO time of a Date, reusing the text while the millisecond is the same. */
function isoTime(time: Date): string {
  const ms = time.getTime();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = time.toISOString();
  }
  return lastIso;
}

/** One decision line (no newline): what `JSON.stringify(decisionRecordOf(entry, …))` writes. */
export function decisionLineOf(
  entry: LineEntry,
  policyHash: string,
  options: BuildOptions,
  time: Date,
  hashOf: HashOf = hashOfText,
): string {
  const { result } = entry;
  const stats = result.stats;
  const n = result.included.length + result.conflicting.length + result.excluded.length;
  const items = inInputOrder([result.included, result.conflicting, result.excluded], n);
  let passages = '';
  for (let i = 0; i < items.length; i++) {
    const line = passageLine(items[i], options.includeText, hashOf);
    passages += i === 0 ? line : `,${line}`;
  }
  const serverMs = entry.serverMs;
  return (
    `{"kind":"decision","v":${DECISION_LOG_VERSION},"time":"${isoTime(time)}","requestId":${JSON.stringify(entry.requestId)}` +
    `,"endpoint":${label(entry.endpoint ?? 'library')}` +
    (entry.shadowOf === undefined ? '' : `,"shadowOf":${JSON.stringify(entry.shadowOf)}`) +
    `,"model":${label(entry.model.name)},"scorerId":${label(result.tier.scorer)},"policyHash":${JSON.stringify(policyHash)}` +
    `,"override":${entry.override === undefined ? 'null' : canonicalJson(entry.override)}` +
    `,"queryHash":"${sha256Hex(result.query)}","queryWords":${countWords(result.query)}` +
    `,"queryClass":${result.queryClass == null ? 'null' : JSON.stringify(result.queryClass)}` +
    `,"threshold":${num(stats.threshold)},"rankingCut":${numOrNull(stats.rankingCut)},"sufficiency":${numOrNull(stats.sufficiency)}` +
    `,"fallbackTriggered":${stats.fallbackTriggered ? 'true' : 'false'}` +
    `,"insufficientContext":${stats.insufficientContext ? 'true' : 'false'}` +
    `,"counts":{"included":${result.included.length},"conflicting":${result.conflicting.length},"excluded":${result.excluded.length}}` +
    `,"timings":{"scoringMs":${num(result.timings.scoringMs)},"totalMs":${num(result.timings.totalMs)},"serverMs":${numOrNull(serverMs)}}` +
    `,"tiers":${numbers(result.tier.counts, null, '', null, '')},"passages":[${passages}]` +
    (options.includeQuery ? `,"query":${JSON.stringify(result.query)}}` : '}')
  );
}
