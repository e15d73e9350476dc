import * as z from 'zod';
import { badRequest, continueExpired } from './status.js';

/**
 * Continue tokens shaped like kube-apiserver's (base64 JSON of the list's resourceVersion and the key to resume
 * after). Clients must treat them as opaque; the server rejects a token that is not its own the way the real one
 * does: malformed → 400 BadRequest, stale (another snapshot, or older than the configured lifetime) → 410 Expired.
 */

const TokenSchema = z.object({
  v: z.literal('meta.k8s.io/v1'),
  rv: z.string().min(1),
  start: z.string(),
  issued: z.number().int().nonnegative(),
});
type Token = z.infer<typeof TokenSchema>;

export interface ContinueContext {
  /** The resourceVersion of the snapshot being served; tokens from any other version are expired. */
  resourceVersion: string;
  /** Tokens older than this are expired (the real server forgets them after etcd compaction). */
  ttlMs?: number;
  now: () => number;
}

export function encodeContinue(ctx: ContinueContext, lastKey: string): string {
  const token: Token = { v: 'meta.k8s.io/v1', rv: ctx.resourceVersion, start: `${lastKey}\u0000`, issued: ctx.now() };
  return Buffer.from(JSON.stringify(token), 'utf8').toString('base64url');
}

/** Decode a token into the key the next page starts at (inclusive). */
export function decodeContinue(ctx: ContinueContext, token: string): string {
  let parsed: Token;
  try {
    const json: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    parsed = TokenSchema.parse(json);
  } catch {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
  if (parsed.rv !== ctx.resourceVersion) throw continueExpired();
  if (ctx.ttlMs !== undefined && ctx.now() - parsed.issued > ctx.ttlMs) throw continueExpired();
  return parsed.start;
}

export interface Page<T> {
  items: T[];
  continueToken?: string;
  /** How many matching items follow this page (kube-apiserver's `remainingItemCount`). */
  remaining?: number;
}

/**
 * Cut one page out of `items` (already filtered, and sorted by `keyOf` as `<` orders strings). `limit` ≤ 0 or absent
 * returns everything, as the real server does.
 */
export function paginate<T>(
  ctx: ContinueContext,
  items: readonly T[],
  keyOf: (item: T) => string,
  options: { limit?: number; continueToken?: string },
): Page<T> {
  let startIndex = 0;
  if (options.continueToken) {
    const start = decodeContinue(ctx, options.continueToken);
    // The first item at or after `start`, found by halving: the items are in the order `<` gives their keys.
    let high = items.length;
    while (startIndex < high) {
      const middle = (startIndex + high) >>> 1;
      if (keyOf(items[middle] as T) < start) startIndex = middle + 1;
      else high = middle;
    }
  }
  const limit = options.limit ?? 0;
  const left = items.length - startIndex;
  // One copy of the page alone: a list of thousands read in pages would otherwise copy what follows each page too.
  if (limit <= 0 || left <= limit) return { items: items.slice(startIndex) };
  const page = items.slice(startIndex, startIndex + limit);
  const last = page[page.length - 1] as T;
  return { items: page, continueToken: encodeContinue(ctx, keyOf(last)), remaining: left - limit };
}
