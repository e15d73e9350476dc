import * as z from 'zod';
import { KeyPart } from '../limits.js';
import type { StoreContext } from './client.js';
import { conditionalPut, conditionalUpdate, parseInput, parseRecord } from './dynamo.js';
import { StoreError } from './errors.js';
import { IsoTimestampSchema, keys, toEpochSeconds, toIso } from './keys.js';

/**
 * The modals calmops opened, so a submission can be checked against what was actually shown: which person it was
 * opened for, for which session (and approval), in which channel, and until when. A submission for a modal that was
 * never opened here, opened for someone else, or opened too long ago finds no record and is refused.
 */

export const MODAL_KINDS = ['break-glass', 'request-changes'] as const;
export type ModalKind = (typeof MODAL_KINDS)[number];

export const ModalRecordSchema = z.object({
  viewId: KeyPart,
  kind: z.enum(MODAL_KINDS),
  userId: KeyPart,
  sessionId: KeyPart,
  channelId: KeyPart,
  threadTs: KeyPart.optional(),
  approvalId: KeyPart.optional(),
  messageTs: KeyPart.optional(),
  openedAt: IsoTimestampSchema,
  expiresAt: IsoTimestampSchema,
  submittedAt: IsoTimestampSchema.optional(),
  /** Set once the submission did what the modal is for; the modal cannot be submitted again. */
  completedAt: IsoTimestampSchema.optional(),
  submissions: z.number().int().min(0).default(0),
});
export type ModalRecord = z.output<typeof ModalRecordSchema>;

const NewModalSchema = ModalRecordSchema.omit({
  openedAt: true,
  expiresAt: true,
  submittedAt: true,
  completedAt: true,
  submissions: true,
});
export type NewModal = z.input<typeof NewModalSchema>;

export const ModalOptionsSchema = z.strictObject({
  /** How long an opened modal may be submitted. Slack keeps a modal open as long as the person leaves it open. */
  ttlSeconds: z.number().int().min(1).max(86_400).default(3600),
});

export class ModalAlreadyRecordedError extends StoreError {
  readonly viewId: string;
  constructor(viewId: string, options?: { cause?: unknown }) {
    super(`A modal with view id ${viewId} is already recorded and has not expired`, options);
    this.viewId = viewId;
  }
}

export class ModalRepository {
  private readonly ttlSeconds: number;

  constructor(
    private readonly ctx: StoreContext,
    options: z.input<typeof ModalOptionsSchema> = {},
  ) {
    this.ttlSeconds = parseInput(ModalOptionsSchema, options, 'modal options').ttlSeconds;
  }

  /** Records a modal Slack just opened (views.open answered with its view id). */
  async opened(input: NewModal, now: Date = new Date()): Promise<ModalRecord> {
    const modal = parseInput(NewModalSchema, input, 'modal');
    const openedAt = toIso(now);
    const expiresAt = toIso(new Date(now.getTime() + this.ttlSeconds * 1000));
    const record: ModalRecord = { ...modal, openedAt, expiresAt, submissions: 0 };
    const key = keys.modal(modal.viewId);
    const result = await conditionalPut(this.ctx, key, {
      Item: { ...key, ...record, expiresAtEpoch: toEpochSeconds(expiresAt) },
      // View ids are Slack's and unique; an expired record may be replaced, a live one never.
      ConditionExpression: 'attribute_not_exists(PK) OR expiresAt <= :now',
      ExpressionAttributeValues: { ':now': openedAt },
    });
    if (!result.ok) throw new ModalAlreadyRecordedError(modal.viewId);
    return record;
  }

  /**
   * The record of the modal `userId` is submitting, counted as one more submission; undefined when there is no
   * such modal, it was opened for someone else or as another kind, it expired, or it already did its work. A
   * submission refused for a bad field leaves the modal open for the corrected one. One conditional update decides,
   * so the expiry is judged by the store whether or not TTL has removed the item yet.
   */
  async submitted(
    viewId: string,
    expected: { kind: ModalKind; userId: string },
    now: Date = new Date(),
  ): Promise<ModalRecord | undefined> {
    const id = KeyPart.safeParse(viewId);
    const user = KeyPart.safeParse(expected.userId);
    if (!id.success || !user.success) return undefined;
    const at = toIso(now);
    const key = keys.modal(id.data);
    const result = await conditionalUpdate(this.ctx, key, {
      UpdateExpression: 'SET submittedAt = :now, submissions = if_not_exists(submissions, :zero) + :one',
      ConditionExpression:
        'attribute_exists(PK) AND expiresAt > :now AND userId = :user AND #kind = :kind AND attribute_not_exists(completedAt)',
      ExpressionAttributeNames: { '#kind': 'kind' },
      ExpressionAttributeValues: {
        ':now': at,
        ':user': user.data,
        ':kind': expected.kind,
        ':zero': 0,
        ':one': 1,
      },
      ReturnValues: 'ALL_NEW',
    });
    if (!result.ok) return undefined;
    return parseRecord(ModalRecordSchema, result.value.Attributes ?? {});
  }

  /** Marks the modal's work done (the request filed, the decision sent); later submissions find no record. */
  async completed(viewId: string, now: Date = new Date()): Promise<boolean> {
    const id = parseInput(KeyPart, viewId, 'view id');
    const key = keys.modal(id);
    const result = await conditionalUpdate(this.ctx, key, {
      UpdateExpression: 'SET completedAt = :now',
      ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(completedAt)',
      ExpressionAttributeValues: { ':now': toIso(now) },
    });
    return result.ok;
  }
}
