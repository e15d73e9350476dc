import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { monotonicFactory, ulid } from 'ulid';
import * as z from 'zod';
import { Code, KeyPart, SlackId, SlackTs } from '../limits.js';
import type { StoreContext } from './client.js';
import {
  assertItemSize,
  conditionalDelete,
  conditionalPut,
  conditionalUpdate,
  getItem,
  parseInput,
  parseRecord,
  queryItems,
} from './dynamo.js';
import { AppendConflictError, ClaimContentionError } from './errors.js';
import {
  INBOX_PREFIX,
  IsoTimestampSchema,
  type ItemKey,
  keys,
  SESSION_PK_PREFIX,
  toEpochSeconds,
  toIso,
} from './keys.js';

export const InboxMessageInputSchema = z.strictObject({
  /** What the input is, e.g. `message`, `command`, `handoff.answer`. */
  kind: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-z][a-z0-9_.-]*$/, 'use a lower-case name such as message'),
  userId: SlackId,
  /** Slack caps a message at 40,000 characters. */
  text: z.string().max(40_000),
  /** The Slack message timestamp, when the input came from a message. */
  slackTs: SlackTs.optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});
export type InboxMessageInput = z.input<typeof InboxMessageInputSchema>;

export const InboxMessageSchema = z.object({
  id: z.string().length(26),
  sessionId: KeyPart,
  receivedAt: IsoTimestampSchema,
  kind: Code,
  userId: SlackId,
  text: z.string().max(40_000),
  slackTs: SlackTs.optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});
export type InboxMessage = z.infer<typeof InboxMessageSchema>;

export interface InboxOptions {
  /** Unconsumed input is swept by TTL after this many days. */
  retentionDays?: number;
}

/**
 * ULIDs from one factory increase strictly within this process, so messages appended here sort in append order even
 * within one millisecond. Across processes the order follows the clocks, which is as good as arrival order gets.
 */
const nextId = monotonicFactory();

const PAGE = 10;
const MAX_ROUNDS = 50;

/**
 * User input buffered until the session's execution consumes it. Consumption is a conditional claim (exactly one
 * consumer wins each message) followed by a delete; messages are handed out oldest first.
 */
export class InboxRepository {
  private readonly retentionSeconds: number;

  constructor(
    private readonly ctx: StoreContext,
    options: InboxOptions = {},
  ) {
    this.retentionSeconds = Math.round((options.retentionDays ?? 14) * 86_400);
  }

  async append(sessionId: string, input: InboxMessageInput, now: Date = new Date()): Promise<InboxMessage> {
    const id = parseInput(KeyPart, sessionId, 'session id');
    const parsed = parseInput(InboxMessageInputSchema, input, 'inbox message');
    const message: InboxMessage = { id: nextId(now.getTime()), sessionId: id, receivedAt: toIso(now), ...parsed };
    const key = keys.inboxMessage(id, message.id);
    const writeId = ulid();
    const item = { ...key, ...message, writeId, expiresAtEpoch: toEpochSeconds(now) + this.retentionSeconds };
    assertItemSize(item, 'Inbox message');
    const result = await conditionalPut(this.ctx, key, { Item: item, ConditionExpression: 'attribute_not_exists(SK)' });
    if (!result.ok) {
      // Only a retried request whose first attempt landed can find this fresh ULID taken.
      const stored = await getItem(this.ctx, key);
      if (stored?.['writeId'] !== writeId) {
        throw new AppendConflictError(`Inbox key ${key.SK} of session ${id} was already taken`);
      }
    }
    return message;
  }

  /** The oldest unconsumed message, without consuming it. */
  async peekOldest(sessionId: string): Promise<InboxMessage | undefined> {
    const [first] = await this.list(sessionId, { limit: 1 });
    return first;
  }

  /** Unconsumed messages, oldest first. */
  async list(sessionId: string, options: { limit?: number } = {}): Promise<InboxMessage[]> {
    const id = parseInput(KeyPart, sessionId, 'session id');
    const items = await this.queryUnclaimed(id, options.limit ?? 100);
    return items.map((item) => parseRecord(InboxMessageSchema, item));
  }

  /**
   * Consumes the oldest unconsumed message and returns it, or undefined when the inbox is empty. Concurrent callers
   * never receive the same message.
   */
  async claimOldest(sessionId: string, now: Date = new Date()): Promise<InboxMessage | undefined> {
    const id = parseInput(KeyPart, sessionId, 'session id');
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const page = await this.queryUnclaimed(id, PAGE);
      if (page.length === 0) return undefined;
      // If another consumer took the head, the next item of the page is the new head.
      for (const item of page) {
        const message = parseRecord(InboxMessageSchema, item);
        const claimed = await this.tryClaim(keys.inboxMessage(id, message.id), now);
        if (claimed) return message;
      }
    }
    throw new ClaimContentionError(
      `Could not claim a message of session ${id}: other consumers won ${MAX_ROUNDS} rounds in a row`,
    );
  }

  /** The message, while it is neither consumed nor removed. */
  async get(sessionId: string, messageId: string): Promise<InboxMessage | undefined> {
    const id = parseInput(KeyPart, sessionId, 'session id');
    const msgId = parseInput(z.string().length(26), messageId, 'message id');
    const item = await getItem(this.ctx, keys.inboxMessage(id, msgId));
    return item === undefined || item['claimId'] !== undefined ? undefined : parseRecord(InboxMessageSchema, item);
  }

  /**
   * Marks a message as being handled, keeping it: it stays the oldest pending message until `remove`, so a handler
   * that dies midway (its run lost, its step retried) leaves it to be handled again instead of losing it.
   * False when the message is gone.
   */
  async take(sessionId: string, messageId: string, now: Date = new Date()): Promise<boolean> {
    const id = parseInput(KeyPart, sessionId, 'session id');
    const msgId = parseInput(z.string().length(26), messageId, 'message id');
    const key = keys.inboxMessage(id, msgId);
    const result = await conditionalUpdate(this.ctx, key, {
      UpdateExpression: 'SET takenAt = if_not_exists(takenAt, :now)',
      ConditionExpression: 'attribute_exists(SK) AND attribute_not_exists(claimId)',
      ExpressionAttributeValues: { ':now': toIso(now) },
    });
    return result.ok;
  }

  /** Removes a handled message. */
  async remove(sessionId: string, messageId: string): Promise<void> {
    const id = parseInput(KeyPart, sessionId, 'session id');
    const msgId = parseInput(z.string().length(26), messageId, 'message id');
    await this.ctx.client.send(new DeleteCommand({ TableName: this.ctx.tableName, Key: keys.inboxMessage(id, msgId) }));
  }

  /** Consumes one given message; undefined when it does not exist or another consumer already took it. */
  async claim(sessionId: string, messageId: string, now: Date = new Date()): Promise<InboxMessage | undefined> {
    const id = parseInput(KeyPart, sessionId, 'session id');
    const msgId = parseInput(z.string().length(26), messageId, 'message id');
    const key = keys.inboxMessage(id, msgId);
    const item = await getItem(this.ctx, key);
    if (item === undefined || item['claimId'] !== undefined) return undefined;
    const message = parseRecord(InboxMessageSchema, item);
    return (await this.tryClaim(key, now)) ? message : undefined;
  }

  private async queryUnclaimed(sessionId: string, limit: number): Promise<Record<string, unknown>[]> {
    return queryItems(
      this.ctx,
      {
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        FilterExpression: 'attribute_not_exists(claimId)',
        ExpressionAttributeValues: { ':pk': `${SESSION_PK_PREFIX}${sessionId}`, ':prefix': INBOX_PREFIX },
        ConsistentRead: true,
      },
      limit,
    );
  }

  /**
   * Claiming marks the item before deleting it, so a request the SDK retried after a lost response can still
   * recognize its own claim by the claim id instead of mistaking it for someone else's.
   */
  private async tryClaim(key: ItemKey, now: Date): Promise<boolean> {
    const claimId = ulid();
    const result = await conditionalUpdate(this.ctx, key, {
      UpdateExpression: 'SET claimId = :claim, claimedAt = :now',
      ConditionExpression: 'attribute_exists(SK) AND attribute_not_exists(claimId)',
      ExpressionAttributeValues: { ':claim': claimId, ':now': toIso(now) },
    });
    if (!result.ok) {
      const stored = await getItem(this.ctx, key);
      if (stored?.['claimId'] !== claimId) return false;
    }
    // The claim already decided the winner; a failed delete leaves a claimed item that reads skip and TTL sweeps.
    await conditionalDelete(this.ctx, key, {
      ConditionExpression: 'claimId = :claim',
      ExpressionAttributeValues: { ':claim': claimId },
    }).catch(() => undefined);
    return true;
  }
}
