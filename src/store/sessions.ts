import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import * as z from 'zod';
import { Code, ID_MAX, KeyPart, KUBE_NAME_MAX, NoteText, RecordId, SlackId, SummaryText } from '../limits.js';
import type { StoreContext } from './client.js';
import {
  assertItemSize,
  conditionalPut,
  conditionalUpdate,
  getItem,
  parseInput,
  parseRecord,
  queryItems,
  request,
} from './dynamo.js';
import { SessionAlreadyExistsError, SessionNotFoundError, StaleVersionError } from './errors.js';
import { GSI1, gsi1, IsoTimestampSchema, keys, toIso } from './keys.js';

export const DIAGNOSTIC_STATES = ['GATHERING', 'ANALYZING', 'HYPOTHESIZING', 'TESTING', 'RESOLVING'] as const;
export const DiagnosticStateSchema = z.enum(DIAGNOSTIC_STATES);
export type DiagnosticState = z.infer<typeof DiagnosticStateSchema>;

export const SessionStatusSchema = z.enum(['open', 'resolved', 'closed']);

/** One piece of evidence, summarized: raw reads stay out of the session to keep it small. */
export const EvidenceItemSchema = z.object({
  /** Evidence type, e.g. `pods`, `events`, `logs`, `storageclasses`. */
  kind: Code,
  /** Where it came from, e.g. `triage`, `user-read`, `specialist`. */
  source: Code,
  summary: SummaryText,
  at: IsoTimestampSchema,
  /** Finding codes this evidence supports. */
  codes: z.array(z.string().max(ID_MAX)).max(50).default([]),
});
export type EvidenceItem = z.infer<typeof EvidenceItemSchema>;

export const EvidenceSummarySchema = z.object({
  completeness: z.number().min(0).max(1).default(0),
  items: z.array(EvidenceItemSchema).max(200).default([]),
  findingCodes: z.array(z.string().max(ID_MAX)).max(200).default([]),
});

export const HypothesisSchema = z.object({
  id: RecordId,
  statement: SummaryText.min(1),
  confidence: z.number().min(0).max(1),
  status: z.enum(['proposed', 'testing', 'confirmed', 'rejected']).default('proposed'),
  evidence: z.array(z.string().max(500)).max(50).default([]),
});
export type Hypothesis = z.infer<typeof HypothesisSchema>;

/** A break-glass grant: the workflow may act as if in `state` until `expiresAt`. */
export const SessionOverrideSchema = z.object({
  state: DiagnosticStateSchema,
  expiresAt: IsoTimestampSchema,
  approver: SlackId,
  grantedAt: IsoTimestampSchema.optional(),
  justification: NoteText.optional(),
});

export const SessionRecordSchema = z.object({
  id: KeyPart,
  state: DiagnosticStateSchema,
  status: SessionStatusSchema,
  intent: Code,
  namespace: z.string().max(KUBE_NAME_MAX),
  cluster: z.string().min(1).max(128).optional(),
  /** The namespaces the session may read: its channel's scope when it opened (read-only-guard.ts). */
  scope: z.array(z.string().min(1).max(ID_MAX)).max(50).optional(),
  channelId: KeyPart,
  threadTs: KeyPart.optional(),
  requester: SlackId,
  version: z.number().int().min(1),
  createdAt: IsoTimestampSchema,
  updatedAt: IsoTimestampSchema,
  closedAt: IsoTimestampSchema.optional(),
  evidence: EvidenceSummarySchema.default({ completeness: 0, items: [], findingCodes: [] }),
  hypotheses: z.array(HypothesisSchema).max(50).default([]),
  override: SessionOverrideSchema.optional(),
  resumeCount: z.number().int().min(0).default(0),
  handoffCount: z.number().int().min(0).default(0),
  /** Stored incidents the session was shown and used; feeds the knowledge-reuse metric. */
  memoryMatchIds: z.array(z.string().max(ID_MAX)).max(20).default([]),
  /** The execution currently driving the session, if any. */
  executionArn: z.string().min(1).max(2048).optional(),
});
export type SessionRecord = z.infer<typeof SessionRecordSchema>;

export const NewSessionSchema = z.strictObject({
  id: KeyPart.optional(),
  state: DiagnosticStateSchema.default('GATHERING'),
  intent: Code,
  namespace: z.string().max(KUBE_NAME_MAX),
  cluster: z.string().min(1).max(128).optional(),
  scope: z.array(z.string().min(1).max(ID_MAX)).max(50).optional(),
  channelId: KeyPart,
  threadTs: KeyPart.optional(),
  requester: SlackId,
  evidence: EvidenceSummarySchema.optional(),
  hypotheses: z.array(HypothesisSchema).max(50).optional(),
  memoryMatchIds: z.array(z.string().max(ID_MAX)).max(20).optional(),
  executionArn: z.string().min(1).max(2048).optional(),
});
export type NewSession = z.input<typeof NewSessionSchema>;

/** Fields an update may change; `null` removes an optional field. Identity and audit fields are immutable. */
export const SessionPatchSchema = z.strictObject({
  state: DiagnosticStateSchema.optional(),
  status: SessionStatusSchema.optional(),
  intent: Code.optional(),
  namespace: z.string().max(KUBE_NAME_MAX).optional(),
  cluster: z.string().min(1).max(128).nullable().optional(),
  threadTs: KeyPart.optional(),
  closedAt: IsoTimestampSchema.optional(),
  evidence: EvidenceSummarySchema.optional(),
  hypotheses: z.array(HypothesisSchema).max(50).optional(),
  override: SessionOverrideSchema.nullable().optional(),
  resumeCount: z.number().int().min(0).optional(),
  handoffCount: z.number().int().min(0).optional(),
  memoryMatchIds: z.array(z.string().max(ID_MAX)).max(20).optional(),
  executionArn: z.string().min(1).max(2048).nullable().optional(),
});
export type SessionPatch = z.input<typeof SessionPatchSchema>;

export interface ListOptions {
  limit?: number;
}

export interface MutateOptions {
  /** Attempts before the StaleVersionError of the last one is rethrown. */
  maxAttempts?: number;
  now?: () => Date;
}

function listKeys(record: Pick<SessionRecord, 'id' | 'status' | 'channelId' | 'createdAt' | 'closedAt'>) {
  if (record.status === 'open') {
    return { GSI1PK: gsi1.openSessionsInChannel(record.channelId), GSI1SK: `${record.createdAt}#${record.id}` };
  }
  return { GSI1PK: gsi1.sessionsWithStatus(record.status), GSI1SK: `${record.closedAt}#${record.id}` };
}

export class SessionRepository {
  constructor(private readonly ctx: StoreContext) {}

  /** Creates the session; SessionAlreadyExistsError when the id is taken. */
  async create(input: NewSession, now: Date = new Date()): Promise<SessionRecord> {
    const outcome = await this.createIfAbsent(input, now);
    if (!outcome.created) throw new SessionAlreadyExistsError(outcome.session.id);
    return outcome.session;
  }

  /** Creates the session unless one with the same id exists, in which case that one is returned. */
  async createIfAbsent(
    input: NewSession,
    now: Date = new Date(),
  ): Promise<{ session: SessionRecord; created: boolean }> {
    const parsed = parseInput(NewSessionSchema, input, 'new session');
    const at = toIso(now);
    const record = parseInput(
      SessionRecordSchema,
      { ...parsed, id: parsed.id ?? ulid(now.getTime()), status: 'open', version: 1, createdAt: at, updatedAt: at },
      'new session',
    );
    const key = keys.session(record.id);
    const writeId = ulid();
    const item = { ...key, ...listKeys(record), ...record, writeId };
    assertItemSize(item, `Session ${record.id}`);
    // The index entry first, the session last: an entry without its open session is skipped when listing.
    await this.putRequesterEntry(record);
    const result = await conditionalPut(this.ctx, key, { Item: item, ConditionExpression: 'attribute_not_exists(PK)' });
    if (result.ok) return { session: record, created: true };
    const stored = await getItem(this.ctx, key);
    if (stored === undefined) throw new SessionNotFoundError(record.id);
    // A retried request whose first attempt landed finds its own writeId: the session was created by this call.
    return { session: parseRecord(SessionRecordSchema, stored), created: stored['writeId'] === writeId };
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const sessionId = parseInput(KeyPart, id, 'session id');
    const item = await getItem(this.ctx, keys.session(sessionId));
    return item === undefined ? undefined : parseRecord(SessionRecordSchema, item);
  }

  async getRequired(id: string): Promise<SessionRecord> {
    const session = await this.get(id);
    if (session === undefined) throw new SessionNotFoundError(id);
    return session;
  }

  /**
   * Applies `patch` if the stored version is still `expectedVersion`, and bumps the version. Otherwise nothing is
   * written and StaleVersionError (or SessionNotFoundError) is thrown, so two writers can never lose an update.
   */
  async update(
    id: string,
    expectedVersion: number,
    patch: SessionPatch,
    now: Date = new Date(),
  ): Promise<SessionRecord> {
    const sessionId = parseInput(KeyPart, id, 'session id');
    const version = parseInput(z.number().int().min(1), expectedVersion, 'expected version');
    const changes = parseInput(SessionPatchSchema, patch, 'session update');
    const at = toIso(now);
    const key = keys.session(sessionId);
    const writeId = ulid();

    const set: Record<string, unknown> = { version: version + 1, updatedAt: at, writeId };
    const remove: string[] = [];
    for (const [field, value] of Object.entries(changes)) {
      if (value === undefined) continue;
      if (value === null) remove.push(field);
      else set[field] = value;
    }
    if (changes.status !== undefined) {
      // The list a session appears in follows its status; the identity fields needed for the list keys never change.
      const current = await this.getRequired(sessionId);
      if (changes.status === 'open') {
        remove.push('closedAt');
        delete set['closedAt'];
      } else {
        set['closedAt'] = changes.closedAt ?? current.closedAt ?? at;
      }
      Object.assign(
        set,
        listKeys({ ...current, status: changes.status, closedAt: set['closedAt'] as string | undefined }),
      );
    }
    assertItemSize(set, `Update of session ${sessionId}`);

    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':expected': version };
    const setParts = Object.entries(set).map(([field, value], i) => {
      names[`#s${i}`] = field;
      values[`:s${i}`] = value;
      return `#s${i} = :s${i}`;
    });
    const removeParts = remove.map((field, i) => {
      names[`#r${i}`] = field;
      return `#r${i}`;
    });
    const expression = `SET ${setParts.join(', ')}${removeParts.length > 0 ? ` REMOVE ${removeParts.join(', ')}` : ''}`;

    const result = await conditionalUpdate(this.ctx, key, {
      UpdateExpression: expression,
      ConditionExpression: 'attribute_exists(PK) AND version = :expected',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_NEW',
    });
    if (result.ok) return this.followStatus(parseRecord(SessionRecordSchema, result.value.Attributes ?? {}), changes);

    const stored = await getItem(this.ctx, key);
    if (stored === undefined) throw new SessionNotFoundError(sessionId);
    // The SDK retries on network errors; a retry of a write that already landed finds its own writeId.
    if (stored['writeId'] === writeId) return this.followStatus(parseRecord(SessionRecordSchema, stored), changes);
    const actual = typeof stored['version'] === 'number' ? stored['version'] : Number.NaN;
    throw new StaleVersionError(sessionId, version, actual);
  }

  /**
   * Sets the namespace of a session that has none yet (it started without one and the first triage located it, or a
   * person picked it). One conditional write: the first namespace wins, and every later caller gets the session as
   * it is, with `settled: false`, so two clicks or a click racing the triage cannot both move the session.
   */
  async settleNamespace(
    id: string,
    namespace: string,
    now: Date = new Date(),
  ): Promise<{ settled: boolean; session: SessionRecord }> {
    const sessionId = parseInput(KeyPart, id, 'session id');
    const value = parseInput(z.string().min(1).max(253), namespace, 'namespace');
    const key = keys.session(sessionId);
    const writeId = ulid();
    const result = await conditionalUpdate(this.ctx, key, {
      UpdateExpression: 'SET #ns = :ns, #v = #v + :one, updatedAt = :at, writeId = :w',
      ConditionExpression: 'attribute_exists(PK) AND #ns = :none',
      ExpressionAttributeNames: { '#ns': 'namespace', '#v': 'version' },
      ExpressionAttributeValues: { ':ns': value, ':none': '', ':one': 1, ':at': toIso(now), ':w': writeId },
      ReturnValues: 'ALL_NEW',
    });
    if (result.ok) return { settled: true, session: parseRecord(SessionRecordSchema, result.value.Attributes ?? {}) };
    const stored = await getItem(this.ctx, key);
    if (stored === undefined) throw new SessionNotFoundError(sessionId);
    // A retried request whose first attempt landed finds its own writeId.
    return { settled: stored['writeId'] === writeId, session: parseRecord(SessionRecordSchema, stored) };
  }

  /**
   * Read-modify-write with retries: `change` receives the current session and returns the patch to apply.
   * On a concurrent update the session is re-read and `change` runs again on the fresh copy.
   */
  async mutate(
    id: string,
    change: (current: SessionRecord) => SessionPatch | Promise<SessionPatch>,
    options: MutateOptions = {},
  ): Promise<SessionRecord> {
    const maxAttempts = options.maxAttempts ?? 25;
    for (let attempt = 1; ; attempt++) {
      const current = await this.getRequired(id);
      const patch = await change(current);
      try {
        return await this.update(id, current.version, patch, options.now?.() ?? new Date());
      } catch (error) {
        if (!(error instanceof StaleVersionError) || attempt >= maxAttempts) throw error;
        // Exponential backoff with full jitter spreads contending writers, so n writers cost about n log n attempts
        // instead of n squared.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(1000, 5 * 2 ** attempt)));
      }
    }
  }

  /** The entries of one GSI1 partition, newest first, up to the page the caller asked for. */
  private newestInIndex(pk: string, options: ListOptions): Promise<Record<string, unknown>[]> {
    return queryItems(
      this.ctx,
      {
        IndexName: GSI1,
        KeyConditionExpression: 'GSI1PK = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ScanIndexForward: false,
      },
      options.limit ?? 50,
    );
  }

  /** A person's open sessions in every channel, newest first (the App Home). */
  async listOpenByRequester(userId: string, options: ListOptions = {}): Promise<SessionRecord[]> {
    const user = parseInput(KeyPart, userId, 'user id');
    const entries = await this.newestInIndex(gsi1.openSessionsOfRequester(user), options);
    const ids = entries.map((e) => e['sessionId']).filter((id): id is string => typeof id === 'string');
    // The session is the truth: an entry left by a close that did not finish, or read before the index caught up,
    // is skipped.
    const sessions = await Promise.all(ids.map((id) => this.get(id)));
    return sessions.filter((s): s is SessionRecord => s !== undefined && s.status === 'open' && s.requester === user);
  }

  /**
   * How many open sessions a person (or the bot, for alert-opened ones) has, counted up to `limit` on the index
   * alone: cheap enough to ask on every alert, and an entry left by an unfinished close only counts a little high.
   */
  async countOpenByRequester(userId: string, limit: number): Promise<number> {
    const user = parseInput(KeyPart, userId, 'user id');
    const entries = await queryItems(
      this.ctx,
      {
        IndexName: GSI1,
        KeyConditionExpression: 'GSI1PK = :pk',
        ExpressionAttributeValues: { ':pk': gsi1.openSessionsOfRequester(user) },
        ProjectionExpression: 'sessionId',
      },
      limit,
    );
    return entries.length;
  }

  /**
   * Every open session, oldest first, a page at a time: the reconciler's worklist. Pass the returned `next` to read
   * the following page; entries whose session closed meanwhile are skipped.
   */
  async listOpen(
    options: ListOptions & { after?: string } = {},
  ): Promise<{ sessions: SessionRecord[]; next?: string }> {
    const limit = parseInput(z.number().int().min(1).max(1000), options.limit ?? 200, 'limit');
    const entries = await queryItems(
      this.ctx,
      {
        IndexName: GSI1,
        KeyConditionExpression: options.after === undefined ? 'GSI1PK = :pk' : 'GSI1PK = :pk AND GSI1SK > :after',
        ExpressionAttributeValues: {
          ':pk': gsi1.openSessions(),
          ...(options.after === undefined ? {} : { ':after': options.after }),
        },
      },
      limit,
    );
    const ids = entries.map((e) => e['sessionId']).filter((id): id is string => typeof id === 'string');
    const sessions = await Promise.all(ids.map((id) => this.get(id)));
    const last = entries.at(-1)?.['GSI1SK'];
    return {
      sessions: sessions.filter((s): s is SessionRecord => s !== undefined && s.status === 'open'),
      ...(entries.length === limit && typeof last === 'string' ? { next: last } : {}),
    };
  }

  /** Open sessions in a channel, newest first. Index reads are eventually consistent in DynamoDB. */
  async listOpenByChannel(channelId: string, options: ListOptions = {}): Promise<SessionRecord[]> {
    const channel = parseInput(KeyPart, channelId, 'channel id');
    const items = await this.newestInIndex(gsi1.openSessionsInChannel(channel), options);
    return items.map((item) => parseRecord(SessionRecordSchema, item)).filter((s) => s.status === 'open');
  }

  /** Resolved (or closed) sessions, most recently closed first, optionally only those closed at or after `since`. */
  async listRecent(
    status: 'resolved' | 'closed',
    options: ListOptions & { since?: Date } = {},
  ): Promise<SessionRecord[]> {
    const which = parseInput(z.enum(['resolved', 'closed']), status, 'session status');
    const since = options.since === undefined ? undefined : toIso(options.since);
    const items = await queryItems(
      this.ctx,
      {
        IndexName: GSI1,
        KeyConditionExpression: since === undefined ? 'GSI1PK = :pk' : 'GSI1PK = :pk AND GSI1SK >= :since',
        ExpressionAttributeValues: { ':pk': gsi1.sessionsWithStatus(which), ...(since ? { ':since': since } : {}) },
        ScanIndexForward: false,
      },
      options.limit ?? 50,
    );
    return items.map((item) => parseRecord(SessionRecordSchema, item)).filter((s) => s.status === which);
  }

  /** Keeps the requester's index entry in step with the status an update just wrote. */
  private async followStatus(session: SessionRecord, changes: SessionPatch): Promise<SessionRecord> {
    if (changes.status === 'open') await this.putRequesterEntry(session);
    else if (changes.status !== undefined) {
      // Listing re-checks every session it finds, so an entry that outlives its session's close is harmless.
      await Promise.allSettled(
        [keys.sessionRequester(session.id, session.requester), keys.sessionOpen(session.id)].map((Key) =>
          this.ctx.client.send(new DeleteCommand({ TableName: this.ctx.tableName, Key })),
        ),
      );
    }
    return session;
  }

  private async putRequesterEntry(session: Pick<SessionRecord, 'id' | 'requester' | 'createdAt'>): Promise<void> {
    const key = keys.sessionRequester(session.id, session.requester);
    const open = keys.sessionOpen(session.id);
    await Promise.all([
      request('PutItem', key, () =>
        this.ctx.client.send(
          new PutCommand({
            TableName: this.ctx.tableName,
            Item: {
              ...key,
              GSI1PK: gsi1.openSessionsOfRequester(session.requester),
              GSI1SK: `${session.createdAt}#${session.id}`,
              sessionId: session.id,
              userId: session.requester,
            },
          }),
        ),
      ),
      request('PutItem', open, () =>
        this.ctx.client.send(
          new PutCommand({
            TableName: this.ctx.tableName,
            Item: {
              ...open,
              GSI1PK: gsi1.openSessions(),
              GSI1SK: `${session.createdAt}#${session.id}`,
              sessionId: session.id,
            },
          }),
        ),
      ),
    ]);
  }
}
