import { describe, expect, it } from 'vitest';
import { colourEnabled, painter } from '../../../src/cli/colour.js';
import { parseCommandLine } from '../../../src/cli/flags.js';
import { UsageError } from '../../../src/cli/io.js';
import { outputFormat, renderData } from '../../../src/cli/output.js';
import { paintTriageReport } from '../../../src/cli/report-colour.js';
import { didYouMean, suggest } from '../../../src/cli/suggest.js';
import { CLEAR_LINE, terminalText } from '../../../src/cli/text.js';
import { readYaml as parseYaml } from '../../../src/yaml-text.js';

const ESC = '\u001b';

describe('did you mean', () => {
  const commands = ['triage', 'intents', 'snapshot', 'serve-snapshot', 'stats', 'doctor', 'manifest', 'version'];

  it('suggests the command one or two edits away, a swap of neighbours counting as one', () => {
    expect(suggest('tirage', commands)).toEqual(['triage']);
    expect(suggest('triag', commands)).toEqual(['triage']);
    expect(suggest('docter', commands)).toEqual(['doctor']);
    expect(suggest('snapshto', commands)).toEqual(['snapshot']);
    expect(suggest('stat', commands)).toEqual(['stats']);
  });

  it('suggests what a prefix was heading for, and nothing for what is far from every word', () => {
    expect(suggest('serve', commands)).toEqual(['serve-snapshot']);
    expect(suggest('--kube', ['--kubeconfig', '--context'])).toEqual(['--kubeconfig']);
    expect(suggest('frobnicate', commands)).toEqual([]);
    expect(suggest('', commands)).toEqual([]);
    // Short words are held to one edit: "ab" is not "stats".
    expect(suggest('ab', commands)).toEqual([]);
  });

  it('never suggests the word itself, and orders the closest first', () => {
    expect(suggest('triage', commands)).toEqual([]);
    expect(suggest('--jsno', ['--json', '--jsonl', '--now'])).toEqual(['--json', '--jsonl']);
    expect(suggest('--jsn', ['--json', '--jsonl', '--now'])).toEqual(['--json']);
  });

  it('phrases the suggestion for a message', () => {
    expect(didYouMean('tirage', commands)).toBe('; did you mean "triage"?');
    expect(didYouMean('--nmespace', ['--namespace', '--now'], false)).toBe('; did you mean --namespace?');
    expect(didYouMean('--con', ['--context', '--continue', '--now'], false)).toBe(
      '; did you mean --context or --continue?',
    );
    expect(didYouMean('-jsno', ['--json', '-n'], false)).toBe('; did you mean --json?');
    expect(didYouMean('xyzzy', commands)).toBe('');
  });
});

describe('flags', () => {
  const specs = {
    namespace: { type: 'string', short: 'n' },
    output: { type: 'string', short: 'o' },
    json: { type: 'boolean' },
    verbose: { type: 'boolean', short: 'v' },
    help: { type: 'boolean', short: 'h' },
    timeout: { type: 'string' },
  } as const;
  const parse = (args: string[], positionals = true) => parseCommandLine(args, specs, { positionals, command: 'test' });
  const usageError = (args: string[], positionals = true) => {
    try {
      parse(args, positionals);
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      return (error as Error).message;
    }
    throw new Error(`no usage error for ${args.join(' ')}`);
  };

  it('reads the forms kubectl takes', () => {
    expect(parse(['-n', 'shop', '--output=json', 'text', '-v']).values).toEqual({
      namespace: 'shop',
      output: 'json',
      verbose: true,
    });
    expect(parse(['-nshop', '-oyaml']).values).toEqual({ namespace: 'shop', output: 'yaml' });
    expect(parse(['-n=shop']).values).toEqual({ namespace: 'shop' });
    expect(parse(['-vh']).values).toEqual({ verbose: true, help: true });
    expect(parse(['-vn', 'shop']).values).toEqual({ verbose: true, namespace: 'shop' });
    expect(parse(['a', '--', '--json', '-n']).positionals).toEqual(['a', '--json', '-n']);
    // A negative number is a value, and a lone dash is an argument.
    expect(parse(['--timeout', '-1', '-']).values).toEqual({ timeout: '-1' });
    expect(parse(['--timeout', '-1', '-']).positionals).toEqual(['-']);
  });

  it('names an unknown flag with what it most likely meant', () => {
    expect(usageError(['--nmespace', 'shop'])).toBe('unknown flag "--nmespace"; did you mean --namespace?');
    expect(usageError(['--jsno'])).toBe('unknown flag "--jsno"; did you mean --json?');
    expect(usageError(['--frobnicate'])).toBe('unknown flag "--frobnicate"');
    expect(usageError(['-x'])).toBe('unknown flag "-x"');
    expect(usageError(['--constructor', 'x'])).toBe('unknown flag "--constructor"');
    expect(usageError(['--__proto__'])).toBe('unknown flag "--__proto__"');
    expect(usageError(['-vx'])).toBe('unknown flag "-x"');
    // One dash before a long name is a typo, not -n with the value "amespace".
    expect(usageError(['-namespace', 'shop'])).toBe('unknown flag "-namespace"; did you mean --namespace?');
  });

  it('refuses a flag without its value, a value for a switch, and arguments where none are taken', () => {
    expect(usageError(['-n'])).toBe('flag -n, --namespace needs a value');
    expect(usageError(['-n', '--json'])).toMatch(/^flag -n, --namespace needs a value, got the flag "--json"/);
    expect(usageError(['--json=yes'])).toBe('flag --json takes no value');
    expect(usageError(['extra'], false)).toBe(
      'unexpected argument "extra": calmops test takes no positional arguments',
    );
  });

  it('never answers in the words of node:util parseArgs', () => {
    for (const args of [['--bogus'], ['-n'], ['--json=1'], ['x']]) {
      expect(usageError(args, false)).not.toMatch(/place it|Unknown option|ERR_PARSE_ARGS/);
    }
  });
});

describe('-o', () => {
  const all = ['text', 'json', 'yaml'] as const;

  it('takes the allowed formats, --json as -o json, and the default when neither is given', () => {
    expect(outputFormat({}, all, 'text')).toBe('text');
    expect(outputFormat({ output: 'yaml' }, all, 'text')).toBe('yaml');
    expect(outputFormat({ json: true }, all, 'text')).toBe('json');
    expect(outputFormat({ json: true, output: 'json' }, all, 'text')).toBe('json');
    expect(outputFormat({}, ['yaml', 'json'], 'yaml')).toBe('yaml');
  });

  it('refuses an unknown format naming the allowed ones, and --json with another -o', () => {
    expect(() => outputFormat({ output: 'xml' }, all, 'text')).toThrow(
      'unknown output format "xml"; -o takes text, json, yaml',
    );
    expect(() => outputFormat({ output: 'jsno' }, all, 'text')).toThrow(/did you mean "json"\?; -o takes/);
    expect(() => outputFormat({ output: 'text' }, ['yaml', 'json'], 'yaml')).toThrow(/-o takes yaml, json$/);
    expect(() => outputFormat({ json: true, output: 'yaml' }, all, 'text')).toThrow(/--json is -o json/);
  });

  it('writes YAML that holds the same data as the JSON', () => {
    const data = { when: new Date('2025-01-01T00:00:00Z'), gone: undefined, long: 'x'.repeat(200), list: [1, 'a'] };
    const json = JSON.parse(renderData('json', data));
    expect(parseYaml(renderData('yaml', data))).toEqual(json);
    expect(renderData('yaml', data)).toContain(`long: ${'x'.repeat(200)}\n`);
  });
});

describe('colour', () => {
  it('is on for a terminal only, off with NO_COLOR set and not empty, and FORCE_COLOR decides when set', () => {
    expect(colourEnabled(true, {})).toBe(true);
    expect(colourEnabled(false, {})).toBe(false);
    expect(colourEnabled(undefined, {})).toBe(false);
    expect(colourEnabled(true, { NO_COLOR: '1' })).toBe(false);
    expect(colourEnabled(true, { NO_COLOR: 'anything' })).toBe(false);
    // https://no-color.org: an empty NO_COLOR is as if it were not set.
    expect(colourEnabled(true, { NO_COLOR: '' })).toBe(true);
    expect(colourEnabled(true, { TERM: 'dumb' })).toBe(false);
    expect(colourEnabled(false, { FORCE_COLOR: '1' })).toBe(true);
    expect(colourEnabled(false, { FORCE_COLOR: '' })).toBe(true);
    expect(colourEnabled(false, { FORCE_COLOR: '3' })).toBe(true);
    expect(colourEnabled(false, { FORCE_COLOR: 'true' })).toBe(true);
    expect(colourEnabled(true, { FORCE_COLOR: '0' })).toBe(false);
    expect(colourEnabled(true, { FORCE_COLOR: 'false' })).toBe(false);
    // As in Node, FORCE_COLOR wins over NO_COLOR.
    expect(colourEnabled(false, { FORCE_COLOR: '1', NO_COLOR: '1' })).toBe(true);
  });

  it('paints only when on', () => {
    expect(painter(false)('high', 'red')).toBe('high');
    expect(painter(true)('high', 'red')).toBe(`${ESC}[31mhigh${ESC}[39m`);
    expect(painter(true)('x', 'red', 'bold')).toBe(`${ESC}[1m${ESC}[31mx${ESC}[39m${ESC}[22m`);
  });

  it('styles the severity words, priority and safety labels of the triage report, and nothing else', () => {
    const report = [
      'Triage: pvc-binding in shop',
      '==========================',
      'Priority P1 · confidence High',
      'Findings',
      '  [critical] A Pod/a: [high] in a message stays as it is',
      '  [medium] B Pod/b: m',
      '      · evidence [low]',
      'Next actions',
      '  [SAFE] Look.',
      '  [REQUIRES_APPROVAL, mutating] Change.',
      '',
    ].join('\n');
    const tag = (text: string) => `<${text}>`;
    const painted = paintTriageReport(report, (text, ...styles) => `${styles.map(tag).join('')}${text}</>`);
    expect(painted.split('\n')).toEqual([
      '<bold>Triage: pvc-binding in shop</>',
      '==========================',
      'Priority <red><bold>P1</> · confidence High',
      '<bold>Findings</>',
      '  [<red><bold>critical</>] A Pod/a: [high] in a message stays as it is',
      '  [<yellow>medium</>] B Pod/b: m',
      '      · evidence [low]',
      '<bold>Next actions</>',
      '  [<green>SAFE</>] Look.',
      '  [<yellow>REQUIRES_APPROVAL</>, mutating] Change.',
      '',
    ]);
    expect(paintTriageReport(report, painter(false))).toBe(report);
  });
});

describe('what reaches a terminal', () => {
  const red = `${ESC}[31mhigh${ESC}[39m`;

  it('escapes every control sequence when colour is off, the palette included', () => {
    expect(terminalText(red, { colour: false, clearLine: false })).toBe('\\x1b[31mhigh\\x1b[39m');
    expect(terminalText(`${CLEAR_LINE}x`, { colour: false, clearLine: false })).toBe('\\x0d\\x1b[Kx');
  });

  it('lets the palette through when colour is on, and the progress rewrite on a terminal, but nothing else', () => {
    expect(terminalText(red, { colour: true, clearLine: false })).toBe(red);
    expect(terminalText(`${CLEAR_LINE}x`, { colour: false, clearLine: true })).toBe(`${CLEAR_LINE}x`);
    // A title change, a cursor move and a colour outside the palette stay escaped.
    const hostile = `${ESC}]0;pwned\u0007${ESC}[2A${ESC}[38;5;196mx\ry`;
    expect(terminalText(hostile, { colour: true, clearLine: true })).toBe(
      '\\x1b]0;pwned\\x07\\x1b[2A\\x1b[38;5;196mx\\x0dy',
    );
  });
});
