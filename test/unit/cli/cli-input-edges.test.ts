import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkInputFile, InputFileError, parseByteSize } from '../../../src/cli/input-files.js';
import { UsageError } from '../../../src/cli/io.js';
import { checkNowWindow, parseNowOption } from '../../../src/cli/now-option.js';
import { printable, shown } from '../../../src/cli/text.js';

describe('--now', () => {
  it('takes dates and zoned times, and only real ones', () => {
    expect(parseNowOption('--now', '2025-01-31').toISOString()).toBe('2025-01-31T00:00:00.000Z');
    expect(parseNowOption('--now', '2024-02-29T23:59:59.5+02:00').toISOString()).toBe('2024-02-29T21:59:59.500Z');
    for (const bad of ['2025-02-29', '2025-02-30', '2025-13-01', '2025-01-31T24:00:00Z', '2025-01-31T10:00', 'now']) {
      expect(() => parseNowOption('--now', bad), bad).toThrow(UsageError);
    }
  });

  it('must be within 30 days of the snapshot, of the clock when live, and plausible otherwise', () => {
    const newest = new Date('2025-06-01T00:00:00Z');
    const clock = new Date('2026-01-01T00:00:00Z');
    const at = (text: string) => new Date(text);
    expect(() => checkNowWindow('--now', at('2025-06-30T00:00:00Z'), { snapshotNewest: newest }, clock)).not.toThrow();
    expect(() => checkNowWindow('--now', at('2025-05-02T00:00:00Z'), { snapshotNewest: newest }, clock)).not.toThrow();
    expect(() => checkNowWindow('--now', at('2025-07-02T00:00:00Z'), { snapshotNewest: newest }, clock)).toThrow(
      /more than 30 days from the snapshot's newest timestamp \(2025-06-01T00:00:00Z\)/,
    );
    expect(() => checkNowWindow('--now', at('9999-12-31T00:00:00Z'), { live: true }, clock)).toThrow(/from the clock/);
    expect(() => checkNowWindow('--now', at('2025-12-10T00:00:00Z'), { live: true }, clock)).not.toThrow();
    expect(() =>
      checkNowWindow('--now', at('2020-01-01T00:00:00Z'), { snapshotNewest: undefined }, clock),
    ).not.toThrow();
    expect(() => checkNowWindow('--now', at('2013-01-01T00:00:00Z'), { snapshotNewest: undefined }, clock)).toThrow(
      /after 2014/,
    );
    expect(() => checkNowWindow('--now', at('2026-03-01T00:00:00Z'), { snapshotNewest: undefined }, clock)).toThrow(
      /no more than 30 days ahead of the clock/,
    );
  });
});

describe('--max-bytes and input files', () => {
  it('reads sizes with binary suffixes and refuses nonsense', () => {
    expect(parseByteSize('--max-bytes', '1024')).toBe(1024);
    expect(parseByteSize('--max-bytes', '512M')).toBe(512 * 1024 * 1024);
    expect(parseByteSize('--max-bytes', '1GiB')).toBe(1024 ** 3);
    expect(parseByteSize('--max-bytes', '64kb')).toBe(64 * 1024);
    for (const bad of ['0', '-1', '3G', '1.5M', 'lots', '']) {
      expect(() => parseByteSize('--max-bytes', bad), bad).toThrow(UsageError);
    }
  });

  it('checks a file by its metadata only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'calmops-input-'));
    const path = join(dir, 'a.yaml');
    writeFileSync(path, 'x'.repeat(2048));
    expect(() => checkInputFile(path, 'snapshot', 4096)).not.toThrow();
    expect(() => checkInputFile(path, 'snapshot', 1024)).toThrow(/is 2048 bytes, over the 1024 bytes limit/);
    expect(() => checkInputFile(dir, 'snapshot', 1024)).toThrow(/is a directory/);
    expect(() => checkInputFile('/dev/null', 'logs', 1024)).toThrow(InputFileError);
    expect(() => checkInputFile(join(dir, 'missing.yaml'), 'snapshot', 1024)).not.toThrow();
  });
});

describe('text echoed to the terminal', () => {
  it('shows control characters as escapes and keeps lines', () => {
    expect(printable('a\u001b[2Jb\u0007c\r\nd\te\u202ef\u009bg')).toBe('a\\x1b[2Jb\\x07c\\x0d\nd\te\\u202ef\\x9bg');
    expect(shown('line1\nline2\u001b')).toBe('line1\\x0aline2\\x1b');
    expect(shown('x'.repeat(300), 10)).toBe(`${'x'.repeat(10)}…`);
    expect(printable('plain ünïcödé ✓')).toBe('plain ünïcödé ✓');
  });
});
