import { createHash } from 'node:crypto';
import { ResponseTooLargeError } from './bounded-get.js';
import { ClusterReadError, type KubeObject } from './types.js';

/**
 * Chunked lists as the API server defines them: each page asks for `limit` objects and passes the previous page's
 * `continue` token. A continue token can expire (410 Gone, reason Expired) when the list changes faster than it is
 * paged; the list then restarts once from the beginning, because mixing pages from two snapshots of the collection
 * would double-count or miss objects. A second expiry gives up.
 *
 * A continue token names a position that only moves forward, so a token seen before means the server is going in
 * circles; the list stops there with an error instead of collecting the same pages forever.
 *
 * Pages are large (DEFAULT_PAGE_SIZE in reader.ts) because each one costs a round trip, and a list of thousands of
 * pods otherwise spends most of its time waiting. A page whose answer does not fit the byte limit for one response
 * (objects far larger than usual) is asked for again at half the size, from the same continue token, and the rest of
 * the list keeps the smaller size. At most MAX_PAGE_SHRINKS times per list: an answer that never fits (a server
 * streaming without end) must not cost more than a few reads up to the limit before the list fails.
 */

export interface Page {
  items: KubeObject[];
  /** The continue token; absent or empty on the last page. */
  continueToken?: string | undefined;
}

/**
 * Fetches one page. A page that is too large for the byte limit must reject with an error whose cause is a
 * ResponseTooLargeError (as the reader does), so that it is asked for again in a smaller size.
 */
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
const MAX_CONTINUE_TOKEN_LENGTH = 8192;

/** Halvings of the page size per list when pages do not fit the byte limit: 2,000 down to kubectl's 500. */
const MAX_PAGE_SHRINKS = 2;

interface PageSize {
  pageSize: number;
  shrinks: number;
}

export async function collectPages(fetchPage: FetchPage, options: PagingOptions): Promise<KubeObject[]> {
  if (!Number.isSafeInteger(options.pageSize) || options.pageSize < 1) {
    throw new RangeError(`pageSize must be a positive integer, got ${options.pageSize}`);
  }
  const max = options.maxItems ?? Number.POSITIVE_INFINITY;
  // Shrunk when a page does not fit the byte limit; a restarted list keeps the size that fits.
  const size: PageSize = { pageSize: options.pageSize, shrinks: 0 };
  let restarted = false;
  for (;;) {
    try {
      return await collectOnce(fetchPage, size, max, options.describe);
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

async function collectOnce(fetchPage: FetchPage, size: PageSize, max: number, describe: string): Promise<KubeObject[]> {
  const items: KubeObject[] = [];
  // Digests, not the tokens: memory stays small however long the tokens a server sends.
  const seen = new Set<string>();
  let pages = 0;
  let continueToken: string | undefined;
  do {
    const page = await fetchFitting(fetchPage, size, { max: max - items.length, continueToken });
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

/** One page, asked for again at half the size while its answer does not fit the byte limit. */
async function fetchFitting(
  fetchPage: FetchPage,
  size: PageSize,
  request: { max: number; continueToken: string | undefined },
): Promise<Page> {
  for (;;) {
    const limit = Math.min(size.pageSize, request.max);
    try {
      return await fetchPage({ limit, continueToken: request.continueToken });
    } catch (error) {
      if (!isTooLarge(error) || limit <= 1 || size.shrinks >= MAX_PAGE_SHRINKS) throw error;
      size.pageSize = Math.floor(limit / 2);
      size.shrinks++;
    }
  }
}

function isExpired(error: unknown): boolean {
  return error instanceof ClusterReadError && error.status === 410;
}

function isTooLarge(error: unknown): boolean {
  return error instanceof Error && error.cause instanceof ResponseTooLargeError;
}
