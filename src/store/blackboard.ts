import { monotonicFactory, ulid } from 'ulid';
import * as z from 'zod';
import { KeyPart, SlackId, SummaryText } from '../limits.js';
import { DomainSchema, ResourceRefSchema, SeveritySchema } from '../triage/envelope/index.js';
import type { StoreContext } from './client.js';
import { assertItemSize, conditionalPut, getItem, parseInput, parseRecord, queryItems } from './dynamo.js';
import { AppendConflictError } from './errors.js';
import { FINDING_PREFIX, IsoTimestampSchema, keys, SESSION_PK_PREFIX, toIso } from './keys.js';

const sharedFindingShape = {
  /** The specialist domain that observed it. */
  specialist: DomainSchema,
  summary: SummaryText.min(1),
  confidence: z.number().min(0).max(1),
  /** Finding code when it matches an analyzer's (UPPER_SNAKE), so grouping and memory can use it. */
  code: z
    .string()
    .regex(/^[A-Z][A-Z0-9_]*$/)
    .max(64)
    .optional(),
  severity: SeveritySchema.optional(),
  resource: ResourceRefSchema.optional(),
  /** Resources this finding is causally tied to; grouping links findings through them. */
  related: z.array(ResourceRefSchema).max(20).default([]),
  evidence: z.array(z.string().max(1000)).max(20).default([]),
  /** Who recorded it: a component name or a Slack user id. */
  recordedBy: SlackId.optional(),
};

export const SharedFindingInputSchema = z.strictObject(sharedFindingShape);
export type SharedFindingInput = z.input<typeof SharedFindingInputSchema>;

export const SharedFindingSchema = z.object({
  ...sharedFindingShape,
  id: z.string().length(26),
  sessionId: KeyPart,
  recordedAt: IsoTimestampSchema,
});
export type SharedFinding = z.infer<typeof SharedFindingSchema>;

export interface SharedContextFilter {
  specialist?: z.infer<typeof DomainSchema>;
  minConfidence?: number;
  limit?: number;
}

const nextId = monotonicFactory();

/**
 * The session's blackboard: specialists append findings (update_shared_context) and everyone reads them back
 * (get_shared_context) before investigating, so no specialist repeats another's work. Findings are append-only.
 */
export class BlackboardRepository {
  constructor(private readonly ctx: StoreContext) {}

  async updateSharedContext(
    sessionId: string,
    input: SharedFindingInput,
    now: Date = new Date(),
  ): Promise<SharedFinding> {
    const id = parseInput(KeyPart, sessionId, 'session id');
    const parsed = parseInput(SharedFindingInputSchema, input, 'shared finding');
    const finding: SharedFinding = { ...parsed, id: nextId(now.getTime()), sessionId: id, recordedAt: toIso(now) };
    const key = keys.finding(id, finding.id);
    const writeId = ulid();
    const item = { ...key, ...finding, writeId };
    assertItemSize(item, 'Shared finding');
    const result = await conditionalPut(this.ctx, key, { Item: item, ConditionExpression: 'attribute_not_exists(SK)' });
    if (!result.ok && (await getItem(this.ctx, key))?.['writeId'] !== writeId) {
      throw new AppendConflictError(`Finding key ${key.SK} of session ${id} was already taken`);
    }
    return finding;
  }

  /** Findings in the order they were recorded, optionally narrowed to one specialist or a minimum confidence. */
  async getSharedContext(sessionId: string, filter: SharedContextFilter = {}): Promise<SharedFinding[]> {
    const id = parseInput(KeyPart, sessionId, 'session id');
    const items = await queryItems(
      this.ctx,
      {
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': `${SESSION_PK_PREFIX}${id}`, ':prefix': FINDING_PREFIX },
        ConsistentRead: true,
      },
      1000,
    );
    return items
      .map((item) => parseRecord(SharedFindingSchema, item))
      .filter(
        (f) =>
          (filter.specialist === undefined || f.specialist === filter.specialist) &&
          (filter.minConfidence === undefined || f.confidence >= filter.minConfidence),
      )
      .slice(0, filter.limit ?? 1000);
  }
}
