/** Text generators shared by the long-passage tests and bench/long-passages.ts. */
// Deterministic pseudo-random text where query terms are frequent, so the proximity and span
// computations see many matches (the worst case for them).
export function text(bytes: number, seed: number): string {
  const vocab = [
    'wing',
    'flutter',
    'supersonic',
    'boundary',
    'layer',
    'heat',
    'flow',
    'plate',
    'shock',
    'wave',
    'the',
    'of',
    'and',
  ];
  let x = seed;
  const parts: string[] = [];
  let n = 0;
  while (n < bytes) {
    x = (x * 1103515245 + 12345) >>> 0;
    const w = vocab[(x >>> 16) % vocab.length]!;
    parts.push(w);
    n += w.length + 1;
  }
  return parts.join(' ');
}
