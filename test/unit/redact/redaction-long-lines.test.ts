import { describe, expect, it } from 'vitest';
import { ADVERSARIAL_UNITS, adversarialInputs, repeated } from '../../../bench/support/adversarial-lines.js';
import { MAX_LINE } from '../../../src/redact/cap.js';
import { REDACTED, redactText } from '../../../src/redact/index.js';
import { leakedPart, SecretFactory } from '../../support/redaction-support.js';

/**
 * Lines as long as the reader accepts (1 MiB), built to make backtracking patterns work hard. What they cost is
 * measured by `npm run bench -- redaction`; here is what comes out: a line cut to what any rule sees, redacted,
 * stable under a second pass, with no piece of a credential left, wherever the cut fell.
 */

const MiB = 1024 * 1024;
const factory = new SecretFactory(7);

describe('a 1 MiB line', () => {
  it('is cut to the length every rule sees, and says how much it lost', () => {
    const out = redactText(repeated('a', MiB));
    expect(out.length).toBeLessThan(MAX_LINE + 64);
    expect(out).toMatch(/ … \[\d+ characters not shown\]$/);
  });

  it.each(adversarialInputs(MiB).filter((input) => !input.text.includes('\n')))(
    'of $name comes out bounded and stable',
    ({ text }) => {
      const out = redactText(text);
      expect(out.length).toBeLessThan(MAX_LINE + 64);
      expect(redactText(out)).toBe(out);
    },
  );

  it('loses the credentials it starts with, and leaves no piece of one the cut went through', () => {
    const token = factory.make('github_pat') as string;
    const head = redactText(`Authorization: token ${token} ${repeated('x ', MiB)}`);
    expect(leakedPart(head, token)).toBeUndefined();
    for (let shift = 0; shift < 48; shift += 3) {
      const key = factory.make('aws_secret') as string;
      const line = `${repeated('w', MAX_LINE - 20 + shift)} ${key} ${repeated('y ', 4096)}`;
      expect(leakedPart(redactText(line), key), `cut ${shift}`).toBeUndefined();
    }
  });
});

describe('1 MiB of many lines', () => {
  it.each(ADVERSARIAL_UNITS.filter((unit) => unit.includes('\n')))('of %j keeps every line and is stable', (unit) => {
    const text = repeated(unit, MiB);
    const out = redactText(text);
    expect(out.split('\n').length).toBe(text.split('\n').length);
    expect(redactText(out)).toBe(out);
  });

  it('of credentials on every line keeps none of them', () => {
    const passwords = Array.from({ length: 2000 }, () => factory.make('password') as string);
    const out = redactText(passwords.map((p, i) => `line ${i}: redis-cli -a ${p} ping`).join('\n'));
    expect(out.split('\n').every((line) => line.includes(REDACTED))).toBe(true);
    expect(passwords.filter((p) => out.includes(p))).toEqual([]);
  });
});
