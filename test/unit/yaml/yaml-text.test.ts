import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { ALIAS_EXPANSION, readYaml, writeYaml, YamlReadError, yamlScalar } from '../../../src/yaml-text.js';

function readError(text: string): YamlReadError {
  try {
    readYaml(text);
  } catch (error) {
    expect(error).toBeInstanceOf(YamlReadError);
    return error as YamlReadError;
  }
  throw new Error('the text was read');
}

/** Strings that a YAML reader could take for something else, or that need quoting or escaping to be written. */
const AWKWARD = [
  '',
  'yes',
  'No',
  'on',
  'OFF',
  'y',
  'n',
  'true',
  'False',
  'null',
  '~',
  '1',
  '-1',
  '1_000',
  '0b101',
  '0o17',
  '017',
  '0x1F',
  '-0x1',
  '1.5',
  '-.5',
  '+.5',
  '1.',
  '1e3',
  '.inf',
  '-.Inf',
  '.NaN',
  '2024-01-01',
  '2025-11-20T14:04:42Z',
  '12:30:00',
  '<<',
  '=',
  '-conf',
  '- item',
  '? key',
  'a: b',
  'a #b',
  '#hash',
  '[1, 2]',
  '{a: 1}',
  '&anchor',
  '*alias',
  '!tag',
  '%directive',
  '@at',
  '`tick',
  '|',
  '>',
  '"double"',
  "it's",
  ' leading',
  'trailing ',
  'two\nlines',
  'ends\n',
  '\nstarts',
  'tab\there',
  'bell\u0007',
  'next\u0085line',
  'bidi\u202eflip',
  'ümlaut ✓',
  'x'.repeat(300),
];

describe('reading YAML', () => {
  it('reads the YAML 1.2 core schema: only true/false, null and spec numbers are not strings', () => {
    const text = [
      'on: on',
      'yes: yes',
      'when: 2025-11-20T14:04:42Z',
      'day: 2025-11-20',
      'under: 1_000',
      'binary: 0b1',
      'signedHex: -0x1',
      'sexagesimal: 1:20',
      'bool: true',
      'nothing: null',
      'tilde: ~',
      'empty:',
      'int: 42',
      'hex: 0x1F',
      'octal: 0o17',
      'float: -.5',
      'exp: 1e3',
      'inf: -.inf',
      '<<: {merged: no}',
    ].join('\n');
    expect(readYaml(text)).toEqual({
      on: 'on',
      yes: 'yes',
      when: '2025-11-20T14:04:42Z',
      day: '2025-11-20',
      under: '1_000',
      binary: '0b1',
      signedHex: '-0x1',
      sexagesimal: '1:20',
      bool: true,
      nothing: null,
      tilde: null,
      empty: null,
      int: 42,
      hex: 31,
      octal: 15,
      float: -0.5,
      exp: 1000,
      inf: Number.NEGATIVE_INFINITY,
      '<<': { merged: 'no' },
    });
  });

  it('reads an empty text, or one of comments only, as null', () => {
    expect(readYaml('')).toBeNull();
    expect(readYaml('# nothing here\n')).toBeNull();
  });

  it('refuses a repeated key, naming its line', () => {
    const error = readError('id: a\nother: b\nid: c\n');
    expect(error.line).toBe(3);
    expect(error.reason).toBe('duplicated mapping key');
    expect(error.message).toBe('line 3: duplicated mapping key');
  });

  it('refuses a second document', () => {
    expect(readError('a: 1\n---\nb: 2\n').reason).toMatch(/expected a single document/);
  });

  it('names the line of a syntax error', () => {
    const error = readError('a:\n  b: [1,\n  c: 2\n');
    expect(error.line).toBeGreaterThanOrEqual(2);
    expect(error.message).toMatch(/^line \d+: /);
  });

  it('refuses aliases that expand without bound, and an anchor that contains itself', () => {
    const laughs = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 0; i < 9; i++) {
      const name = String.fromCharCode(98 + i);
      const previous = String.fromCharCode(97 + i);
      laughs.push(`${name}: &${name} [${Array(10).fill(`*${previous}`).join(', ')}]`);
    }
    expect(readError(laughs.join('\n')).message).toBe(ALIAS_EXPANSION);
    expect(readError('a: &a [*a]\n').message).toBe(ALIAS_EXPANSION);
    // A few shared subtrees are fine.
    expect(readYaml('base: &b {x: 1}\none: *b\ntwo: *b\n')).toEqual({ base: { x: 1 }, one: { x: 1 }, two: { x: 1 } });
  });
});

describe('writing YAML', () => {
  it('writes every awkward string so that it reads back as the same string, here and in a YAML 1.1 reader', () => {
    const data = { list: AWKWARD, map: Object.fromEntries(AWKWARD.filter((s) => s !== '').map((s) => [s, s])) };
    const text = writeYaml(data);
    expect(readYaml(text)).toEqual(data);
    // js-yaml's default schema keeps YAML 1.1's timestamps and merge keys: still strings.
    expect(load(text)).toEqual(data);
    for (const value of AWKWARD) {
      if (value.includes('\n')) continue;
      expect(readYaml(`v: ${yamlScalar(value)}`)).toEqual({ v: value });
      expect(yamlScalar(value)).not.toContain('\n');
    }
  });

  it('quotes the YAML 1.1 booleans, which kubectl would read as booleans', () => {
    expect(writeYaml({ a: 'yes', b: 'off', c: 'plain' })).toBe('a: "yes"\nb: "off"\nc: plain\n');
  });

  it('writes numbers, booleans and null as themselves', () => {
    const data = { int: 42, negative: -7, float: 1.5, big: 1e21, truth: true, lie: false, nothing: null, empty: {} };
    const text = writeYaml(data);
    expect(readYaml(text)).toEqual(data);
    expect(text).toContain('int: 42\n');
    expect(text).toContain('truth: true\n');
    expect(text).toContain('nothing: null\n');
    expect(text).toContain('empty: {}\n');
  });

  it('keeps long strings on one line, and multi-line strings as literal blocks', () => {
    const long = `${'word '.repeat(60)}end`;
    expect(writeYaml({ long })).toBe(`long: ${long}\n`);
    expect(writeYaml({ text: 'one\ntwo' })).toBe('text: |-\n  one\n  two\n');
  });

  it('leaves undefined fields out and writes undefined items as null, as JSON does', () => {
    expect(writeYaml({ a: 1, b: undefined, c: [1, undefined] })).toBe('a: 1\nc:\n  - 1\n  - null\n');
  });

  it('writes a shared object out at each place, without anchors', () => {
    const shared = { x: 1 };
    const text = writeYaml({ one: shared, two: shared });
    expect(text).not.toMatch(/[&*]ref/);
    expect(text).toBe('one:\n  x: 1\ntwo:\n  x: 1\n');
  });
});
