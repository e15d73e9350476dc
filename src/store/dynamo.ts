import {
  DeleteCommand,
  type DeleteCommandInput,
  type DeleteCommandOutput,
  GetCommand,
  PutCommand,
  type PutCommandInput,
  type PutCommandOutput,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
  type UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import type * as z from 'zod';
import type { StoreContext } from './client.js';
import {
  ItemTooLargeError,
  MalformedRecordError,
  StoreError,
  StoreRequestError,
  StoreValidationError,
} from './errors.js';
import type { ItemKey } from './keys.js';

/** Shared plumbing for the repositories: error mapping, validation, consistent reads and paging. */

export function isConditionalCheckFailed(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

export type ConditionalResult<T> = { ok: true; value: T } | { ok: false };

/**
 * Runs a conditional write. A failed condition is an expected outcome and comes back as `{ ok: false }`;
 * every other failure becomes a StoreRequestError naming the operation and key.
 */
export async function conditional<T>(
  operation: string,
  key: ItemKey,
  run: () => Promise<T>,
): Promise<ConditionalResult<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (error) {
    if (isConditionalCheckFailed(error)) return { ok: false };
    throw wrap(operation, key, error);
  }
}

/** A conditional PutItem of one item at `key` in the repositories' table. */
export function conditionalPut(
  ctx: StoreContext,
  key: ItemKey,
  input: Omit<PutCommandInput, 'TableName'>,
): Promise<ConditionalResult<PutCommandOutput>> {
  return conditional('PutItem', key, () => ctx.client.send(new PutCommand({ TableName: ctx.tableName, ...input })));
}

/** A conditional UpdateItem of the item at `key` in the repositories' table. */
export function conditionalUpdate(
  ctx: StoreContext,
  key: ItemKey,
  input: Omit<UpdateCommandInput, 'TableName' | 'Key'>,
): Promise<ConditionalResult<UpdateCommandOutput>> {
  return conditional('UpdateItem', key, () =>
    ctx.client.send(new UpdateCommand({ TableName: ctx.tableName, Key: key, ...input })),
  );
}

/** A conditional DeleteItem of the item at `key` in the repositories' table. */
export function conditionalDelete(
  ctx: StoreContext,
  key: ItemKey,
  input: Omit<DeleteCommandInput, 'TableName' | 'Key'>,
): Promise<ConditionalResult<DeleteCommandOutput>> {
  return conditional('DeleteItem', key, () =>
    ctx.client.send(new DeleteCommand({ TableName: ctx.tableName, Key: key, ...input })),
  );
}

export async function request<T>(operation: string, target: ItemKey | string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw wrap(operation, target, error);
  }
}

function wrap(operation: string, target: ItemKey | string, error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const where = typeof target === 'string' ? target : `${target.PK} / ${target.SK}`;
  return new StoreRequestError(operation, where, { cause: error });
}

export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new StoreValidationError(what, result.error.issues, { cause: result.error });
  return result.data;
}

export function parseRecord<S extends z.ZodType>(schema: S, item: Record<string, unknown>): z.output<S> {
  const result = schema.safeParse(item);
  if (!result.success) {
    const key = { PK: String(item['PK'] ?? '?'), SK: String(item['SK'] ?? '?') };
    throw new MalformedRecordError(key, result.error.issues, { cause: result.error });
  }
  return result.data;
}

/** A validation failure that depends on more than the input itself (e.g. on the current time). */
export function invalid(what: string, path: string, message: string): StoreValidationError {
  return new StoreValidationError(what, [{ code: 'custom', path: [path], message }]);
}

/** Leaves headroom under DynamoDB's 400 KB item limit for attribute-name overhead. */
export const MAX_ITEM_BYTES = 350_000;

export function assertItemSize(item: Record<string, unknown>, what: string): void {
  const bytes = Buffer.byteLength(JSON.stringify(item), 'utf8');
  if (bytes > MAX_ITEM_BYTES) throw new ItemTooLargeError(what, bytes, MAX_ITEM_BYTES);
}

export async function getItem(ctx: StoreContext, key: ItemKey): Promise<Record<string, unknown> | undefined> {
  const out = await request('GetItem', key, () =>
    ctx.client.send(new GetCommand({ TableName: ctx.tableName, Key: key, ConsistentRead: true })),
  );
  return out.Item;
}

/** Pages through a query until `limit` items were collected or the results end. */
export async function queryItems(
  ctx: StoreContext,
  input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>,
  limit: number,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await request('Query', String(input.IndexName ?? ctx.tableName), () =>
      ctx.client.send(
        new QueryCommand({
          ...input,
          TableName: ctx.tableName,
          Limit: input.Limit ?? Math.min(Math.max(limit - items.length, 1), 1000),
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      ),
    );
    for (const item of out.Items ?? []) {
      if (items.length >= limit) break;
      items.push(item);
    }
    startKey = out.LastEvaluatedKey;
  } while (startKey !== undefined && items.length < limit);
  return items;
}
