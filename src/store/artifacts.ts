import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { TriageEnvelopeSchema } from '../triage/envelope/index.js';
import type { StoreContext } from './client.js';
import { assertItemSize, conditionalPut, conditionalUpdate, getItem, parseRecord } from './dynamo.js';
import { StoreError } from './errors.js';
import { keys } from './keys.js';
import {
  type PendingApproval,
  PendingApprovalSchema,
  type PlanRecord,
  PlanRecordSchema,
  type WorkflowRecord,
  WorkflowRecordSchema,
} from './workflow-records.js';

/**
 * The workflow's records of a session beyond the session item the Slack side reads: the diagnostic evidence in
 * full (with ids and resources, which the gate needs), recent requests and panic history, hypotheses with their
 * reads, the envelope, the plans under review and the approvals waiting for a decision. All items live in the
 * session's partition of the single table; each is written by one conditional put.
 */

class WorkflowConflictError extends StoreError {}

const MAX = { evidence: 300, recentRequests: 10, panicHistory: 20, consumedKeys: 500 } as const;

const sessionPk = (sessionId: string) => `SESSION#${sessionId}`;

export class ArtifactRepository {
  constructor(private readonly ctx: StoreContext) {}

  private async put(
    item: Record<string, unknown>,
    what: string,
    condition?: { expr: string; values: Record<string, unknown> },
  ) {
    assertItemSize(item, what);
    const key = { PK: String(item['PK']), SK: String(item['SK']) };
    return conditionalPut(this.ctx, key, {
      Item: item,
      ...(condition ? { ConditionExpression: condition.expr, ExpressionAttributeValues: condition.values } : {}),
    });
  }

  async getWorkflow(sessionId: string): Promise<WorkflowRecord | undefined> {
    const item = await getItem(this.ctx, { PK: sessionPk(sessionId), SK: 'WORKFLOW' });
    return item === undefined ? undefined : parseRecord(WorkflowRecordSchema, item);
  }

  async getOrCreateWorkflow(sessionId: string, now: Date): Promise<WorkflowRecord> {
    const existing = await this.getWorkflow(sessionId);
    if (existing) return existing;
    const fresh = WorkflowRecordSchema.parse({ sessionId, version: 0, stateEnteredAt: now.toISOString() });
    return fresh;
  }

  /**
   * Read-modify-write with optimistic locking: the diagnostic execution is the main writer, but a break-glass
   * execution or a review may touch the same session at the same time.
   */
  async mutateWorkflow(
    sessionId: string,
    now: Date,
    change: (current: WorkflowRecord) => WorkflowRecord | Promise<WorkflowRecord>,
  ): Promise<WorkflowRecord> {
    for (let attempt = 1; attempt <= 20; attempt++) {
      const current = await this.getOrCreateWorkflow(sessionId, now);
      const next = await change(structuredClone(current));
      const bounded: WorkflowRecord = {
        ...next,
        sessionId,
        version: current.version + 1,
        evidence: next.evidence.slice(-MAX.evidence),
        recentRequests: next.recentRequests.slice(-MAX.recentRequests),
        panicHistory: next.panicHistory.slice(-MAX.panicHistory),
        consumedKeys: next.consumedKeys.slice(-MAX.consumedKeys),
      };
      const result = await this.put(
        { PK: sessionPk(sessionId), SK: 'WORKFLOW', ...bounded },
        `Workflow state of session ${sessionId}`,
        current.version === 0
          ? { expr: 'attribute_not_exists(PK) OR version = :v', values: { ':v': 0 } }
          : { expr: 'version = :v', values: { ':v': current.version } },
      );
      if (result.ok) return bounded;
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(500, 5 * 2 ** attempt)));
    }
    throw new WorkflowConflictError(`Workflow state of session ${sessionId} kept changing under 20 attempts`);
  }

  async putEnvelope(sessionId: string, envelope: unknown, at: Date): Promise<void> {
    await this.put(
      { PK: sessionPk(sessionId), SK: 'ENVELOPE', envelope, storedAt: at.toISOString() },
      `Envelope of session ${sessionId}`,
    );
  }

  /** Records that the envelope reached the thread, so a re-run of the step or a resumed session does not post it again. */
  async markEnvelopePosted(sessionId: string, messageTs: string): Promise<void> {
    await conditionalUpdate(
      this.ctx,
      { PK: sessionPk(sessionId), SK: 'ENVELOPE' },
      {
        UpdateExpression: 'SET postedTs = :ts',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':ts': messageTs },
      },
    );
  }

  /** The thread ts of the posted envelope; undefined while the triage has not reached the thread. */
  async envelopePostedTs(sessionId: string): Promise<string | undefined> {
    const item = await getItem(this.ctx, { PK: sessionPk(sessionId), SK: 'ENVELOPE' });
    const ts = item?.['postedTs'];
    return typeof ts === 'string' ? ts : undefined;
  }

  async getEnvelope(sessionId: string) {
    const item = await getItem(this.ctx, { PK: sessionPk(sessionId), SK: 'ENVELOPE' });
    if (item === undefined) return undefined;
    const parsed = TriageEnvelopeSchema.safeParse(item['envelope']);
    if (!parsed.success) throw new StoreError(`The stored envelope of session ${sessionId} does not match its schema`);
    return parsed.data;
  }

  async putPlan(record: Omit<PlanRecord, 'planId' | 'createdAt'> & { planId?: string }, at: Date): Promise<PlanRecord> {
    const full = PlanRecordSchema.parse({
      ...record,
      planId: record.planId ?? ulid(at.getTime()),
      createdAt: at.toISOString(),
    });
    await this.put({ PK: sessionPk(full.sessionId), SK: `PLAN#${full.planId}`, ...full }, `Plan ${full.planId}`);
    return full;
  }

  async getPlan(sessionId: string, planId: string): Promise<PlanRecord | undefined> {
    const item = await getItem(this.ctx, { PK: sessionPk(sessionId), SK: `PLAN#${planId}` });
    return item === undefined ? undefined : parseRecord(PlanRecordSchema, item);
  }

  async updatePlan(sessionId: string, planId: string, patch: Partial<PlanRecord>): Promise<PlanRecord> {
    const current = await this.getPlan(sessionId, planId);
    if (!current) throw new StoreError(`Plan ${planId} of session ${sessionId} does not exist`);
    const next = PlanRecordSchema.parse({ ...current, ...patch, sessionId, planId });
    await this.put({ PK: sessionPk(sessionId), SK: `PLAN#${planId}`, ...next }, `Plan ${planId}`);
    return next;
  }

  async putPending(pending: PendingApproval): Promise<void> {
    const parsed = PendingApprovalSchema.parse(pending);
    await this.put(
      { PK: sessionPk(parsed.sessionId), SK: `PENDING#${parsed.kind}#${parsed.approvalId}`, ...parsed },
      'Pending approval',
    );
    await this.put({ PK: sessionPk(parsed.sessionId), SK: `PENDING#${parsed.kind}`, ...parsed }, 'Pending approval');
  }

  /** The approval most recently requested for `kind`, or the one with the given id. */
  async getPending(sessionId: string, kind: string, approvalId?: string): Promise<PendingApproval | undefined> {
    const sk = approvalId === undefined ? `PENDING#${kind}` : `PENDING#${kind}#${approvalId}`;
    const item = await getItem(this.ctx, { PK: sessionPk(sessionId), SK: sk });
    return item === undefined ? undefined : parseRecord(PendingApprovalSchema, item);
  }

  async clearPending(sessionId: string, kind: string): Promise<void> {
    await this.ctx.client.send(
      new DeleteCommand({ TableName: this.ctx.tableName, Key: { PK: sessionPk(sessionId), SK: `PENDING#${kind}` } }),
    );
  }

  /**
   * Attaches a task token to an approval stored before its wait began (a break-glass request), making it decidable.
   * Idempotent for the same token; undefined when the approval is missing, of another kind, or already decided.
   */
  async attachApprovalToken(
    approvalId: string,
    kind: string,
    token: string,
    expiresAt: Date,
  ): Promise<{ requester?: string | undefined; data: Record<string, unknown> } | undefined> {
    const key = keys.approval(approvalId);
    const result = await conditionalUpdate(this.ctx, key, {
      UpdateExpression: 'SET #token = :token, #status = :pending, expiresAt = :expires',
      ConditionExpression:
        'attribute_exists(PK) AND kind = :kind AND (#status = :requested OR #status = :pending) AND (attribute_not_exists(#token) OR #token = :token)',
      ExpressionAttributeNames: { '#token': 'token', '#status': 'status' },
      ExpressionAttributeValues: {
        ':token': token,
        ':pending': 'pending',
        ':requested': 'requested',
        ':kind': kind,
        ':expires': expiresAt.toISOString(),
      },
      ReturnValues: 'ALL_NEW',
    });
    if (!result.ok) return undefined;
    const attributes = result.value.Attributes ?? {};
    const data = attributes['data'];
    return {
      requester: typeof attributes['requester'] === 'string' ? attributes['requester'] : undefined,
      data: typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {},
    };
  }

  /** An approval item as stored, whatever its status (a break-glass request before its wait began, say). */
  async getApprovalItem(approvalId: string): Promise<Record<string, unknown> | undefined> {
    return getItem(this.ctx, keys.approval(approvalId));
  }
}
