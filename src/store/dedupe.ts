import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import * as z from 'zod';
import type { StoreContext } from './client.js';
import { conditional, getItem, parseInput } from './dynamo.js';
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

/** Remembers deliveries so Slack retries and double submissions are processed once. */
export class DedupeRepository {
  constructor(private readonly ctx: StoreContext) {}

  /**
   * Returns true for the first delivery of `key` (and for the first one after an earlier mark expired), false for a
   * repeat. The expiry is part of the condition, so an expired mark is reusable whether or not TTL removed it.
   */
  async firstDelivery(key: string, options: DedupeOptions = {}): Promise<boolean> {
    const dedupeKey = parseInput(DedupeKeySchema, key, 'dedupe key');
    const { ttlSeconds, now = new Date() } = parseInput(DedupeOptionsSchema, options, 'dedupe options');
    const at = toIso(now);
    const expiresAt = toIso(new Date(now.getTime() + ttlSeconds * 1000));
    const itemKey = keys.dedupe(dedupeKey);
    const writeId = ulid();
    const result = await conditional('PutItem', itemKey, () =>
      this.ctx.client.send(
        new PutCommand({
          TableName: this.ctx.tableName,
          Item: { ...itemKey, firstSeenAt: at, expiresAt, writeId, expiresAtEpoch: toEpochSeconds(expiresAt) },
          ConditionExpression: 'attribute_not_exists(PK) OR expiresAt <= :now',
          ExpressionAttributeValues: { ':now': at },
        }),
      ),
    );
    if (result.ok) return true;
    // A retried request whose first attempt landed must still report the first delivery, or the event is dropped.
    return (await getItem(this.ctx, itemKey))?.['writeId'] === writeId;
  }
}
