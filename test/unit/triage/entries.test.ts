import { describe, expect, it } from 'vitest';
import { entriesOf } from '../../../src/triage/kube/entries.js';

describe('entriesOf', () => {
  it('hands back a list whose entries are all objects as it is', () => {
    const list = [{ name: 'a' }, { name: 'b' }];
    expect(entriesOf(list)).toBe(list);
  });

  it('keeps only the entries that are objects, in order, without changing the list', () => {
    const list: unknown[] = [{ name: 'a' }, null, 'b', ['c'], 4, { name: 'd' }, undefined];
    expect(entriesOf(list)).toEqual([{ name: 'a' }, { name: 'd' }]);
    expect(list).toHaveLength(7);
  });

  it('reads what is not a list as no entries', () => {
    for (const value of [undefined, null, 'a', 3, { 0: { name: 'a' }, length: 1 }])
      expect(entriesOf(value)).toEqual([]);
  });
});
