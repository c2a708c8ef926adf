/**
 * Merging the members' answers for one pair into the composite's result: each member contributes
 * the product signals it feeds (its probability and, when it gave one, its raw value under the
 * product signal's name); a member without a usable answer contributes nothing, so its signals are
 * missing and the gate's rules for a missing signal (`whenMissing`) decide.
 */
import { isUsablePairResult } from '../scoring/pair-result.js';
import { type DetailedPairScore, isDetailedPairScore, type ScorerPairResult } from '../types.js';
import type { CompiledMember } from './members.js';

/** One member's answers for one call: a result per passage (null: none), or undefined when the member failed. */
export type MemberAnswers = ReadonlyArray<ScorerPairResult> | undefined;

/** The tier label of a pair: the composite and the ids of the members whose signals it carries, in member order. */
export function compositeTierLabel(memberIds: readonly string[]): string {
  return `composite[${memberIds.join(',')}]`;
}

/**
 * The merged result of pair `i`, or null when no member produced any of its signals for it.
 * Always a fresh object: nothing of a member's (possibly cached, shared) record is handed out.
 */
export function mergePair(
  members: readonly CompiledMember[],
  answers: readonly MemberAnswers[],
  i: number,
): DetailedPairScore | null {
  const probabilities: Record<string, number> = {};
  const raw: Record<string, number> = {};
  let rawCount = 0;
  const producers: string[] = [];
  for (let k = 0; k < members.length; k++) {
    const result = answers[k]?.[i];
    if (!isUsablePairResult(result)) continue;
    const detailed = isDetailedPairScore(result);
    const memberProbabilities = detailed ? result.probabilities : result;
    const memberRaw = detailed ? result.raw : undefined;
    let produced = false;
    for (const [signal, label] of members[k].mapping) {
      if (!Object.hasOwn(memberProbabilities, label)) continue;
      probabilities[signal] = memberProbabilities[label];
      produced = true;
      if (memberRaw !== undefined && Object.hasOwn(memberRaw, label)) {
        raw[signal] = memberRaw[label];
        rawCount++;
      }
    }
    if (produced) producers.push(members[k].id);
  }
  if (producers.length === 0) return null;
  const tier = compositeTierLabel(producers);
  return rawCount > 0 ? { probabilities, raw, tier } : { probabilities, tier };
}
