import { ulid } from 'ulid';
import * as z from 'zod';
import type { StoreContext } from './client.js';
import { conditionalDelete, conditionalPut, conditionalUpdate, getItem, parseInput } from './dynamo.js';
import { keys, toEpochSeconds, toIso } from './keys.js';

/** Any printable key up to 512 characters: Slack event ids, `command:<trigger_id>`, `action:<action_ts>`. */
export const DedupeKeySchema = z
  .string()
  .min(1)
  .max(512)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces');

export const DedupeOptionsSchema = z.strictObject({
  /** How long a repeat counts as a duplicate. Slack retries within minutes; the default covers them with margin. */
  ttlSeconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .default(3600),
  now: z.date().optional(),
});
export type DedupeOptions = z.input<typeof DedupeOptionsSchema>;

export const DedupeClaimOptionsSchema = DedupeOptionsSchema.extend({
  /**
   * How long an unfinished first attempt holds the key. Past it, the attempt is presumed dead (a crash between the
   * mark and the work it guards) and a repeat is let through, so a retry can never be dropped for a delivery that
   * never happened. Slack gives up on an attempt after 3 s and retries.
   */
  leaseSeconds: z.number().int().min(1).max(3600).default(3),
});
export type DedupeClaimOptions = z.input<typeof DedupeClaimOptionsSchema>;

/** A claimed key; finish it once the guarded work is done, release it when the work failed. */
export interface DedupeClaim {
  key: string;
  writeId: string;
}

/** Remembers deliveries so Slack retries and double submissions are processed once. */
export class DedupeRepository {
  constructor(private readonly ctx: StoreContext) {}

  /**
   * Returns true for the first delivery of `key` (and for the first one after an earlier mark expired), false for a
   * repeat. The expiry is part of the condition, so an expired mark is reusable whether or not TTL removed it.
   */
  async firstDelivery(key: string, options: DedupeOptions = {}): Promise<boolean> {
    const { ttlSeconds, now = new Date() } = parseInput(DedupeOptionsSchema, options, 'dedupe options');
    return (await this.mark(key, now, ttlSeconds)) !== undefined;
  }

  /**
   * The first phase of a delivery that must not be lost: claims `key` unless a finished delivery or a live attempt
   * (inside its lease) holds it. Returns the claim, or undefined for a repeat. The mark only becomes final with
   * `finish`, after the work it guards succeeded, so the work behind it must tolerate running twice (inbox input
   * does: the consumer drops a repeated message key).
   */
  async claim(key: string, options: DedupeClaimOptions = {}): Promise<DedupeClaim | undefined> {
    const {
      ttlSeconds,
      leaseSeconds,
      now = new Date(),
    } = parseInput(DedupeClaimOptionsSchema, options, 'dedupe options');
    return this.mark(key, now, ttlSeconds, leaseSeconds);
  }

  /**
   * One conditional put for both kinds of mark: a final one (no lease) and a pending one held for `leaseSeconds`.
   * Expired marks, and pending ones past their lease, are taken over; a final mark holds until it expires.
   */
  private async mark(
    key: string,
    now: Date,
    ttlSeconds: number,
    leaseSeconds?: number,
  ): Promise<DedupeClaim | undefined> {
    const dedupeKey = parseInput(DedupeKeySchema, key, 'dedupe key');
    const at = toIso(now);
    const expiresAt = toIso(new Date(now.getTime() + ttlSeconds * 1000));
    const lease =
      leaseSeconds === undefined
        ? {}
        : { leaseUntil: toIso(new Date(now.getTime() + leaseSeconds * 1000)), phase: 'pending' };
    const itemKey = keys.dedupe(dedupeKey);
    const writeId = ulid();
    const result = await conditionalPut(this.ctx, itemKey, {
      Item: {
        ...itemKey,
        firstSeenAt: at,
        expiresAt,
        ...lease,
        writeId,
        expiresAtEpoch: toEpochSeconds(expiresAt),
      },
      ConditionExpression: 'attribute_not_exists(PK) OR expiresAt <= :now OR (phase = :pending AND leaseUntil <= :now)',
      ExpressionAttributeValues: { ':now': at, ':pending': 'pending' },
    });
    // A retried request whose first attempt landed finds its own writeId: it still holds the first delivery.
    if (result.ok || (await getItem(this.ctx, itemKey))?.['writeId'] === writeId) return { key: dedupeKey, writeId };
    return undefined;
  }

  /**
   * Whether `key` is held by an attempt that has not finished, alive or not: a repeat must then be asked to come
   * again rather than be told it is a duplicate, since the attempt may never finish.
   */
  async isPending(key: string, now: Date = new Date()): Promise<boolean> {
    const item = await getItem(this.ctx, keys.dedupe(parseInput(DedupeKeySchema, key, 'dedupe key')));
    return item !== undefined && item['phase'] === 'pending' && String(item['expiresAt']) > toIso(now);
  }

  /** Makes the claim final: repeats of the key are dropped until it expires. False when the claim was lost. */
  async finish(claim: DedupeClaim): Promise<boolean> {
    const itemKey = keys.dedupe(parseInput(DedupeKeySchema, claim.key, 'dedupe key'));
    const result = await conditionalUpdate(this.ctx, itemKey, {
      UpdateExpression: 'SET phase = :done REMOVE leaseUntil',
      ConditionExpression: 'writeId = :writeId',
      ExpressionAttributeValues: { ':done': 'done', ':writeId': claim.writeId },
    });
    return result.ok;
  }

  /** Gives the key back after the guarded work failed, so the sender's retry is processed. */
  async release(claim: DedupeClaim): Promise<void> {
    const itemKey = keys.dedupe(parseInput(DedupeKeySchema, claim.key, 'dedupe key'));
    await conditionalDelete(this.ctx, itemKey, {
      ConditionExpression: 'writeId = :writeId',
      ExpressionAttributeValues: { ':writeId': claim.writeId },
    });
  }
}
