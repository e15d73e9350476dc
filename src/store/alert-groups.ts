import { ulid } from 'ulid';
import * as z from 'zod';
import { Code, KeyPart, RecordId } from '../limits.js';
import type { StoreContext } from './client.js';
import { conditionalDelete, conditionalPut, conditionalUpdate, getItem, parseInput, parseRecord } from './dynamo.js';
import { IsoTimestampSchema, keys, toIso } from './keys.js';

/**
 * Which session an alert group opened. An alerting system re-sends a group (repeats, updates, its resolution, and
 * the same notification from each member of a high-availability pair) under one group key; the first delivery
 * claims the group with one conditional put, opens the session and binds it here, and every later delivery finds the
 * session's thread. A claim that never got bound (its delivery died midway) is taken over once its lease has passed.
 */

export const ALERT_GROUP_PHASES = ['opening', 'bound'] as const;

export const AlertGroupRecordSchema = z.object({
  /** A digest of the group's identity (source, cluster, group key); fits a key part. */
  groupId: KeyPart,
  source: Code,
  /** The sender's own group key, kept for people reading the table. */
  groupKey: z.string().min(1).max(4096),
  phase: z.enum(ALERT_GROUP_PHASES),
  channelId: KeyPart,
  /**
   * The session id the opening uses, chosen with the first claim and kept by every claim that takes over, so a
   * delivery that finishes an interrupted opening completes that session rather than opening a second one.
   */
  plannedSessionId: KeyPart.optional(),
  /** The thread root the opening posted, once posted: a takeover opens the session there instead of posting again. */
  rootTs: KeyPart.optional(),
  /** Set once bound: the session the group opened and its thread. */
  sessionId: KeyPart.optional(),
  threadTs: KeyPart.optional(),
  claimedAt: IsoTimestampSchema,
  /** While opening: past this, the claim is presumed dead and may be taken over. */
  leaseUntil: IsoTimestampSchema.optional(),
  boundAt: IsoTimestampSchema.optional(),
  writeId: RecordId,
});
export type AlertGroupRecord = z.infer<typeof AlertGroupRecordSchema>;

const ClaimInputSchema = z.object({
  groupId: KeyPart,
  source: Code,
  groupKey: z.string().min(1).max(4096),
  channelId: KeyPart,
});
export type AlertGroupClaimInput = z.input<typeof ClaimInputSchema>;

export const AlertGroupClaimOptionsSchema = z.strictObject({
  now: z.date().optional(),
  /** How long an unbound claim holds the group: opening a session takes a post and a few writes. */
  leaseSeconds: z.number().int().min(1).max(3600).default(30),
  /**
   * The session a bound group pointed at when the caller found it no longer open: the group is taken over only if
   * it still points there, so of two deliveries that both saw it closed, one opens the next session.
   */
  replacing: KeyPart.optional(),
  /** What an interrupted opening (the expired claim being taken over) had done: carried into the new claim. */
  inherit: z.strictObject({ plannedSessionId: KeyPart.optional(), rootTs: KeyPart.optional() }).optional(),
});
export type AlertGroupClaimOptions = z.input<typeof AlertGroupClaimOptionsSchema>;

/** What a claim attempt found: the group is now the caller's to open, or someone else's record stands. */
export type AlertGroupClaim =
  | { claimed: true; record: AlertGroupRecord }
  | { claimed: false; existing: AlertGroupRecord | undefined };

export class AlertGroupRepository {
  constructor(private readonly ctx: StoreContext) {}

  async get(groupId: string): Promise<AlertGroupRecord | undefined> {
    const id = parseInput(KeyPart, groupId, 'alert group id');
    const item = await getItem(this.ctx, keys.alertGroup(id));
    return item === undefined ? undefined : parseRecord(AlertGroupRecordSchema, item);
  }

  /**
   * Claims the group for opening a session: one conditional put that succeeds for an unknown group, for a claim
   * whose lease has passed, and (with `replacing`) for a group still bound to the session the caller saw closed.
   */
  async claim(input: AlertGroupClaimInput, options: AlertGroupClaimOptions = {}): Promise<AlertGroupClaim> {
    const group = parseInput(ClaimInputSchema, input, 'alert group claim');
    const {
      now = new Date(),
      leaseSeconds,
      replacing,
      inherit,
    } = parseInput(AlertGroupClaimOptionsSchema, options, 'alert group claim options');
    const at = toIso(now);
    const record: AlertGroupRecord = {
      ...group,
      plannedSessionId: inherit?.plannedSessionId ?? ulid(now.getTime()),
      ...(inherit?.rootTs === undefined ? {} : { rootTs: inherit.rootTs }),
      phase: 'opening',
      claimedAt: at,
      leaseUntil: toIso(new Date(now.getTime() + leaseSeconds * 1000)),
      writeId: ulid(),
    };
    const key = keys.alertGroup(group.groupId);
    const takeOver = replacing === undefined ? '' : ' OR (phase = :bound AND sessionId = :replacing)';
    const result = await conditionalPut(this.ctx, key, {
      Item: { ...key, ...record },
      ConditionExpression: `attribute_not_exists(PK) OR (phase = :opening AND leaseUntil <= :now)${takeOver}`,
      ExpressionAttributeValues: {
        ':opening': 'opening',
        ':now': at,
        ...(replacing === undefined ? {} : { ':bound': 'bound', ':replacing': replacing }),
      },
    });
    if (result.ok) return { claimed: true, record };
    const existing = await this.get(group.groupId);
    // A retried request whose first attempt landed finds its own write: the claim is still the caller's.
    if (existing?.writeId === record.writeId) return { claimed: true, record: existing };
    return { claimed: false, existing };
  }

  /** Records the thread root a claim posted, so a takeover reuses it. False when the claim was lost. */
  async noteRoot(claim: AlertGroupRecord, rootTs: string): Promise<boolean> {
    const ts = parseInput(KeyPart, rootTs, 'thread ts');
    const key = keys.alertGroup(parseInput(KeyPart, claim.groupId, 'alert group id'));
    const result = await conditionalUpdate(this.ctx, key, {
      UpdateExpression: 'SET rootTs = :root',
      ConditionExpression: 'writeId = :writeId AND phase = :opening',
      ExpressionAttributeValues: { ':root': ts, ':writeId': claim.writeId, ':opening': 'opening' },
    });
    return result.ok;
  }

  /** Binds a claimed group to the session it opened. False when the claim was lost (taken over after its lease). */
  async bind(
    claim: AlertGroupRecord,
    session: { sessionId: string; threadTs: string },
    now: Date = new Date(),
  ): Promise<AlertGroupRecord | undefined> {
    const sessionId = parseInput(KeyPart, session.sessionId, 'session id');
    const threadTs = parseInput(KeyPart, session.threadTs, 'thread ts');
    const at = toIso(now);
    const key = keys.alertGroup(parseInput(KeyPart, claim.groupId, 'alert group id'));
    const result = await conditionalUpdate(this.ctx, key, {
      UpdateExpression:
        'SET phase = :bound, sessionId = :session, threadTs = :thread, boundAt = :now REMOVE leaseUntil',
      ConditionExpression: 'writeId = :writeId AND phase = :opening',
      ExpressionAttributeValues: {
        ':bound': 'bound',
        ':opening': 'opening',
        ':session': sessionId,
        ':thread': threadTs,
        ':now': at,
        ':writeId': claim.writeId,
      },
    });
    if (!result.ok) {
      const current = await this.get(claim.groupId);
      // The SDK's retry of an update that did land: the group is bound as asked.
      return current?.writeId === claim.writeId && current.sessionId === sessionId ? current : undefined;
    }
    const { leaseUntil: _lease, ...rest } = claim;
    return { ...rest, phase: 'bound', sessionId, threadTs, boundAt: at };
  }

  /**
   * Ends a claim's hold at once after its opening failed midway, keeping what it had done (its planned session, its
   * root), so the sender's retry takes over and finishes rather than starting a second session and thread.
   */
  async abandon(claim: AlertGroupRecord, now: Date = new Date()): Promise<void> {
    const key = keys.alertGroup(parseInput(KeyPart, claim.groupId, 'alert group id'));
    await conditionalUpdate(this.ctx, key, {
      UpdateExpression: 'SET leaseUntil = :now',
      ConditionExpression: 'writeId = :writeId AND phase = :opening',
      ExpressionAttributeValues: { ':now': toIso(now), ':writeId': claim.writeId, ':opening': 'opening' },
    });
  }

  /** Gives an unbound claim back after opening failed, so the sender's retry can open the session. */
  async release(claim: AlertGroupRecord): Promise<void> {
    const key = keys.alertGroup(parseInput(KeyPart, claim.groupId, 'alert group id'));
    await conditionalDelete(this.ctx, key, {
      ConditionExpression: 'writeId = :writeId AND phase = :opening',
      ExpressionAttributeValues: { ':writeId': claim.writeId, ':opening': 'opening' },
    });
  }
}
