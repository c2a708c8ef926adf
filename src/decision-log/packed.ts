/**
 * Decision entries packed for the log's writer thread (log-worker.ts). The request's thread does
 * only what needs the passage text, the 64-bit content hash per passage (reading the text costs
 * about what copying it to another thread would), and puts every number of the entry into one
 * Float64Array and every recurring string (routes, rules, tiers, signal names, models) into a
 * label table the writer learns once; what is left to copy per request is the ids, the hashes and
 * the query. Writing the decimal numbers and the JSON, the larger share of a line's CPU, then runs
 * on the writer's thread, from the entries `BatchUnpacker` rebuilds, through the same
 * `decisionLineOf`, so both threads write the same bytes.
 *
 * An entry the packing does not cover (passage text opted in; a signal that is not a number; a
 * field that is not the string its type says) is built here and sent as a finished line.
 */
import type { Route, UnscoredReason } from '../gate/types.js';
import type { Passage } from '../types.js';
import { canonicalJson, passageHash } from './hash.js';
import { decisionLineOf, type LineEntry, type LineItem } from './line.js';
import type { BuildOptions } from './record.js';
import type { DecisionEntry } from './types.js';

/** A decision whose numbers are at `at` in the batch's `nums`. */
export interface PackedDecision {
  readonly policyHash: string;
  readonly requestId: string;
  readonly query: string;
  readonly queryClass: string | null;
  readonly shadowOf: string | null;
  /** The call override's canonical JSON, or null (JSON text always clones; a policy object may not). */
  readonly override: string | null;
  /** Passage ids and content hashes in packing order. */
  readonly ids: readonly string[];
  readonly hashes: readonly string[];
  readonly at: number;
}

/** An entry built on the request's thread. */
export interface PrebuiltLine {
  readonly policyHash: string;
  readonly line: string;
}

export type PackedRecord = PackedDecision | PrebuiltLine;

export interface PackedBatch {
  /** Labels added since the previous batch: `labels[i]` is label number `firstLabel + i`. */
  readonly firstLabel: number;
  readonly labels: readonly string[];
  /** Policy lines the writer has not been given yet. */
  readonly policies: ReadonlyArray<{ readonly hash: string; readonly line: string }>;
  readonly records: readonly PackedRecord[];
  readonly nums: Float64Array;
}

const NONE = -1;
const isString = (x: unknown): x is string => typeof x === 'string';
/** A label table past this size stops growing: later new labels send their entry prebuilt. */
const MAX_LABELS = 1 << 16;
const LISTS = ['included', 'conflicting', 'excluded'] as const;
// Call sites of BatchPacker.label with a last-label cache; a record's keys take 8 slots each.
const SLOT_ROUTE = 0;
const SLOT_RULE = 1;
const SLOT_REASON = 2;
const SLOT_TIER = 3;
const SLOT_TIERS = 4;
const SLOT_SIGNALS = 12;
const SLOT_RAW = 20;

/** The request thread's side: numbers labels, packs entries into batches. */
export class BatchPacker {
  private readonly labelIds = new Map<string, number>();
  private newLabels: string[] = [];
  private newPolicies: Array<{ hash: string; line: string }> = [];
  private readonly sentPolicies = new Set<string>();
  private records: PackedRecord[] = [];
  private nums = new Float64Array(4096);
  private used = 0;

  constructor(private readonly options: BuildOptions) {}

  /** Records packed since the last `take`. */
  get size(): number {
    return this.records.length;
  }

  /** Every label numbered so far, by number (what an unpacker starting late needs). */
  labels(): string[] {
    return [...this.labelIds.keys()];
  }

  add(entry: DecisionEntry<Passage>, policyHash: string, policyLine: string, time: Date): void {
    if (!this.sentPolicies.has(policyHash)) {
      this.sentPolicies.add(policyHash);
      this.newPolicies.push({ hash: policyHash, line: policyLine });
    }
    const start = this.used;
    const labelsBefore = this.newLabels.length;
    const packed = this.options.includeText ? undefined : this.pack(entry, policyHash, time);
    if (packed !== undefined) {
      this.records.push(packed);
      return;
    }
    // Not packable: undo what was written for it and send the finished line.
    this.used = start;
    for (const label of this.newLabels.splice(labelsBefore)) this.labelIds.delete(label);
    this.lastLabel.length = 0;
    this.lastId.length = 0;
    this.records.push({ policyHash, line: decisionLineOf(entry, policyHash, this.options, time) });
  }

  /** The batch so far, and a fresh one started. */
  take(): PackedBatch {
    const batch: PackedBatch = {
      firstLabel: this.labelIds.size - this.newLabels.length,
      labels: this.newLabels,
      policies: this.newPolicies,
      records: this.records,
      // A copy of the used part (a view would clone its whole buffer); the buffer is reused.
      nums: this.nums.slice(0, this.used),
    };
    this.newLabels = [];
    this.newPolicies = [];
    this.records = [];
    this.used = 0;
    return batch;
  }

  /** The label last numbered at each call site (`slot`): consecutive passages mostly repeat them. */
  private readonly lastLabel: string[] = [];
  private readonly lastId: number[] = [];

  private label(s: string, slot = -1): number {
    if (slot >= 0 && this.lastLabel[slot] === s) return this.lastId[slot] as number;
    const id = this.labelOf(s);
    if (slot >= 0 && id !== NONE) {
      this.lastLabel[slot] = s;
      this.lastId[slot] = id;
    }
    return id;
  }

  private labelOf(s: string): number {
    let id = this.labelIds.get(s);
    if (id === undefined) {
      if (this.labelIds.size >= MAX_LABELS) return NONE;
      id = this.labelIds.size;
      this.labelIds.set(s, id);
      this.newLabels.push(s);
    }
    return id;
  }

  private put(x: number): void {
    if (this.used === this.nums.length) {
      const grown = new Float64Array(this.nums.length * 2);
      grown.set(this.nums);
      this.nums = grown;
    }
    this.nums[this.used++] = x;
  }

  /** Signals or raw scores as (label, value) pairs after their count; false when one is not a number. */
  private putRecord(values: Readonly<Record<string, unknown>> | null | undefined, slot: number): boolean {
    if (values == null) {
      this.put(NONE);
      return true;
    }
    // Own enumerable keys in Object.keys order (what JSON.stringify writes), without its array.
    const countAt = this.used;
    this.put(0);
    let n = 0;
    for (const key in values) {
      if (!Object.hasOwn(values, key)) continue;
      const v = values[key];
      const id = this.label(key, n < 8 ? slot + n : -1);
      if (typeof v !== 'number' || id === NONE) return false;
      this.put(id);
      this.put(v);
      n++;
    }
    this.nums[countAt] = n;
    return true;
  }

  private pack(entry: DecisionEntry<Passage>, policyHash: string, time: Date): PackedDecision | undefined {
    const r = entry.result;
    const stats = r.stats;
    // Strings as typed, or the entry goes prebuilt (anything else might not clone, or clone otherwise).
    if (!isString(entry.requestId) || !isString(r.query) || !(r.queryClass == null || isString(r.queryClass)))
      return undefined;
    if (!(entry.shadowOf === undefined || isString(entry.shadowOf))) return undefined;
    const at = this.used;
    const endpoint = this.label(entry.endpoint ?? 'library');
    const model = this.label(entry.model.name);
    const scorer = this.label(r.tier.scorer);
    if (endpoint === NONE || model === NONE || scorer === NONE) return undefined;
    this.put(time.getTime());
    this.put(endpoint);
    this.put(model);
    this.put(scorer);
    this.put(stats.threshold);
    this.put(stats.rankingCut ?? Number.NaN);
    this.put(stats.sufficiency ?? Number.NaN);
    this.put(stats.fallbackTriggered ? 1 : 0);
    this.put(stats.insufficientContext ? 1 : 0);
    this.put(r.timings.scoringMs);
    this.put(r.timings.totalMs);
    this.put(entry.serverMs ?? Number.NaN);
    if (!this.putRecord(r.tier.counts, SLOT_TIERS)) return undefined;
    const ids: string[] = [];
    const hashes: string[] = [];
    for (const list of LISTS) {
      const items = r[list];
      this.put(items.length);
      for (const item of items) {
        const route = this.label(item.route, SLOT_ROUTE);
        const rule = this.label(item.rule, SLOT_RULE);
        const reason = item.reason == null ? NONE : this.label(item.reason, SLOT_REASON);
        const tier = item.tier == null ? NONE : this.label(item.tier, SLOT_TIER);
        if (route === NONE || rule === NONE || (reason === NONE && item.reason != null)) return undefined;
        if ((tier === NONE && item.tier != null) || !isString(item.id)) return undefined;
        ids.push(item.id);
        hashes.push(passageHash(item.passage.text));
        this.put(item.rank);
        this.put(route);
        this.put(rule);
        this.put(reason);
        this.put(tier);
        this.put(item.cached ? 1 : 0);
        // null and NaN both write null: one encoding serves both.
        this.put(item.relevance ?? Number.NaN);
        this.put(item.score ?? Number.NaN);
        if (!this.putRecord(item.signals, SLOT_SIGNALS) || !this.putRecord(item.raw, SLOT_RAW)) return undefined;
      }
    }
    return {
      policyHash,
      requestId: entry.requestId,
      query: r.query,
      queryClass: r.queryClass ?? null,
      shadowOf: entry.shadowOf ?? null,
      override: entry.override === undefined ? null : canonicalJson(entry.override),
      ids,
      hashes,
      at,
    };
  }
}

/** The writer thread's side: the label table, and entries rebuilt from batches. */
export class BatchUnpacker {
  private readonly labels: string[];

  /** `labels`: the labels numbered before the first batch this unpacker sees (BatchPacker.labels). */
  constructor(
    private readonly options: BuildOptions,
    labels: readonly string[] = [],
  ) {
    this.labels = [...labels];
  }

  /** Each record's line, in batch order (a record that cannot be rebuilt throws from its slot). */
  *lines(batch: PackedBatch): Generator<{ policyHash: string; line: () => string }> {
    for (let i = 0; i < batch.labels.length; i++) this.labels[batch.firstLabel + i] = batch.labels[i] as string;
    for (const record of batch.records) {
      if ('line' in record) yield { policyHash: record.policyHash, line: () => record.line };
      else yield { policyHash: record.policyHash, line: () => this.lineOf(record, batch.nums) };
    }
  }

  private lineOf(d: PackedDecision, nums: Float64Array): string {
    const labels = this.labels;
    let o = d.at;
    const next = (): number => nums[o++] as number;
    const nullable = (x: number): number | null => (Number.isNaN(x) ? null : x);
    const label = (x: number): string => {
      const s = labels[x];
      if (s === undefined) throw new Error(`decision log: unknown label ${x}`);
      return s;
    };
    const record = (): Record<string, number> | null => {
      const n = next();
      if (n === NONE) return null;
      const out: Record<string, number> = {};
      for (let i = 0; i < n; i++) {
        const key = label(next());
        out[key] = next();
      }
      return out;
    };
    const time = new Date(next());
    const endpoint = label(next());
    const model = label(next());
    const scorer = label(next());
    const threshold = next();
    const rankingCut = nullable(next());
    const sufficiency = nullable(next());
    const fallbackTriggered = next() === 1;
    const insufficientContext = next() === 1;
    const scoringMs = next();
    const totalMs = next();
    const serverMs = next();
    const tiers = record() ?? {};
    const hashes = new Map<LineItem, string>();
    let p = 0;
    const lists: LineItem[][] = [];
    for (let l = 0; l < LISTS.length; l++) {
      const n = next();
      const items: LineItem[] = [];
      for (let i = 0; i < n; i++, p++) {
        const rank = next();
        const route = label(next()) as Route;
        const rule = label(next());
        const reasonId = next();
        const tierId = next();
        const cached = next() === 1;
        const relevance = nullable(next());
        const score = nullable(next());
        const signals = record();
        const raw = record();
        const id = d.ids[p] as string;
        const item: LineItem = {
          id,
          rank,
          route,
          rule,
          reason: reasonId === NONE ? undefined : (label(reasonId) as UnscoredReason),
          tier: tierId === NONE ? undefined : label(tierId),
          cached,
          relevance,
          score,
          signals,
          raw: raw ?? undefined,
          passage: { text: '' },
        };
        hashes.set(item, d.hashes[p] as string);
        items.push(item);
      }
      lists.push(items);
    }
    const entry: LineEntry = {
      requestId: d.requestId,
      model: { name: model },
      result: {
        query: d.query,
        queryClass: d.queryClass ?? undefined,
        included: lists[0] as LineItem[],
        conflicting: lists[1] as LineItem[],
        excluded: lists[2] as LineItem[],
        stats: { threshold, rankingCut, sufficiency, fallbackTriggered, insufficientContext },
        tier: { scorer, counts: tiers },
        timings: { scoringMs, totalMs },
      },
      endpoint,
      serverMs,
      // canonicalJson of the parsed canonical JSON is that JSON again: the line holds the same text.
      ...(d.override === null ? {} : { override: JSON.parse(d.override) as LineEntry['override'] }),
      ...(d.shadowOf === null ? {} : { shadowOf: d.shadowOf }),
    };
    return decisionLineOf(entry, d.policyHash, this.options, time, (item) => hashes.get(item) as string);
  }
}
