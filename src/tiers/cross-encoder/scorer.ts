/**
 * Adapter from a CrossEncoder to the `Scorer` seam (src/types.ts) used by the cache, router and gate.
 * A passage is read as `title + ' ' + text`, trimmed. Single-signal models report the signal
 * `relevant`; multi-signal models report one signal per named output, labelled heads one signal
 * per config.json label (named as config.json spells it; a composition layer maps labels to
 * product signals). Raw logits travel in `raw`.
 */
import { InvalidArgumentError } from '../../errors.js';
import type { DetailedPairScore, Passage, Scorer, ScoreOptions, ScorerPairResult } from '../../types.js';
import type { CrossEncoder } from './cross-encoder.js';
import { RELEVANT } from '../../signals.js';

export const CROSS_ENCODER_TIER = 'cross-encoder';

/** The text the cross-encoder reads for a passage. */
export function passageText(passage: Passage): string {
  const title = passage.title ?? '';
  return (title.length > 0 ? `${title} ${passage.text}` : passage.text).trim();
}

export function createCrossEncoderScorer(encoder: CrossEncoder): Scorer {
  return {
    id: encoder.info.id,
    signals: encoder.info.contract.signalNames,
    ...(encoder.info.decisions === undefined ? {} : { decisions: encoder.info.decisions }),
    async score(
      query: string,
      passages: readonly Passage[],
      options?: ScoreOptions,
    ): Promise<ReadonlyArray<ScorerPairResult>> {
      if (!Array.isArray(passages)) throw new InvalidArgumentError('passages must be an array of Passage');
      const texts = passages.map((p, i) => {
        if (typeof p !== 'object' || p === null || typeof p.text !== 'string') {
          throw new InvalidArgumentError(`passages[${i}] must be a Passage with a string text`);
        }
        if (p.title !== undefined && typeof p.title !== 'string') {
          throw new InvalidArgumentError(`passages[${i}].title must be a string`);
        }
        return passageText(p);
      });
      const scores = await encoder.score(query, texts, options ?? {});
      const results: DetailedPairScore[] = new Array(texts.length);
      const multi = scores.signals;
      const chunks = scores.chunks;
      for (let i = 0; i < texts.length; i++) {
        if (multi === undefined) {
          results[i] = {
            probabilities: { [RELEVANT]: scores.probabilities[i] },
            raw: { [RELEVANT]: scores.logits[i] },
            tier: CROSS_ENCODER_TIER,
            ...(chunks === undefined ? {} : { chunks: chunks[i] }),
          };
        } else {
          const k = multi.names.length;
          // fromEntries defines own properties, so a label such as "__proto__" stays a plain key.
          const probabilities: Record<string, number> = Object.fromEntries(
            multi.names.map((name, s) => [name, multi.probabilities[i * k + s]]),
          );
          const raw: Record<string, number> = Object.fromEntries(
            multi.names.map((name, s) => [name, multi.logits[i * k + s]]),
          );
          results[i] = {
            probabilities,
            raw,
            tier: CROSS_ENCODER_TIER,
            ...(chunks === undefined ? {} : { chunks: chunks[i] }),
          };
        }
      }
      return results;
    },
  };
}
