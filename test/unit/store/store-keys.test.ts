import { describe, expect, it } from 'vitest';
import { KeyPart } from '../../../src/limits.js';
import {
  formatSeq,
  gsi1,
  IsoTimestampSchema,
  keys,
  parseTimelineSk,
  toEpochSeconds,
  toIso,
} from '../../../src/store/keys.js';

describe('key layout', () => {
  it('builds the PK/SK forms of the data model', () => {
    expect(keys.session('S1')).toEqual({ PK: 'SESSION#S1', SK: 'META' });
    expect(keys.timelineEvent('S1', '2030-01-01T00:00:00.000Z', 7)).toEqual({
      PK: 'SESSION#S1',
      SK: 'EVENT#2030-01-01T00:00:00.000Z#000007',
    });
    expect(keys.inboxMessage('S1', '01J0000000000000000000000A')).toEqual({
      PK: 'SESSION#S1',
      SK: 'INBOX#01J0000000000000000000000A',
    });
    expect(keys.wait('S1')).toEqual({ PK: 'SESSION#S1', SK: 'WAIT' });
    expect(keys.finding('S1', 'F1')).toEqual({ PK: 'SESSION#S1', SK: 'FINDING#F1' });
    expect(keys.approval('A1')).toEqual({ PK: 'APPROVAL#A1', SK: 'META' });
    expect(keys.approvalDecider('A1', 'U1')).toEqual({ PK: 'APPROVAL#A1', SK: 'DECIDER#U1' });
    expect(keys.thread('C1', '1712345678.000100')).toEqual({ PK: 'THREAD#C1#1712345678.000100', SK: 'META' });
    expect(keys.memory('M1')).toEqual({ PK: 'MEMORY#M1', SK: 'META' });
    expect(keys.memoryToken('code:PVC_PENDING', 'M1')).toEqual({ PK: 'TOKEN#code:PVC_PENDING', SK: 'MEMORY#M1' });
    expect(keys.dedupe('event:Ev1')).toEqual({ PK: 'DEDUPE#event:Ev1', SK: 'META' });
  });

  it('names the GSI1 lists', () => {
    expect(gsi1.openSessionsInChannel('C1')).toBe('CHANNEL#C1#OPEN');
    expect(gsi1.sessionsWithStatus('resolved')).toBe('SESSIONS#RESOLVED');
    expect(gsi1.approvalsForApprover('U1')).toBe('APPROVER#U1');
  });

  it('pads sequence numbers so lexical order is numeric order', () => {
    const sks = [2, 10, 1, 100].map((n) => keys.timelineEvent('S', '2030-01-01T00:00:00.000Z', n).SK);
    expect([...sks].sort()).toEqual([1, 2, 10, 100].map((n) => `EVENT#2030-01-01T00:00:00.000Z#${formatSeq(n)}`));
    expect(parseTimelineSk(sks[1]!)).toEqual({ at: '2030-01-01T00:00:00.000Z', seq: 10 });
    expect(parseTimelineSk('INBOX#x')).toBeUndefined();
    expect(parseTimelineSk('EVENT#nohash')).toBeUndefined();
  });

  it('refuses key parts that would break the layout', () => {
    expect(KeyPart.safeParse('C0123ABC').success).toBe(true);
    expect(KeyPart.safeParse('1712345678.000100').success).toBe(true);
    expect(KeyPart.safeParse('a#b').success).toBe(false);
    expect(KeyPart.safeParse('').success).toBe(false);
    expect(KeyPart.safeParse('x'.repeat(65)).success).toBe(false);
    expect(KeyPart.safeParse('has space').success).toBe(false);
  });

  it('keeps timestamps canonical so string comparison is time comparison', () => {
    expect(IsoTimestampSchema.safeParse('2030-01-01T00:00:00.000Z').success).toBe(true);
    expect(IsoTimestampSchema.safeParse('2030-01-01T00:00:00Z').success).toBe(false);
    expect(IsoTimestampSchema.safeParse('2030-01-01T01:00:00.000+01:00').success).toBe(false);
    expect(toIso(new Date(Date.UTC(2030, 0, 1)))).toBe('2030-01-01T00:00:00.000Z');
    expect(() => toIso(new Date(Number.NaN))).toThrow(RangeError);
  });

  it('rounds TTL epochs up so nothing is swept before it expires', () => {
    expect(toEpochSeconds('2030-01-01T00:00:00.000Z')).toBe(1_893_456_000);
    expect(toEpochSeconds(new Date('2030-01-01T00:00:00.001Z'))).toBe(1_893_456_001);
  });
});
