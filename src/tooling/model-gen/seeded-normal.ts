/**
 * Deterministic weight initialisation. Each tensor gets its own stream derived from (seed, tensor
 * name), so a tensor's values do not depend on how many tensors were drawn before it and adding a
 * layer or an output head leaves every other tensor unchanged.
 *
 * Generator: xoshiro128** (32-bit state words, integer-only, identical on every platform), seeded
 * through splitmix32; normals by Box-Muller. Math.log/Math.cos/Math.sqrt in V8 are fdlibm ports
 * (software, not the CPU's libm), so the same seed gives the same bytes across machines.
 */

/** FNV-1a over the UTF-16 code units of a string: a stable 32-bit tensor-name hash. */
function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) >>> 0;
  let z = state.s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}

/** xoshiro128** uniform generator. */
export class Xoshiro128 {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream: string) {
    const mix = { s: (seed >>> 0) ^ fnv1a32(stream) };
    this.a = splitmix32(mix);
    this.b = splitmix32(mix);
    this.c = splitmix32(mix);
    this.d = splitmix32(mix);
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1; // the all-zero state is a fixed point
  }

  /** Next 32-bit unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.b << 9) >>> 0;
    this.c = (this.c ^ this.a) >>> 0;
    this.d = (this.d ^ this.b) >>> 0;
    this.b = (this.b ^ this.c) >>> 0;
    this.a = (this.a ^ this.d) >>> 0;
    this.c = (this.c ^ t) >>> 0;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** Uniform in the open interval (0, 1): never 0, so log() in Box-Muller stays finite. */
  nextOpenUnit(): number {
    return (this.nextUint32() + 0.5) / 4294967296;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** Fills `out` with normal(0, std) samples from the (seed, stream) generator. */
export function fillNormal(out: Float32Array, std: number, seed: number, stream: string): void {
  const rng = new Xoshiro128(seed, stream);
  const n = out.length;
  let i = 0;
  while (i < n) {
    const u1 = rng.nextOpenUnit();
    const u2 = rng.nextOpenUnit();
    const radius = Math.sqrt(-2 * Math.log(u1)) * std;
    const angle = 2 * Math.PI * u2;
    out[i++] = radius * Math.cos(angle);
    if (i < n) out[i++] = radius * Math.sin(angle);
  }
}
