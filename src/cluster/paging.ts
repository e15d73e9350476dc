import { createHash } from 'node:crypto';
import { ClusterReadError, type KubeObject } from './types.js';

/**
 * Chunked lists as the API server defines them: each page asks for `limit` objects and passes the previous page's
 * `continue` token. A continue token can expire (410 Gone, reason Expired) when the list changes faster than it is
 * paged; the list then restarts once from the beginning, because mixing pages from two snapshots of the collection
 * would double-count or miss objects. A second expiry gives up.
 *
 * A continue token names a position that only moves forward, so a token seen before means the server is going in
 * circles; the list stops there with an error instead of collecting the same pages forever.
 */

export interface Page {
  items: KubeObject[];
  /** The continue token; absent or empty on the last page. */
  continueToken?: string | undefined;
}

export type FetchPage = (request: { limit: number; continueToken: string | undefined }) => Promise<Page>;

export interface PagingOptions {
  pageSize: number;
  /** Stop once this many objects are collected. */
  maxItems?: number | undefined;
  /** Used in the message when the list expires twice. */
  describe: string;
}

/** The server broke the paging protocol (a repeated or oversized continue token): the list cannot be trusted whole. */
export class ContinueTokenError extends ClusterReadError {}

/** Real tokens are a few hundred bytes (an encoded resource version and key); anything far longer is not one. */
export const MAX_CONTINUE_TOKEN_LENGTH = 8192;

export async function collectPages(fetchPage: FetchPage, options: PagingOptions): Promise<KubeObject[]> {
  if (!Number.isSafeInteger(options.pageSize) || options.pageSize < 1) {
    throw new RangeError(`pageSize must be a positive integer, got ${options.pageSize}`);
  }
  const max = options.maxItems ?? Number.POSITIVE_INFINITY;
  let restarted = false;
  for (;;) {
    try {
      return await collectOnce(fetchPage, options.pageSize, max, options.describe);
    } catch (error) {
      if (!isExpired(error)) throw error;
      if (restarted) {
        throw new ClusterReadError(
          `could not list ${options.describe}: the list changed faster than it could be paged (410 Gone twice)`,
          'server-error',
          410,
          { cause: error },
        );
      }
      restarted = true;
    }
  }
}

async function collectOnce(
  fetchPage: FetchPage,
  pageSize: number,
  max: number,
  describe: string,
): Promise<KubeObject[]> {
  const items: KubeObject[] = [];
  // Digests, not the tokens: memory stays small however long the tokens a server sends.
  const seen = new Set<string>();
  let pages = 0;
  let continueToken: string | undefined;
  do {
    const limit = Math.min(pageSize, max - items.length);
    const page = await fetchPage({ limit, continueToken });
    pages++;
    for (const item of page.items) {
      if (items.length >= max) break;
      items.push(item);
    }
    continueToken = page.continueToken || undefined;
    if (continueToken === undefined || items.length >= max) break;
    if (continueToken.length > MAX_CONTINUE_TOKEN_LENGTH) {
      throw new ContinueTokenError(
        `could not list ${describe}: the API server sent a continue token of ${continueToken.length} characters ` +
          `(page ${pages}); paging stopped`,
        'invalid',
      );
    }
    const digest = createHash('sha256').update(continueToken).digest('base64');
    if (seen.has(digest)) {
      throw new ContinueTokenError(
        `could not list ${describe}: the API server sent a continue token it had already sent (page ${pages}, ` +
          `${items.length} objects so far); paging stopped instead of reading the same pages again`,
        'invalid',
      );
    }
    seen.add(digest);
  } while (continueToken !== undefined);
  return items;
}

function isExpired(error: unknown): boolean {
  return error instanceof ClusterReadError && error.status === 410;
}
