import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { byCodePoint, sortByCodePoint } from '../../../src/code-point-order.js';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../../src');

describe('ordering strings', () => {
  it('orders by code unit, not by locale: upper case before lower case, punctuation by its code', () => {
    expect(['b', 'B', 'a', 'A'].sort(byCodePoint)).toEqual(['A', 'B', 'a', 'b']);
    expect(['10.0.0.1:53', '10.0.0.10:53'].sort(byCodePoint)).toEqual(['10.0.0.10:53', '10.0.0.1:53']);
    expect(byCodePoint('web-1', 'web-1')).toBe(0);
  });

  it('sorts without a comparator in the same order, surrogate pairs and all', () => {
    const strings = [
      'b',
      'B',
      '10.0.0.1:53',
      '10.0.0.10:53',
      'ns/web-1',
      'ns/web-1\u0000',
      'ns0',
      'é',
      '\u{1F600}',
      '\uFFFF',
      '',
    ];
    expect(sortByCodePoint([...strings])).toEqual([...strings].sort(byCodePoint));
  });

  it('agrees with the locale order on what calmops mostly sorts: names, ids and timestamps', () => {
    const names = ['web-10', 'web-1', 'api', 'api-server', 'db.primary', 'db-primary', '2025-06-01T09:00:00Z'];
    expect([...names].sort(byCodePoint)).toEqual([...names].sort((a, b) => a.localeCompare(b)));
  });

  it('is the only way src/ sorts strings: localeCompare would load ICU collation on the first call', () => {
    const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const users = files.filter((f) => readFileSync(join(SRC, f), 'utf8').includes('.localeCompare('));
    expect(users).toEqual([]);
  });
});
