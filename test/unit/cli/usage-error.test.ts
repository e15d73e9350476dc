import { describe, expect, it } from 'vitest';
import { isUsageError, UsageError } from '../../../src/cli/io.js';

/** Each command of the command-line bundle carries its own copy of io.ts; main tells their usage errors all the same. */
describe('isUsageError', () => {
  it('knows a usage error from another copy of the module, and nothing else', async () => {
    const copy = (await import(
      /* @vite-ignore */ `../../../src/cli/io.js?copy=${Date.now()}`
    )) as typeof import('../../../src/cli/io.js');
    expect(copy.UsageError).not.toBe(UsageError);
    const foreign = new copy.UsageError('unknown flag "--jsn"');
    expect(foreign).not.toBeInstanceOf(UsageError);
    expect(isUsageError(foreign)).toBe(true);
    expect(isUsageError(new UsageError('x'))).toBe(true);
    for (const other of [
      new Error('x'),
      Object.assign(new Error('x'), { name: 'UsageError' }),
      'UsageError',
      null,
      undefined,
      {},
    ]) {
      expect(isUsageError(other)).toBe(false);
    }
  });
});
