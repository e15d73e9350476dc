import { describe, expect, it } from 'vitest';
import { NewApprovalSchema } from '../../../src/store/approvals.js';
import { SharedFindingInputSchema } from '../../../src/store/blackboard.js';
import { createTableInput, tableDifferences } from '../../../src/store/create-table.js';
import { invalid, parseInput, parseRecord } from '../../../src/store/dynamo.js';
import {
  ApprovalExpiredError,
  MalformedRecordError,
  StaleVersionError,
  StoreError,
  StoreValidationError,
} from '../../../src/store/errors.js';
import { NewSessionSchema, SessionPatchSchema, SessionRecordSchema } from '../../../src/store/sessions.js';
import { TABLE_DEFINITION } from '../../../src/store/table.js';
import { TimelineEventInputSchema } from '../../../src/store/timeline.js';

const validSession = {
  id: 'S1',
  state: 'GATHERING',
  status: 'open',
  intent: 'pods-pending',
  namespace: 'payments',
  channelId: 'C1',
  requester: 'U1',
  version: 1,
  createdAt: '2030-01-01T00:00:00.000Z',
  updatedAt: '2030-01-01T00:00:00.000Z',
};

describe('session schemas', () => {
  it('fills defaults for fields added after a record was written', () => {
    const parsed = SessionRecordSchema.parse(validSession);
    expect(parsed).toMatchObject({ resumeCount: 0, handoffCount: 0, hypotheses: [], memoryMatchIds: [] });
    expect(parsed.evidence).toEqual({ completeness: 0, items: [], findingCodes: [] });
  });

  it('lets an update touch only mutable fields', () => {
    expect(SessionPatchSchema.safeParse({ state: 'TESTING', override: null }).success).toBe(true);
    for (const patch of [
      { id: 'other' },
      { version: 3 },
      { requester: 'U2' },
      { channelId: 'C2' },
      { createdAt: 'x' },
    ]) {
      expect(SessionPatchSchema.safeParse(patch).success).toBe(false);
    }
    expect(SessionPatchSchema.safeParse({ state: 'gathering' }).success).toBe(false);
  });

  it('validates new sessions strictly', () => {
    const base = { intent: 'x', namespace: 'n', channelId: 'C1', requester: 'U1' };
    expect(NewSessionSchema.parse(base).state).toBe('GATHERING');
    expect(NewSessionSchema.safeParse({ ...base, version: 9 }).success).toBe(false);
    expect(NewSessionSchema.safeParse({ ...base, evidence: { completeness: 1.5 } }).success).toBe(false);
  });
});

describe('other input schemas', () => {
  it('timeline event types are dotted lower-case names', () => {
    expect(TimelineEventInputSchema.safeParse({ type: 'state.changed' }).success).toBe(true);
    expect(TimelineEventInputSchema.safeParse({ type: 'State Changed' }).success).toBe(false);
  });

  it('approvals need unique deciders', () => {
    const base = { kind: 'plan', sessionId: 'S1', expiresAt: new Date() };
    expect(NewApprovalSchema.safeParse({ ...base, allowedDeciders: ['U1', 'U2'] }).success).toBe(true);
    expect(NewApprovalSchema.safeParse({ ...base, allowedDeciders: ['U1', 'U1'] }).success).toBe(false);
    expect(NewApprovalSchema.safeParse({ ...base, allowedDeciders: [] }).success).toBe(false);
    expect(NewApprovalSchema.safeParse({ ...base, allowedDeciders: ['U1'], token: 'x'.repeat(2049) }).success).toBe(
      false,
    );
  });

  it('shared findings carry a confidence between 0 and 1 and a known specialist', () => {
    const ok = { specialist: 'storage', summary: 'OSD.5 down', confidence: 0.95 };
    expect(SharedFindingInputSchema.parse(ok).related).toEqual([]);
    expect(SharedFindingInputSchema.safeParse({ ...ok, confidence: 1.2 }).success).toBe(false);
    expect(SharedFindingInputSchema.safeParse({ ...ok, specialist: 'database' }).success).toBe(false);
  });
});

describe('validation helpers and errors', () => {
  it('turns bad input into StoreValidationError naming the field', () => {
    const error = (() => {
      try {
        parseInput(NewSessionSchema, { intent: '', namespace: 'n', channelId: 'C1', requester: 'U1' }, 'new session');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(StoreValidationError);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).name).toBe('StoreValidationError');
    expect((error as Error).message).toMatch(/^Invalid new session: intent: /);
    expect((error as Error).cause).toBeDefined();
    expect(invalid('wait', 'expiresAt', 'must be after now').message).toBe(
      'Invalid wait: expiresAt: must be after now',
    );
  });

  it('turns a bad stored item into MalformedRecordError naming its key', () => {
    expect(() =>
      parseRecord(SessionRecordSchema, { PK: 'SESSION#S1', SK: 'META', ...validSession, version: 0 }),
    ).toThrow(MalformedRecordError);
    expect(() => parseRecord(SessionRecordSchema, { PK: 'SESSION#S1', SK: 'META', state: 'X' })).toThrow(
      /Malformed record SESSION#S1 \/ META: /,
    );
  });

  it('gives errors readable messages and their own names', () => {
    const stale = new StaleVersionError('S1', 3, 5);
    expect(stale.name).toBe('StaleVersionError');
    expect(stale.message).toBe('Session S1 is at version 5, not 3: it changed since it was read');
    expect(new ApprovalExpiredError('A1', '2030-01-01T00:00:00.000Z').message).toBe(
      'Approval A1 expired at 2030-01-01T00:00:00.000Z and can no longer be decided',
    );
  });
});

describe('table definition', () => {
  it('builds CreateTable input from the shared definition', () => {
    const input = createTableInput('calmops');
    expect(input.KeySchema).toEqual([
      { AttributeName: 'PK', KeyType: 'HASH' },
      { AttributeName: 'SK', KeyType: 'RANGE' },
    ]);
    expect(input.AttributeDefinitions?.map((a) => a.AttributeName).sort()).toEqual(['GSI1PK', 'GSI1SK', 'PK', 'SK']);
    expect(input.GlobalSecondaryIndexes?.[0]).toMatchObject({
      IndexName: 'GSI1',
      Projection: { ProjectionType: 'ALL' },
    });
    expect(input.BillingMode).toBe('PAY_PER_REQUEST');
    expect(TABLE_DEFINITION.ttlAttribute).toBe('expiresAtEpoch');
  });

  it('reports how an existing table differs', () => {
    const want = createTableInput('calmops');
    expect(
      tableDifferences(
        { KeySchema: want.KeySchema, GlobalSecondaryIndexes: want.GlobalSecondaryIndexes as never },
        'calmops',
      ),
    ).toEqual([]);
    expect(tableDifferences({ KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }] }, 'calmops')).toEqual([
      'key schema is id:HASH, expected PK:HASH,SK:RANGE',
      'index GSI1 is missing',
    ]);
  });
});
