import { ulid } from 'ulid';
import * as z from 'zod';
import { Code, KeyPart } from '../limits.js';
import type { StoreContext } from './client.js';
import {
  conditionalDelete,
  conditionalPut,
  conditionalUpdate,
  getItem,
  invalid,
  parseInput,
  parseRecord,
} from './dynamo.js';
import { WaitAlreadyPendingError } from './errors.js';
import { IsoTimestampSchema, keys, toEpochSeconds, toIso } from './keys.js';

/** Step Functions task tokens are at most 2048 characters. */
export const TaskTokenSchema = z.string().min(1).max(2048);

export const WaitInputSchema = z.strictObject({
  token: TaskTokenSchema,
  expiresAt: z.date(),
  /** What the execution waits for, e.g. `input`, `handoff`, `plan-approval`. */
  purpose: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-z][a-z0-9_.-]*$/)
    .default('input'),
  /**
   * The execution that waits. A wait of another execution is replaceable: a session has one live execution, so a
   * wait left by an earlier one (failed, aborted, timed out) holds a dead token and must not block its successor.
   */
  executionArn: z.string().min(1).max(2048).optional(),
});
export type WaitInput = z.input<typeof WaitInputSchema>;

export const WaitRecordSchema = z.object({
  sessionId: KeyPart,
  waitId: z.string().length(26),
  token: TaskTokenSchema,
  purpose: Code,
  createdAt: IsoTimestampSchema,
  expiresAt: IsoTimestampSchema,
  claimedAt: IsoTimestampSchema.optional(),
  executionArn: z.string().min(1).max(2048).optional(),
});
export type WaitRecord = z.infer<typeof WaitRecordSchema>;

/** Claimed and expired waits stay readable for a day, then TTL removes them. */
const KEEP_SECONDS = 86_400;

/**
 * The task token the session's execution is waiting on. Whoever wins `claim` (the Slack side after appending
 * input, or the notifier after storing the token and finding input already buffered) is the one caller that sends
 * SendTaskSuccess, so the execution is woken exactly once and no input waits unnoticed.
 */
export class WaitRepository {
  constructor(private readonly ctx: StoreContext) {}

  /**
   * Stores the token. Replaces a claimed or expired wait, and is idempotent for the same token; a different,
   * still valid, unclaimed wait is never overwritten (WaitAlreadyPendingError).
   */
  async put(sessionId: string, input: WaitInput, now: Date = new Date()): Promise<WaitRecord> {
    const id = parseInput(KeyPart, sessionId, 'session id');
    const parsed = parseInput(WaitInputSchema, input, 'wait');
    const at = toIso(now);
    const expiresAt = toIso(parsed.expiresAt);
    if (expiresAt <= at) throw invalid('wait', 'expiresAt', `must be after ${at}`);
    const record: WaitRecord = {
      sessionId: id,
      waitId: ulid(now.getTime()),
      token: parsed.token,
      purpose: parsed.purpose,
      createdAt: at,
      expiresAt,
      ...(parsed.executionArn === undefined ? {} : { executionArn: parsed.executionArn }),
    };
    const key = keys.wait(id);
    const otherExecution =
      parsed.executionArn === undefined ? '' : ' OR (attribute_exists(executionArn) AND executionArn <> :execution)';
    const result = await conditionalPut(this.ctx, key, {
      Item: { ...key, ...record, expiresAtEpoch: toEpochSeconds(expiresAt) + KEEP_SECONDS },
      ConditionExpression: `attribute_not_exists(SK) OR attribute_exists(claimId) OR expiresAt <= :now OR #token = :token${otherExecution}`,
      ExpressionAttributeNames: { '#token': 'token' },
      ExpressionAttributeValues: {
        ':now': at,
        ':token': parsed.token,
        ...(parsed.executionArn === undefined ? {} : { ':execution': parsed.executionArn }),
      },
    });
    if (result.ok) return record;
    const stored = await getItem(this.ctx, key);
    throw new WaitAlreadyPendingError(id, String(stored?.['expiresAt'] ?? 'an unknown time'));
  }

  async get(sessionId: string): Promise<WaitRecord | undefined> {
    const id = parseInput(KeyPart, sessionId, 'session id');
    const item = await getItem(this.ctx, keys.wait(id));
    return item === undefined ? undefined : parseRecord(WaitRecordSchema, item);
  }

  /**
   * Claims the unexpired, unclaimed wait and returns it (with its token); undefined when there is none, it expired
   * or someone else claimed it first. Pass `waitId` to claim only the wait you saw.
   */
  async claim(
    sessionId: string,
    now: Date = new Date(),
    options: { waitId?: string } = {},
  ): Promise<WaitRecord | undefined> {
    const id = parseInput(KeyPart, sessionId, 'session id');
    const waitId =
      options.waitId === undefined ? undefined : parseInput(z.string().length(26), options.waitId, 'wait id');
    const key = keys.wait(id);
    const claimId = ulid();
    const at = toIso(now);
    const result = await conditionalUpdate(this.ctx, key, {
      UpdateExpression: 'SET claimId = :claim, claimedAt = :now',
      // Expiry is checked here, not left to TTL: TTL deletes lazily and the local emulator never does.
      ConditionExpression: `attribute_exists(SK) AND attribute_not_exists(claimId) AND expiresAt > :now${
        waitId === undefined ? '' : ' AND waitId = :waitId'
      }`,
      ExpressionAttributeValues: {
        ':claim': claimId,
        ':now': at,
        ...(waitId === undefined ? {} : { ':waitId': waitId }),
      },
      ReturnValues: 'ALL_NEW',
    });
    if (result.ok) return parseRecord(WaitRecordSchema, result.value.Attributes ?? {});
    const stored = await getItem(this.ctx, key);
    // A retried request whose first attempt landed finds its own claim.
    if (stored !== undefined && stored['claimId'] === claimId) return parseRecord(WaitRecordSchema, stored);
    return undefined;
  }

  /** Removes the given wait (e.g. after its execution timed out); false when a different wait is stored now. */
  async remove(sessionId: string, waitId: string): Promise<boolean> {
    const id = parseInput(KeyPart, sessionId, 'session id');
    const wid = parseInput(z.string().length(26), waitId, 'wait id');
    const key = keys.wait(id);
    const result = await conditionalDelete(this.ctx, key, {
      ConditionExpression: 'waitId = :waitId',
      ExpressionAttributeValues: { ':waitId': wid },
    });
    return result.ok;
  }
}
