import { randomInt } from 'node:crypto';
import { ulid } from 'ulid';
import * as z from 'zod';
import { KeyPart, SlackId, SummaryText } from '../limits.js';
import type { StoreContext } from './client.js';
import { assertItemSize, conditionalPut, getItem, parseInput, parseRecord, queryItems } from './dynamo.js';
import { AppendConflictError } from './errors.js';
import { IsoTimestampSchema, keys, SESSION_PK_PREFIX, TIMELINE_PREFIX, toIso } from './keys.js';

/** Event types are dotted lower-case names such as `state.changed`, `tool.requested`, `approval.decided`. */
export const TimelineEventTypeSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*$/, 'use a dotted lower-case name such as state.changed');

export const TimelineEventInputSchema = z.strictObject({
  type: TimelineEventTypeSchema,
  /** Who caused it: a Slack user id, or `system` / a component name. */
  actor: SlackId.default('system'),
  summary: SummaryText.optional(),
  /** Structured detail for audit and metrics; keep it small and free of secrets. */
  data: z.record(z.string(), z.unknown()).optional(),
});
export type TimelineEventInput = z.input<typeof TimelineEventInputSchema>;

export const TimelineEventSchema = z.object({
  sessionId: KeyPart,
  at: IsoTimestampSchema,
  seq: z.number().int().min(0),
  type: TimelineEventTypeSchema,
  actor: SlackId,
  summary: SummaryText.optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});
export type TimelineEvent = z.infer<typeof TimelineEventSchema>;

export interface TimelineListOptions {
  limit?: number;
  /** Only events strictly after this event (for polling). */
  after?: Pick<TimelineEvent, 'at' | 'seq'>;
}

const MAX_APPEND_ATTEMPTS = 20;

/**
 * Append-only audit trail. Every event gets a fresh `EVENT#<at>#<seq>` key written with attribute_not_exists, so an
 * append can never replace an earlier event; there is deliberately no update or delete.
 */
export class TimelineRepository {
  constructor(private readonly ctx: StoreContext) {}

  async append(sessionId: string, input: TimelineEventInput, now: Date = new Date()): Promise<TimelineEvent> {
    const id = parseInput(KeyPart, sessionId, 'session id');
    const event = parseInput(TimelineEventInputSchema, input, 'timeline event');
    const at = toIso(now);
    const writeId = ulid();
    for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS; attempt++) {
      const seq = nextSeq(attempt > 0);
      const record: TimelineEvent = { sessionId: id, at, seq, ...event };
      const key = keys.timelineEvent(id, at, seq);
      const item = { ...key, ...record, writeId };
      assertItemSize(item, `Timeline event ${event.type}`);
      const result = await conditionalPut(this.ctx, key, {
        Item: item,
        ConditionExpression: 'attribute_not_exists(SK)',
      });
      if (result.ok) return record;
      // A retried request whose first attempt landed is our own event, not a collision.
      const stored = await getItem(this.ctx, key);
      if (stored?.['writeId'] === writeId) return record;
    }
    throw new AppendConflictError(
      `Could not append ${event.type} to session ${id}: ${MAX_APPEND_ATTEMPTS} keys in a row were taken`,
    );
  }

  /** Events in the order they were appended (time, then sequence). */
  async list(sessionId: string, options: TimelineListOptions = {}): Promise<TimelineEvent[]> {
    const id = parseInput(KeyPart, sessionId, 'session id');
    const lower =
      options.after === undefined
        ? TIMELINE_PREFIX
        : keys.timelineEvent(id, parseInput(IsoTimestampSchema, options.after.at, 'after.at'), options.after.seq).SK;
    const items = await queryItems(
      this.ctx,
      {
        KeyConditionExpression:
          options.after === undefined
            ? 'PK = :pk AND begins_with(SK, :lower)'
            : 'PK = :pk AND SK BETWEEN :lower AND :upper',
        ExpressionAttributeValues: {
          ':pk': `${SESSION_PK_PREFIX}${id}`,
          ':lower': lower,
          ...(options.after === undefined ? {} : { ':upper': `${TIMELINE_PREFIX}\uffff` }),
        },
        ConsistentRead: true,
      },
      // BETWEEN is inclusive, so the `after` event itself may come back and is dropped below.
      (options.limit ?? 1000) + (options.after === undefined ? 0 : 1),
    );
    const events = items
      .map((item) => parseRecord(TimelineEventSchema, item))
      .filter((e) => options.after === undefined || e.at !== options.after.at || e.seq !== options.after.seq);
    return events.slice(0, options.limit ?? 1000);
  }
}

const SEQ_LIMIT = 1_000_000;
const SEQ_JUMP = 1_000;

/**
 * Per-process counter, shared by every repository instance so events appended in one process keep their order
 * within a millisecond. It starts at a random point, and a collision with another process's event moves it on by a
 * random step: two processes started together would otherwise hand out the same numbers in the same order, and
 * their retries would keep colliding.
 */
let seqCounter = randomInt(SEQ_LIMIT / 2);
function nextSeq(afterCollision = false): number {
  seqCounter = (seqCounter + (afterCollision ? randomInt(1, SEQ_JUMP + 1) : 1)) % SEQ_LIMIT;
  return seqCounter;
}
