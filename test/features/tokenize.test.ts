import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/index.js';
import { tokenize } from '../../src/features/tokenize.js';

describe('tokenize: case folding, splitting, stop words', () => {
  it('lower-cases ASCII and removes Snowball English stop words', () => {
    expect(tokenize('The Wing IS in a SLIPSTREAM')).toEqual(['wing', 'slipstream']);
    expect(tokenize('what are the effects of it')).toEqual(['effect']);
  });

  it('folds mixed-case words and keeps letter-digit runs whole (unstemmed)', () => {
    expect(tokenize('McDonald ABC123def Fox42s RUNNING Running running')).toEqual([
      'mcdonald',
      'abc123def',
      'fox42s',
      'run',
      'run',
      'run',
    ]);
  });

  it('splits on punctuation, hyphens and symbols; keeps digits and letter-digit runs', () => {
    expect(tokenize('high-speed flow (mach=3.5), f-104/x86!')).toEqual([
      'high',
      'speed',
      'flow',
      'mach',
      '3',
      '5',
      'f',
      '104',
      'x86',
    ]);
  });

  it('keeps apostrophes inside words, drops the possessive, and treats contractions as stop words', () => {
    expect(tokenize("John's O'Neil don't can't")).toEqual(['john', "o'neil"]);
    expect(tokenize('the pilot’s logbook')).toEqual(['pilot', 'logbook']);
  });

  it('stems with Porter (reference examples from Porter 1980)', () => {
    const pairs: Array<[string, string]> = [
      ['caresses', 'caress'],
      ['ponies', 'poni'],
      ['ties', 'ti'],
      ['cats', 'cat'],
      ['feed', 'feed'],
      ['agreed', 'agre'],
      ['plastered', 'plaster'],
      ['motoring', 'motor'],
      ['sing', 'sing'],
      ['conflated', 'conflat'],
      ['troubled', 'troubl'],
      ['sized', 'size'],
      ['hopping', 'hop'],
      ['falling', 'fall'],
      ['hissing', 'hiss'],
      ['filing', 'file'],
      ['happy', 'happi'],
      ['sky', 'sky'],
      ['relational', 'relat'],
      ['conditional', 'condit'],
      ['rational', 'ration'],
      ['digitizer', 'digit'],
      ['vietnamization', 'vietnam'],
      ['predication', 'predic'],
      ['operator', 'oper'],
      ['feudalism', 'feudal'],
      ['decisiveness', 'decis'],
      ['hopefulness', 'hope'],
      ['callousness', 'callous'],
      ['formaliti', 'formal'],
      ['sensitiviti', 'sensit'],
      ['sensibiliti', 'sensibl'],
      ['triplicate', 'triplic'],
      ['formative', 'form'],
      ['formalize', 'formal'],
      ['electrical', 'electr'],
      ['hopeful', 'hope'],
      ['goodness', 'good'],
      ['revival', 'reviv'],
      ['allowance', 'allow'],
      ['inference', 'infer'],
      ['airliner', 'airlin'],
      ['gyroscopic', 'gyroscop'],
      ['adjustable', 'adjust'],
      ['defensible', 'defens'],
      ['irritant', 'irrit'],
      ['replacement', 'replac'],
      ['adjustment', 'adjust'],
      ['dependent', 'depend'],
      ['adoption', 'adopt'],
      ['communism', 'commun'],
      ['activate', 'activ'],
      ['angulariti', 'angular'],
      ['homologous', 'homolog'],
      ['effective', 'effect'],
      ['bowdlerize', 'bowdler'],
      ['probate', 'probat'],
      ['rate', 'rate'],
      ['cease', 'ceas'],
      ['controll', 'control'],
      ['roll', 'roll'],
      ['generalizations', 'gener'],
      ['oscillators', 'oscil'],
    ];
    const words = pairs.map(([w]) => w).join(' ');
    expect(tokenize(words)).toEqual(pairs.map(([, s]) => s));
  });

  it('does not stem words with digits, non-ASCII letters or over 64 letters (and does not blow up on them)', () => {
    expect(tokenize('runs2 naïvely')).toEqual(['runs2', 'naïvely']);
    const yy = 'y'.repeat(5000);
    expect(tokenize(yy)).toEqual([yy]);
  });
});

describe('tokenize: Unicode', () => {
  it('folds case but keeps accents: "Café" == "café" != "cafe"', () => {
    expect(tokenize('Café CAFÉ café')).toEqual(['café', 'café', 'café']);
    expect(tokenize('cafe')).toEqual(['cafe']);
    expect(tokenize('ÀÉÎÕÜ Ÿ Straße ẞ')).toEqual(['àéîõü', 'ÿ', 'straße', 'ß']);
  });

  it('folds Greek (including final sigma) and Cyrillic', () => {
    expect(tokenize('ΣΟΦΙΑ σοφίας Ωμέγα')).toEqual(['σοφια', 'σοφίασ', 'ωμέγα']);
    expect(tokenize('МОСКВА Москва ЁЛКА')).toEqual(['москва', 'москва', 'ёлка']);
  });

  it('makes every CJK ideograph and kana its own token; Hangul words stay whole', () => {
    expect(tokenize('東京都の天気')).toEqual(['東', '京', '都', 'の', '天', '気']);
    expect(tokenize('서울 날씨')).toEqual(['서울', '날씨']);
  });

  it('folds full-width ASCII to ASCII', () => {
    expect(tokenize('ＡＢＣ１２３ ｗｉｎｇ')).toEqual(['abc123', 'wing']);
  });

  it('treats emoji, symbols and joiners as separators', () => {
    expect(tokenize('rocket🚀launch 👩‍🚀astronaut ★star★ a→b')).toEqual(['rocket', 'launch', 'astronaut', 'star', 'b']);
    expect(tokenize('🚀🚀🚀')).toEqual([]);
  });

  it('treats invalid UTF-8 bytes and lone surrogates as separators, never crashing', () => {
    const bytes = Uint8Array.from([
      0x77, 0x69, 0x6e, 0x67, 0xff, 0x66, 0x6c, 0x61, 0x70, 0xc3, 0x28, 0x6a, 0x65, 0x74, 0xe2, 0x82,
    ]);
    expect(tokenize(bytes)).toEqual(['wing', 'flap', 'jet']);
    expect(tokenize(Uint8Array.from([0xed, 0xa0, 0x80, 0x61, 0x62, 0x63, 0xf4, 0x90, 0x80, 0x80]))).toEqual(['abc']);
    expect(tokenize('wing\ud800flap\udfffjet')).toEqual(['wing', 'flap', 'jet']);
    const random = new Uint8Array(100_000);
    let x = 12345;
    for (let i = 0; i < random.length; i++) {
      x = (x * 1103515245 + 12345) >>> 0;
      random[i] = x >>> 24;
    }
    expect(Array.isArray(tokenize(random))).toBe(true);
  });

  it('gives the same terms for a string and its UTF-8 bytes', () => {
    const text = 'Über die Flügel 東京 naïve résumé ΣΟΦΙΑ 🚀 end';
    expect(tokenize(new TextEncoder().encode(text))).toEqual(tokenize(text));
  });

  it('rejects non-text input with a typed error', () => {
    expect(() => tokenize(42 as unknown as string)).toThrow(InvalidArgumentError);
    expect(() => tokenize(null as unknown as string)).toThrow(InvalidArgumentError);
    expect(() => tokenize(['a'] as unknown as string)).toThrow(InvalidArgumentError);
  });
});
