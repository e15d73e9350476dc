import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import * as z from 'zod';
import { byCodePoint } from '../code-point-order.js';
import { Code, KeyPart, KUBE_NAME_MAX, NoteText, SlackId, SummaryText } from '../limits.js';
import { ResourceRefSchema } from '../triage/envelope/index.js';
import type { StoreContext } from './client.js';
import { assertItemSize, conditionalPut, getItem, parseInput, parseRecord, queryItems, request } from './dynamo.js';
import { StoreError } from './errors.js';
import { GSI1, IsoTimestampSchema, keys, MEMORY_SK_PREFIX } from './keys.js';
import {
  type Fingerprint,
  FingerprintSchema,
  type FingerprintSource,
  fingerprintEnvelope,
  fingerprintTokens,
} from './memory-fingerprint.js';
import { scoreSimilarity } from './memory-similarity.js';

/**
 * Operational memory: resolved incidents and an inverted index over their fingerprint tokens, in the single table.
 *
 * Items: `MEMORY#<id>` / `META` (the incident), `TOKEN#<t>` / `MEMORY#<id>` (one per token, carrying the
 * fingerprint so ranking needs no extra reads) and `TOKEN#<t>` / `COUNT` (how many incidents hold the token, for
 * choosing selective tokens). A save writes the token items first, the incident last, and the counts after it:
 * the incident item is the commit point. A token without its incident (a save that failed half way) is ignored by
 * search and overwritten by a retry, so nothing half written is ever visible.
 */

export class MemoryAlreadyStoredError extends StoreError {
  constructor(readonly memoryId: string) {
    super(`Incident ${memoryId} is already stored in operational memory`);
  }
}

export class MemoryNotFoundError extends StoreError {
  constructor(readonly memoryId: string) {
    super(`Incident ${memoryId} is not in operational memory`);
  }
}

const ResolutionStepSchema = z.object({
  command: SummaryText.min(1),
  description: z.string().max(1000).optional(),
  rollback: SummaryText.optional(),
});
export type ResolutionStep = z.infer<typeof ResolutionStepSchema>;

const IncidentFieldsSchema = z.object({
  id: KeyPart.optional(),
  sessionId: KeyPart.optional(),
  title: z.string().min(1).max(300),
  namespace: z.string().max(KUBE_NAME_MAX).optional(),
  cluster: z.string().max(128).optional(),
  fingerprint: FingerprintSchema,
  symptoms: z.array(z.string().max(1000)).max(50),
  rootCause: z.object({
    code: Code,
    summary: SummaryText.min(1),
    resource: ResourceRefSchema.optional(),
  }),
  resolutionSteps: z.array(ResolutionStepSchema).min(1).max(30),
  resolvedBy: SlackId,
  resolvedAt: IsoTimestampSchema,
  timeToResolveMs: z.number().int().min(0),
  /** How the fix was proven: a fresh triage after it no longer showed the root cause. */
  validation: z
    .object({
      passed: z.boolean(),
      reason: NoteText.min(1),
      /** Fresh triages it took; 1 means the first fix held. */
      attempts: z.number().int().min(1).max(1000),
      at: IsoTimestampSchema,
    })
    .optional(),
});
export type IncidentValidation = NonNullable<z.infer<typeof IncidentFieldsSchema>['validation']>;
const NewIncidentSchema = IncidentFieldsSchema.strict();
export type NewIncident = z.input<typeof NewIncidentSchema>;

/** A stored incident as read back; key attributes are stripped. */
const StoredIncidentSchema = IncidentFieldsSchema.extend({
  id: KeyPart,
  tokens: z.array(z.string()),
});
export type StoredIncident = z.infer<typeof StoredIncidentSchema>;

const TokenItemSchema = z.object({
  memoryId: KeyPart,
  resolvedAt: z.string(),
  fingerprint: FingerprintSchema,
});

export interface SimilarIncident {
  incident: StoredIncident;
  score: number;
  explanation: string;
}

export interface FindSimilarOptions {
  limit?: number;
  /** At most this many token queries per search, the most selective tokens first. */
  maxTokenQueries?: number;
  /** Newest incidents read per token. */
  perTokenLimit?: number;
  /** Below this score a candidate is not shown. */
  minScore?: number;
  /** Leave one incident out (the session's own, when it was stored already). */
  excludeId?: string;
}

export interface SearchStats {
  tokens: number;
  tokensQueried: number;
  candidates: number;
  requests: number;
}

const COUNT_SK = 'COUNT';
const MAX_TOKEN_LENGTH = 200;
const MEMORY_LIST_PK = 'MEMORIES';

/** `#` separates key parts; tokens never contain it, and stay well below the key size limit. */
function tokenKeyPart(token: string): string {
  return token.replace(/#/g, '_').slice(0, MAX_TOKEN_LENGTH);
}

/** Tokens that identify a cause are worth a query before tokens many incidents share. */
function tokenWeight(token: string): number {
  if (token.startsWith('root:')) return 0;
  if (token.startsWith('r:')) return 1;
  if (token.startsWith('code:')) return 2;
  if (token.startsWith('intent:')) return 3;
  return 4;
}

export class MemoryRepository {
  private readonly ctx: StoreContext;

  constructor(client: DynamoDBDocumentClient, tableName: string) {
    this.ctx = { client, tableName };
  }

  /** Stores a resolved incident and indexes it. MemoryAlreadyStoredError when the id is taken. */
  async save(input: NewIncident): Promise<StoredIncident> {
    const incident = this.prepare(input);
    await this.writeTokens([incident]);
    await this.commit(incident);
    await this.addCounts(incident.tokens.map((t) => [t, 1] as const));
    return incident;
  }

  /**
   * Imports many incidents (history, or seeding a table): token items go in batches and counts are added once
   * per token at the end. Incidents whose id already exists are skipped and reported, never overwritten.
   */
  async importIncidents(
    inputs: readonly NewIncident[],
    options: { concurrency?: number } = {},
  ): Promise<{ stored: number; skipped: string[] }> {
    const incidents = inputs.map((i) => this.prepare(i));
    const concurrency = Math.max(1, options.concurrency ?? 16);
    const counts = new Map<string, number>();
    const skipped: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < incidents.length) {
        const chunk = incidents.slice(next, next + 5);
        next += 5;
        await this.writeTokens(chunk);
        for (const incident of chunk) {
          try {
            await this.commit(incident);
            for (const token of incident.tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
          } catch (error) {
            if (!(error instanceof MemoryAlreadyStoredError)) throw error;
            skipped.push(incident.id);
          }
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    await this.addCounts([...counts]);
    return { stored: incidents.length - skipped.length, skipped };
  }

  async get(id: string): Promise<StoredIncident> {
    const memoryId = parseInput(KeyPart, id, 'memory id');
    const item = await getItem(this.ctx, keys.memory(memoryId));
    if (!item) throw new MemoryNotFoundError(memoryId);
    return parseRecord(StoredIncidentSchema, item);
  }

  /** The most recently resolved incidents, newest first. */
  async listRecent(limit = 20): Promise<StoredIncident[]> {
    const items = await queryItems(
      this.ctx,
      {
        IndexName: GSI1,
        KeyConditionExpression: 'GSI1PK = :pk',
        ExpressionAttributeValues: { ':pk': MEMORY_LIST_PK },
        ScanIndexForward: false,
      },
      limit,
    );
    return items.map((item) => parseRecord(StoredIncidentSchema, item));
  }

  /** Similar past incidents for a new envelope (or a fingerprint), best first, with their resolutions. */
  async findSimilar(
    source: FingerprintSource | Fingerprint,
    options: FindSimilarOptions = {},
  ): Promise<SimilarIncident[]> {
    return (await this.search(source, options)).matches;
  }

  /** findSimilar with what it cost: how many tokens were queried and how many requests were sent. */
  async search(
    source: FingerprintSource | Fingerprint,
    options: FindSimilarOptions = {},
  ): Promise<{ matches: SimilarIncident[]; stats: SearchStats }> {
    const limit = options.limit ?? 5;
    const maxQueries = options.maxTokenQueries ?? 8;
    const perToken = options.perTokenLimit ?? 100;
    const minScore = options.minScore ?? 0.2;
    const query = 'routing' in source ? fingerprintEnvelope(source) : FingerprintSchema.parse(source);
    const tokens = fingerprintTokens(query).map(tokenKeyPart);
    const stats: SearchStats = { tokens: tokens.length, tokensQueried: 0, candidates: 0, requests: 0 };

    const counts = await this.batchGet(
      tokens.map((t) => ({ PK: `TOKEN#${t}`, SK: COUNT_SK })),
      stats,
    );
    const countOf = new Map(counts.map((item) => [String(item['PK']).slice('TOKEN#'.length), Number(item['n'] ?? 0)]));
    const chosen = tokens
      .filter((t) => (countOf.get(t) ?? 0) > 0)
      .sort((a, b) => (countOf.get(a) ?? 0) - (countOf.get(b) ?? 0) || tokenWeight(a) - tokenWeight(b))
      .slice(0, maxQueries);
    stats.tokensQueried = chosen.length;

    const pages = await Promise.all(
      chosen.map(async (token) => {
        stats.requests++;
        const out = await request('Query', `TOKEN#${token}`, () =>
          this.ctx.client.send(
            new QueryCommand({
              TableName: this.ctx.tableName,
              KeyConditionExpression: 'PK = :pk AND begins_with(SK, :m)',
              ExpressionAttributeValues: { ':pk': `TOKEN#${token}`, ':m': MEMORY_SK_PREFIX },
              ScanIndexForward: false,
              Limit: perToken,
            }),
          ),
        );
        return out.Items ?? [];
      }),
    );

    const candidates = new Map<string, z.infer<typeof TokenItemSchema>>();
    for (const item of pages.flat()) {
      const parsed = TokenItemSchema.safeParse(item);
      // A token item is only a hint; the incident item, read below, is validated strictly.
      if (parsed.success && parsed.data.memoryId !== options.excludeId)
        candidates.set(parsed.data.memoryId, parsed.data);
    }
    stats.candidates = candidates.size;

    const ranked = [...candidates.values()]
      .map((c) => ({ candidate: c, similarity: scoreSimilarity(query, c.fingerprint) }))
      .filter((r) => r.similarity.score >= minScore)
      .sort(
        (a, b) =>
          b.similarity.score - a.similarity.score || byCodePoint(b.candidate.resolvedAt, a.candidate.resolvedAt),
      );

    const matches: SimilarIncident[] = [];
    // Read incidents in small rounds: a candidate whose incident item is missing was never committed.
    for (let offset = 0; matches.length < limit && offset < ranked.length; offset += limit * 2) {
      const round = ranked.slice(offset, offset + limit * 2);
      const items = await this.batchGet(
        round.map((r) => keys.memory(r.candidate.memoryId)),
        stats,
      );
      const byId = new Map(items.map((item) => [String(item['id']), item]));
      for (const r of round) {
        const item = byId.get(r.candidate.memoryId);
        if (!item || matches.length >= limit) continue;
        matches.push({
          incident: parseRecord(StoredIncidentSchema, item),
          score: r.similarity.score,
          explanation: r.similarity.explanation,
        });
      }
    }
    return { matches, stats };
  }

  private prepare(input: NewIncident): StoredIncident {
    const parsed = parseInput(NewIncidentSchema, input, 'incident');
    const id = parsed.id ?? ulid(Date.parse(parsed.resolvedAt));
    return { ...parsed, id, tokens: fingerprintTokens(parsed.fingerprint).map(tokenKeyPart) };
  }

  private async writeTokens(incidents: readonly StoredIncident[]): Promise<void> {
    const requests = incidents.flatMap((incident) =>
      incident.tokens.map((token) => ({
        PutRequest: {
          Item: {
            ...keys.memoryToken(token, incident.id),
            memoryId: incident.id,
            resolvedAt: incident.resolvedAt,
            fingerprint: incident.fingerprint,
          },
        },
      })),
    );
    for (let i = 0; i < requests.length; i += 25) {
      let pending: typeof requests = requests.slice(i, i + 25);
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt >= 8) throw new StoreError(`DynamoDB kept ${pending.length} memory index writes unprocessed`);
        if (attempt > 0) await new Promise((done) => setTimeout(done, 2 ** attempt * 10));
        const out = await request('BatchWriteItem', this.ctx.tableName, () =>
          this.ctx.client.send(new BatchWriteCommand({ RequestItems: { [this.ctx.tableName]: pending } })),
        );
        pending = (out.UnprocessedItems?.[this.ctx.tableName] ?? []) as typeof requests;
      }
    }
  }

  private async commit(incident: StoredIncident): Promise<void> {
    const key = keys.memory(incident.id);
    const item = { ...key, ...incident, GSI1PK: MEMORY_LIST_PK, GSI1SK: `${incident.resolvedAt}#${incident.id}` };
    assertItemSize(item, 'Stored incident');
    const result = await conditionalPut(this.ctx, key, { Item: item, ConditionExpression: 'attribute_not_exists(PK)' });
    if (!result.ok) throw new MemoryAlreadyStoredError(incident.id);
  }

  private async addCounts(deltas: ReadonlyArray<readonly [string, number]>): Promise<void> {
    const queue = [...deltas];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const [token, n] = next;
        const key = { PK: `TOKEN#${token}`, SK: COUNT_SK };
        await request('UpdateItem', key, () =>
          this.ctx.client.send(
            new UpdateCommand({
              TableName: this.ctx.tableName,
              Key: key,
              UpdateExpression: 'ADD n :n',
              ExpressionAttributeValues: { ':n': n },
            }),
          ),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, queue.length) }, worker));
  }

  private async batchGet(
    keyList: ReadonlyArray<{ PK: string; SK: string }>,
    stats: SearchStats,
  ): Promise<Record<string, unknown>[]> {
    const found: Record<string, unknown>[] = [];
    for (let i = 0; i < keyList.length; i += 100) {
      let pending = keyList.slice(i, i + 100) as Array<Record<string, unknown>>;
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt >= 8) throw new StoreError(`DynamoDB kept ${pending.length} memory reads unprocessed`);
        if (attempt > 0) await new Promise((done) => setTimeout(done, 2 ** attempt * 10));
        stats.requests++;
        const out = await request('BatchGetItem', this.ctx.tableName, () =>
          this.ctx.client.send(new BatchGetCommand({ RequestItems: { [this.ctx.tableName]: { Keys: pending } } })),
        );
        found.push(...(out.Responses?.[this.ctx.tableName] ?? []));
        pending = (out.UnprocessedKeys?.[this.ctx.tableName]?.Keys ?? []) as Array<Record<string, unknown>>;
      }
    }
    return found;
  }
}

/** Builds the incident to store when a session is resolved. */
export function incidentFromResolution(input: {
  envelope: FingerprintSource & {
    summary?: string;
    routing: FingerprintSource['routing'] & { namespace?: string; cluster?: string };
  };
  rootCause: { code: string; summary: string; resource?: z.infer<typeof ResourceRefSchema> };
  resolutionSteps: readonly ResolutionStep[];
  resolvedBy: string;
  startedAt: Date;
  resolvedAt: Date;
  sessionId?: string;
  title?: string;
  validation?: IncidentValidation;
}): NewIncident {
  const { envelope } = input;
  return {
    ...(input.sessionId ? { id: input.sessionId, sessionId: input.sessionId } : {}),
    title: (input.title ?? `${envelope.routing.intent}: ${input.rootCause.summary}`).slice(0, 300),
    namespace: envelope.routing.namespace,
    cluster: envelope.routing.cluster,
    fingerprint: fingerprintEnvelope(envelope, { confirmedRootCauseCode: input.rootCause.code }),
    symptoms: envelope.findings.slice(0, 50).map((f) => `${f.code}: ${f.message}`.slice(0, 1000)),
    rootCause: input.rootCause,
    resolutionSteps: [...input.resolutionSteps],
    resolvedBy: input.resolvedBy,
    resolvedAt: input.resolvedAt.toISOString(),
    timeToResolveMs: Math.max(0, input.resolvedAt.getTime() - input.startedAt.getTime()),
    ...(input.validation ? { validation: input.validation } : {}),
  };
}
