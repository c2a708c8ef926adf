/**
 * Hostile request bodies for the server fuzz test: valid bodies mutated field by field (wrong
 * types, huge/negative/fractional numbers, deep nesting, lone surrogates, missing fields, extra
 * fields), random JSON, truncated JSON, invalid UTF-8 bytes and 10 MB strings. Deterministic per seed.
 */
import { mulberry32 } from '../../src/util/seeded-random.js';

export interface FuzzCase {
  readonly path: string;
  readonly protocol: 'cohere' | 'tei' | 'gate';
  readonly body: Uint8Array;
  readonly contentType: string;
  readonly label: string;
}

const ENDPOINTS = [
  { path: '/v1/rerank', protocol: 'cohere' },
  { path: '/v2/rerank', protocol: 'cohere' },
  { path: '/rerank', protocol: 'tei' },
  { path: '/v1/gate', protocol: 'gate' },
  { path: '/v1/gate/stream', protocol: 'gate' },
] as const;

const WORDS = ['vitamin', 'D', 'cancer', 'cells', 'BM25', 'ranking', 'the', 'of', 'protein', 'gene'];

export function createFuzzer(seed: number) {
  const rnd = mulberry32(seed);
  const int = (n: number): number => Math.floor(rnd() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const sentence = (): string => Array.from({ length: 1 + int(12) }, () => pick(WORDS)).join(' ');

  const deep = (depth: number): string => {
    const open = pick(['[', '{"a":']);
    const close = open === '[' ? ']' : '}';
    return `${open.repeat(depth)}1${close.repeat(depth)}`;
  };

  /** A JSON text of a hostile value. */
  const hostileValue = (): string => {
    switch (int(22)) {
      case 0:
        return 'null';
      case 1:
        return 'true';
      case 2:
        return String(pick([0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, 1e-320, 4294967296]));
      case 3:
        return '1e999';
      case 4:
        return JSON.stringify(sentence());
      case 5:
        return '""';
      case 6:
        return '"   "';
      case 7:
        return deep(1 + int(5000));
      case 8:
        return deep(50_000 + int(100_000));
      case 9:
        return '"\\ud800 lone \\udfff"';
      case 10:
        return '[]';
      case 11:
        return '{}';
      case 12:
        return JSON.stringify(Array.from({ length: 1 + int(30) }, () => (rnd() < 0.5 ? sentence() : int(100))));
      case 13:
        return JSON.stringify(Array.from({ length: 1001 + int(2000) }, () => 'x'));
      case 14:
        return JSON.stringify(
          Array.from({ length: 1 + int(5) }, () => ({ text: sentence(), extra: { nested: [1, 2] } })),
        );
      case 15:
        return JSON.stringify(Array.from({ length: 1 + int(5) }, () => ({ txt: sentence() })));
      case 16:
        return JSON.stringify({
          threshold: pick([2, -1, 'x', null, 0.5]),
          earlyStop: { window: pick([0, 1e9, -1]), minRate: 2, chunk: 0 },
        });
      case 17:
        return JSON.stringify({
          rules: [
            {
              name: 'r',
              when: { signal: 'relevant', op: pick(['>', '~', 3]), value: 'threshold' },
              route: pick(['included', 'nowhere']),
            },
          ],
        });
      case 18:
        return JSON.stringify('x'.repeat(int(100_000)));
      case 19:
        return '{"__proto__": {"polluted": true}}';
      case 20:
        return '{"constructor": {"prototype": {"polluted": true}}}';
      default:
        return JSON.stringify(
          pick(['cascade', 'fast-path', 'rerank-v3.5', '../../etc/passwd', '\u0000', 'a'.repeat(500)]),
        );
    }
  };

  const baseFields = (protocol: 'cohere' | 'tei' | 'gate', path: string): Record<string, string> => {
    const docs = JSON.stringify(Array.from({ length: 1 + int(8) }, sentence));
    if (protocol === 'tei')
      return { query: JSON.stringify(sentence()), texts: docs, raw_scores: 'true', return_text: 'true' };
    if (protocol === 'gate') return { query: JSON.stringify(sentence()), passages: docs, budget_ms: '50' };
    return path === '/v2/rerank'
      ? { model: '"fast-path"', query: JSON.stringify(sentence()), documents: docs, top_n: '3' }
      : { query: JSON.stringify(sentence()), documents: docs, top_n: '3', return_documents: 'true' };
  };

  const OPTIONAL: Record<string, readonly string[]> = {
    cohere: [
      'model',
      'top_n',
      'return_documents',
      'rank_fields',
      'max_chunks_per_doc',
      'max_tokens_per_doc',
      'priority',
    ],
    tei: ['truncate', 'truncation_direction', 'raw_scores', 'return_text', 'model'],
    gate: ['model', 'policy', 'budget_ms', 'query_class'],
  };

  const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
  /** Field name → JSON text of its value, as one JSON object text. */
  const assemble = (fields: Record<string, string>): string =>
    `{${Object.entries(fields)
      .map(([k, v]) => `${JSON.stringify(k)}:${v}`)
      .join(',')}}`;

  return function next(): FuzzCase {
    const { path, protocol } = pick(ENDPOINTS);
    const kind = int(100);
    if (kind < 55) {
      // A valid body with 1-3 fields mutated, removed or added.
      const fields = baseFields(protocol, path);
      const mutations = 1 + int(3);
      const labels: string[] = [];
      for (let m = 0; m < mutations; m++) {
        const keys = [...Object.keys(fields), ...OPTIONAL[protocol], 'unknown_field'];
        const key = pick(keys);
        if (rnd() < 0.2) {
          delete fields[key];
          labels.push(`-${key}`);
        } else {
          fields[key] = hostileValue();
          labels.push(`${key}=…`);
        }
      }
      return {
        path,
        protocol,
        body: encode(assemble(fields)),
        contentType: 'application/json',
        label: `mutated ${labels.join(' ')}`,
      };
    }
    if (kind < 70)
      return { path, protocol, body: encode(hostileValue()), contentType: 'application/json', label: 'random value' };
    if (kind < 80) {
      const text = assemble(baseFields(protocol, path));
      const cut = encode(text.slice(0, int(text.length)));
      return { path, protocol, body: cut, contentType: 'application/json', label: 'truncated' };
    }
    if (kind < 92) {
      // Invalid UTF-8 inside an otherwise valid body, or raw random bytes.
      const bad = [0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0xf8, 0x88, 0x80];
      if (rnd() < 0.5) {
        const head = encode(
          `{"query":"q${protocol === 'tei' ? '","texts":["' : protocol === 'gate' ? '","passages":["' : '","documents":["'}`,
        );
        const tail = encode('"]}');
        const middle = Uint8Array.from({ length: 1 + int(20) }, () => pick(bad));
        const body = new Uint8Array(head.length + middle.length + tail.length);
        body.set(head);
        body.set(middle, head.length);
        body.set(tail, head.length + middle.length);
        return { path, protocol, body, contentType: 'application/json', label: 'invalid utf-8 in a string' };
      }
      return {
        path,
        protocol,
        body: Uint8Array.from({ length: int(2000) }, () => int(256)),
        contentType: pick(['application/json', 'text/plain', 'application/octet-stream']),
        label: 'random bytes',
      };
    }
    if (kind < 93) {
      const body = encode(`{"query":"q","documents":["${'x'.repeat(10 * 1024 * 1024)}"]}`);
      return { path, protocol, body, contentType: 'application/json', label: '10 MB string' };
    }
    return {
      path,
      protocol,
      body: encode(assemble(baseFields(protocol, path))),
      contentType: pick(['application/json', 'application/json; charset=utf-8', 'text/plain', '']),
      label: 'content types',
    };
  };
}
