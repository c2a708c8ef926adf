import { describe, expect, it } from 'vitest';
import { escapeAttribute, neutralizeMarkup } from '../../src/context/index.js';

describe('neutralizeMarkup', () => {
  it('returns text without tag openings unchanged (the same string)', () => {
    const text = 'p < 0.05; x<=5; a <- b; 3 < 4; trailing <';
    expect(neutralizeMarkup(text)).toBe(text);
    expect(neutralizeMarkup('')).toBe('');
  });

  it('neutralises openings, closings, comments, processing instructions and look-alike brackets', () => {
    const cases: Array<[string, string]> = [
      ['<passage>', '&lt;passage>'],
      ['</passage>', '&lt;/passage>'],
      ['x</A>y', 'x&lt;/A>y'],
      ['<!-- c -->', '&lt;!-- c -->'],
      ['<?xml?>', '&lt;?xml?>'],
      ['< \t/\n passage>', '&lt; \t/\n passage>'],
      ['<\u200b\u2060/\ufeffpassage>', '&lt;\u200b\u2060/\ufeffpassage>'],
      ['\uff1c/passage\uff1e', '&lt;/passage\uff1e'],
      ['\u2039passage\u203a', '&lt;passage\u203a'],
      ['\u3008\uff0f\uff50assage\u3009', '&lt;\uff0f\uff50assage\u3009'],
      ['<<b>>', '<&lt;b>>'],
    ];
    for (const [input, expected] of cases) expect(neutralizeMarkup(input), JSON.stringify(input)).toBe(expected);
  });

  it('leaves no tag opening behind on any mix (property over generated strings)', () => {
    const parts = ['<', '/', ' ', '\u200b', 'p', 'P', '>', '!', '?', '\uff1c', '1', 'é', '\n'];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    const opening = /<[\s\u200b]*\/?[\s\u200b]*[A-Za-z!?]/;
    for (let n = 0; n < 2000; n++) {
      let s = '';
      for (let i = 0; i < 12; i++) s += parts[next() % parts.length];
      const out = neutralizeMarkup(s);
      expect(opening.test(out), JSON.stringify(s)).toBe(false);
      expect(out.replaceAll('&lt;', '<').replaceAll('\uff1c', '<')).toBe(s.replaceAll('\uff1c', '<'));
    }
  });
});

describe('escapeAttribute', () => {
  it('escapes quotes, brackets and ampersands, and turns line breaks into spaces', () => {
    expect(escapeAttribute('a "b" <c> & d\r\ne\u2028f')).toBe('a &quot;b&quot; &lt;c&gt; &amp; d  e f');
    expect(escapeAttribute('plain')).toBe('plain');
  });
});
