/**
 * A composite's members, validated once at construction: each is a Scorer plus the map from the
 * product signals it feeds to its own labels. Labels are checked against what the member declares
 * (`Scorer.signals`, e.g. a cross-encoder's config.json labels), case-sensitively, so a misspelt
 * label is refused here instead of failing every pair closed at run time.
 */
import type { Scorer } from '../types.js';
import { isScorer } from '../util/is-scorer.js';
import { CompositeConfigError } from './errors.js';
import { rejectUnknownKeys } from '../util/option-keys.js';

/** One model of a composite tier. */
export interface CompositeMember {
  /** The member model as a Scorer, e.g. `createCrossEncoderScorer(encoder)` (see crossEncoderMember). */
  readonly scorer: Scorer;
  /**
   * Product signal → the member's label that feeds it, spelled as the member declares it
   * (config.json's `id2label`, case-sensitive), e.g. `{ evidence: 'ENTAILMENT', contradicts_premise: 'CONTRADICTION' }`.
   * Labels not named here (NEUTRAL, safe) are scored and cached but not passed on.
   */
  readonly signals: Readonly<Record<string, string>>;
  /**
   * The member's name in results (`tier`), stats and errors. Default: the scorer's id. Its cache
   * entries are always stored under the scorer's id, which identifies its scores.
   */
  readonly id?: string;
}

/** A validated member. */
export interface CompiledMember {
  readonly index: number;
  readonly id: string;
  readonly scorer: Scorer;
  /** [product signal, member label] pairs, in the order given. */
  readonly mapping: ReadonlyArray<readonly [string, string]>;
  /** The mapped member labels: a cached entry must carry one of them. */
  readonly requiredLabels: readonly string[];
}

const MEMBER_KEYS: ReadonlySet<string> = new Set(['scorer', 'signals', 'id']);

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function labelHint(label: string, declared: readonly string[]): string {
  const near = declared.find((d) => d.toLowerCase() === label.toLowerCase());
  return near === undefined ? '' : ` (did you mean ${JSON.stringify(near)}? labels are case-sensitive)`;
}

function compileMember(spec: unknown, index: number): CompiledMember {
  const at = `members[${index}]`;
  if (!isPlainRecord(spec)) throw new CompositeConfigError(at, 'must be an object { scorer, signals, id? }');
  rejectUnknownKeys(
    spec,
    MEMBER_KEYS,
    at,
    'a member option',
    (field, problem) => new CompositeConfigError(field, problem),
  );
  const scorer = spec.scorer;
  if (!isScorer(scorer))
    throw new CompositeConfigError(
      `${at}.scorer`,
      'must be a Scorer (a non-empty string id, a score function, signals an array of names)',
    );
  const id = spec.id ?? scorer.id;
  if (typeof id !== 'string' || id.length === 0)
    throw new CompositeConfigError(`${at}.id`, 'must be a non-empty string');
  const declared = scorer.signals;
  if (declared === undefined)
    throw new CompositeConfigError(
      `${at}.scorer`,
      `scorer ${JSON.stringify(scorer.id)} declares no signals, so its labels cannot be checked: give it \`signals\` (crossEncoderMember does so for a cross-encoder)`,
      id,
    );
  const signals = spec.signals;
  if (!isPlainRecord(signals) || Object.keys(signals).length === 0)
    throw new CompositeConfigError(
      `${at}.signals`,
      'must map at least one product signal to a label of the member, e.g. { evidence: "ENTAILMENT" }',
      id,
    );
  const mapping: Array<readonly [string, string]> = [];
  for (const [signal, label] of Object.entries(signals)) {
    if (signal.length === 0) throw new CompositeConfigError(`${at}.signals`, 'a product signal name is empty', id);
    if (typeof label !== 'string' || label.length === 0)
      throw new CompositeConfigError(`${at}.signals.${signal}`, 'must be a non-empty label name', id);
    if (!declared.includes(label))
      throw new CompositeConfigError(
        `${at}.signals.${signal}`,
        `member ${JSON.stringify(id)} has no label ${JSON.stringify(label)}${labelHint(label, declared)}; its labels: ${declared.map((d) => JSON.stringify(d)).join(', ') || 'none'}`,
        id,
      );
    mapping.push([signal, label] as const);
  }
  return { index, id, scorer, mapping, requiredLabels: [...new Set(mapping.map(([, label]) => label))] };
}

/** Validates the member list: at least one member, unique ids, each product signal fed by one member. */
export function compileMembers(specs: unknown): CompiledMember[] {
  if (!Array.isArray(specs) || specs.length === 0)
    throw new CompositeConfigError('members', 'must be a non-empty array of { scorer, signals, id? }');
  const members = specs.map((spec: unknown, i) => compileMember(spec, i));
  const ids = new Map<string, number>();
  const feeders = new Map<string, string>();
  for (const member of members) {
    const first = ids.get(member.id);
    if (first !== undefined)
      throw new CompositeConfigError(
        `members[${member.index}].id`,
        `${JSON.stringify(member.id)} is also the id of members[${first}]: give the members distinct ids`,
        member.id,
      );
    ids.set(member.id, member.index);
    for (const [signal] of member.mapping) {
      const other = feeders.get(signal);
      if (other !== undefined)
        throw new CompositeConfigError(
          `members[${member.index}].signals.${signal}`,
          `signal ${JSON.stringify(signal)} is already fed by member ${JSON.stringify(other)}: each product signal comes from one member`,
          member.id,
        );
      feeders.set(signal, member.id);
    }
  }
  return members;
}
