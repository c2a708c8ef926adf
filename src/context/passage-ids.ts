/**
 * Passage ids for documents that may lack ids or repeat them (framework documents do both).
 * The gate needs unique ids; a document's own id is kept where it is usable, because the score
 * cache keys pairs by id and content, so stable ids let a document hit the cache wherever it ranks.
 */

/**
 * `candidates[i]` when it is a non-empty string not used before, otherwise `#i` (then `#i~2`,
 * `#i~3`, … should a document really carry such an id). Always unique, same length as the input.
 */
export function uniquePassageIds(candidates: ReadonlyArray<string | undefined>): string[] {
  const taken = new Set<string>();
  for (const c of candidates) if (c !== undefined && c.length > 0) taken.add(c);
  const seen = new Set<string>();
  const ids: string[] = new Array(candidates.length);
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i];
    if (c !== undefined && c.length > 0 && !seen.has(c)) {
      ids[i] = c;
      seen.add(c);
      continue;
    }
    let id = `#${i}`;
    for (let n = 2; taken.has(id) || seen.has(id); n++) id = `#${i}~${n}`;
    ids[i] = id;
    seen.add(id);
  }
  return ids;
}
