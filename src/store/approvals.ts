import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import * as z from 'zod';
import { byCodePoint } from '../code-point-order.js';
import { KeyPart, NoteText, SlackId, SummaryText } from '../limits.js';
import type { StoreContext } from './client.js';
import {
  conditionalPut,
  conditionalUpdate,
  getItem,
  invalid,
  parseInput,
  parseRecord,
  queryItems,
  request,
} from './dynamo.js';
import {
  ApprovalAlreadyDecidedError,
  ApprovalAlreadyExistsError,
  ApprovalExpiredError,
  ApprovalNotAllowedError,
  ApprovalNotFoundError,
  StoreError,
} from './errors.js';
import { GSI1, gsi1, IsoTimestampSchema, keys, toEpochSeconds, toIso } from './keys.js';
import { TaskTokenSchema } from './waits.js';

export const ApprovalStatusSchema = z.enum(['pending', 'approved', 'rejected', 'expired', 'cancelled']);

export const ApprovalDecisionSchema = z.enum(['approved', 'rejected']);
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;

/** What is being approved, e.g. `handoff`, `plan`, `break-glass`. */
export const ApprovalKindSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z][a-z0-9_.-]*$/, 'use a lower-case name such as handoff');

export const NewApprovalSchema = z.strictObject({
  id: KeyPart.optional(),
  kind: ApprovalKindSchema,
  sessionId: KeyPart,
  /** The task token of the execution waiting for the decision; never put in a Slack button. */
  token: TaskTokenSchema.optional(),
  allowedDeciders: z
    .array(KeyPart)
    .min(1)
    .max(50)
    .refine((ids) => new Set(ids).size === ids.length, 'deciders must be unique'),
  requester: SlackId.optional(),
  expiresAt: z.date(),
  summary: SummaryText.optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});
export type NewApproval = z.input<typeof NewApprovalSchema>;

export const ApprovalRecordSchema = z.object({
  id: KeyPart,
  kind: ApprovalKindSchema,
  sessionId: KeyPart,
  token: TaskTokenSchema.optional(),
  allowedDeciders: z.array(KeyPart).min(1),
  requester: SlackId.optional(),
  status: ApprovalStatusSchema,
  createdAt: IsoTimestampSchema,
  expiresAt: IsoTimestampSchema,
  decidedAt: IsoTimestampSchema.optional(),
  decidedBy: SlackId.optional(),
  reason: NoteText.optional(),
  summary: SummaryText.optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});
export type ApprovalRecord = z.infer<typeof ApprovalRecordSchema>;

export interface ApprovalOptions {
  /** Decided and expired approvals are swept by TTL this many days after they expire. */
  retentionDays?: number;
}

/**
 * Approvals (handoffs, remediation plans, break-glass). A decision is one conditional update whose condition holds
 * every rule — still pending, not expired, decider allowed — so concurrent clicks yield exactly one winner and an
 * expired approval can never be decided, whatever TTL has or has not swept.
 */
export class ApprovalRepository {
  private readonly retentionSeconds: number;

  constructor(
    private readonly ctx: StoreContext,
    options: ApprovalOptions = {},
  ) {
    this.retentionSeconds = Math.round((options.retentionDays ?? 90) * 86_400);
  }

  async create(input: NewApproval, now: Date = new Date()): Promise<ApprovalRecord> {
    const parsed = parseInput(NewApprovalSchema, input, 'approval');
    const at = toIso(now);
    const expiresAt = toIso(parsed.expiresAt);
    if (expiresAt <= at) throw invalid('approval', 'expiresAt', `must be after ${at}`);
    const { expiresAt: _, id: givenId, ...rest } = parsed;
    const record = parseInput(
      ApprovalRecordSchema,
      { ...rest, id: givenId ?? ulid(now.getTime()), status: 'pending', createdAt: at, expiresAt },
      'approval',
    );
    const ttl = toEpochSeconds(expiresAt) + this.retentionSeconds;

    // Index entries first, the approval itself last: if anything fails midway, no decidable approval exists yet,
    // and an index entry without its approval is skipped when listing.
    const sessionEntry = keys.approvalSession(record.id);
    await Promise.all([
      request('PutItem', sessionEntry, () =>
        this.ctx.client.send(
          new PutCommand({
            TableName: this.ctx.tableName,
            Item: {
              ...sessionEntry,
              GSI1PK: gsi1.pendingApprovalsOfSession(record.sessionId),
              GSI1SK: `${at}#${record.id}`,
              approvalId: record.id,
              kind: record.kind,
              expiresAtEpoch: ttl,
            },
          }),
        ),
      ),
      ...record.allowedDeciders.map((userId) => {
        const key = keys.approvalDecider(record.id, userId);
        return request('PutItem', key, () =>
          this.ctx.client.send(
            new PutCommand({
              TableName: this.ctx.tableName,
              Item: {
                ...key,
                GSI1PK: gsi1.approvalsForApprover(userId),
                GSI1SK: `${expiresAt}#${record.id}`,
                approvalId: record.id,
                userId,
                expiresAtEpoch: ttl,
              },
            }),
          ),
        );
      }),
    ]);

    const key = keys.approval(record.id);
    const writeId = ulid();
    const result = await conditionalPut(this.ctx, key, {
      Item: { ...key, ...record, writeId, expiresAtEpoch: ttl },
      ConditionExpression: 'attribute_not_exists(PK)',
    });
    if (!result.ok) {
      const stored = await getItem(this.ctx, key);
      if (stored?.['writeId'] !== writeId) throw new ApprovalAlreadyExistsError(record.id);
    }
    return record;
  }

  async get(id: string): Promise<ApprovalRecord | undefined> {
    const approvalId = parseInput(KeyPart, id, 'approval id');
    const item = await getItem(this.ctx, keys.approval(approvalId));
    return item === undefined ? undefined : parseRecord(ApprovalRecordSchema, item);
  }

  /**
   * Records the decision if the approval is pending, unexpired at `now` and `userId` may decide it. Returns the
   * decided approval (with its task token) to the single winner; everyone else gets ApprovalAlreadyDecidedError,
   * ApprovalExpiredError, ApprovalNotAllowedError or ApprovalNotFoundError.
   */
  async decide(
    id: string,
    decision: ApprovalDecision,
    userId: string,
    now: Date = new Date(),
    options: { reason?: string } = {},
  ): Promise<ApprovalRecord> {
    const approvalId = parseInput(KeyPart, id, 'approval id');
    const verdict = parseInput(ApprovalDecisionSchema, decision, 'decision');
    const user = parseInput(KeyPart, userId, 'user id');
    const reason = parseInput(NoteText.optional(), options.reason, 'reason');
    const at = toIso(now);
    const key = keys.approval(approvalId);
    const decisionId = ulid();

    const result = await conditionalUpdate(this.ctx, key, {
      UpdateExpression: `SET #status = :decision, decidedBy = :user, decidedAt = :now, decisionId = :id${
        reason === undefined ? '' : ', reason = :reason'
      }`,
      ConditionExpression:
        'attribute_exists(PK) AND #status = :pending AND expiresAt > :now AND contains(allowedDeciders, :user)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':decision': verdict,
        ':user': user,
        ':now': at,
        ':id': decisionId,
        ':pending': 'pending',
        ...(reason === undefined ? {} : { ':reason': reason }),
      },
      ReturnValues: 'ALL_NEW',
    });
    if (result.ok) {
      const decided = parseRecord(ApprovalRecordSchema, result.value.Attributes ?? {});
      await this.dropIndexEntries(decided);
      return decided;
    }

    // The condition does not say which clause failed, so read the approval to give the precise reason.
    const stored = await getItem(this.ctx, key);
    if (stored === undefined) throw new ApprovalNotFoundError(approvalId);
    if (stored['decisionId'] === decisionId) return parseRecord(ApprovalRecordSchema, stored);
    const current = parseRecord(ApprovalRecordSchema, stored);
    if (current.status !== 'pending') {
      throw new ApprovalAlreadyDecidedError(approvalId, current.status, current.decidedBy);
    }
    if (!current.allowedDeciders.includes(user)) throw new ApprovalNotAllowedError(approvalId, user);
    if (current.expiresAt <= at) throw new ApprovalExpiredError(approvalId, current.expiresAt);
    throw new StoreError(`Approval ${approvalId} could not be decided, although it appears decidable; retry`);
  }

  /** Marks a pending approval whose time is up as expired; false when it was decided or is not expired yet. */
  async expire(id: string, now: Date = new Date()): Promise<boolean> {
    return this.close(id, 'expired', 'expiresAt <= :now', now);
  }

  /** Withdraws a pending approval (e.g. the session was closed); false when it was already decided. */
  async cancel(id: string, now: Date = new Date()): Promise<boolean> {
    return this.close(id, 'cancelled', undefined, now);
  }

  /** Pending, unexpired approvals `userId` may decide, soonest to expire first. */
  async listPendingFor(
    userId: string,
    now: Date = new Date(),
    options: { limit?: number } = {},
  ): Promise<ApprovalRecord[]> {
    const user = parseInput(KeyPart, userId, 'user id');
    const at = toIso(now);
    const entries = await queryItems(
      this.ctx,
      {
        IndexName: GSI1,
        KeyConditionExpression: 'GSI1PK = :pk AND GSI1SK > :now',
        ExpressionAttributeValues: { ':pk': gsi1.approvalsForApprover(user), ':now': at },
      },
      Math.min(options.limit ?? 50, 100) * 2,
    );
    const ids = [...new Set(entries.map((entry) => String(entry['approvalId'])))];
    const approvals = await Promise.all(ids.map((approvalId) => this.get(approvalId)));
    return approvals
      .filter(
        (a): a is ApprovalRecord =>
          a !== undefined && a.status === 'pending' && a.expiresAt > at && a.allowedDeciders.includes(user),
      )
      .sort((a, b) => byCodePoint(a.expiresAt, b.expiresAt))
      .slice(0, options.limit ?? 50);
  }

  /**
   * Approvals of a session still marked pending (expired or not), oldest first: what a repair must look at when the
   * execution that waits on them may be gone.
   */
  async listPendingForSession(sessionId: string, options: { limit?: number } = {}): Promise<ApprovalRecord[]> {
    const id = parseInput(KeyPart, sessionId, 'session id');
    const entries = await queryItems(
      this.ctx,
      {
        IndexName: GSI1,
        KeyConditionExpression: 'GSI1PK = :pk',
        ExpressionAttributeValues: { ':pk': gsi1.pendingApprovalsOfSession(id) },
      },
      options.limit ?? 50,
    );
    const approvals = await Promise.all(entries.map((entry) => this.get(String(entry['approvalId']))));
    return approvals
      .filter((a): a is ApprovalRecord => a !== undefined && a.status === 'pending')
      .sort((a, b) => byCodePoint(a.createdAt, b.createdAt));
  }

  private async close(
    id: string,
    status: 'expired' | 'cancelled',
    extraCondition: string | undefined,
    now: Date,
  ): Promise<boolean> {
    const approvalId = parseInput(KeyPart, id, 'approval id');
    const key = keys.approval(approvalId);
    const result = await conditionalUpdate(this.ctx, key, {
      UpdateExpression: 'SET #status = :status, decidedAt = :now',
      ConditionExpression: `attribute_exists(PK) AND #status = :pending${
        extraCondition === undefined ? '' : ` AND ${extraCondition}`
      }`,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':status': status, ':pending': 'pending', ':now': toIso(now) },
      ReturnValues: 'ALL_NEW',
    });
    if (!result.ok) {
      if ((await getItem(this.ctx, key)) === undefined) throw new ApprovalNotFoundError(approvalId);
      return false;
    }
    await this.dropIndexEntries(parseRecord(ApprovalRecordSchema, result.value.Attributes ?? {}));
    return true;
  }

  /**
   * Listing re-checks every approval it finds, so stale index entries are harmless; removing them only keeps the
   * approver's list short, and TTL removes any this misses.
   */
  private async dropIndexEntries(approval: ApprovalRecord): Promise<void> {
    const entries = [
      keys.approvalSession(approval.id),
      ...approval.allowedDeciders.map((userId) => keys.approvalDecider(approval.id, userId)),
    ];
    await Promise.allSettled(
      entries.map((Key) => this.ctx.client.send(new DeleteCommand({ TableName: this.ctx.tableName, Key }))),
    );
  }
}
