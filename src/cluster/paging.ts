import { ClusterReadError, type KubeObject } from './types.js';

/**
 * Chunked lists as the API server defines them: each page asks for `limit` objects and passes the previous page's
 * `continue` token. A continue token can expire (410 Gone, reason Expired) when the list changes faster than it is
 * paged; the list then restarts once from the beginning, because mixing pages from two snapshots of the collection
 * would double-count or miss objects. A second expiry gives up.
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

export async function collectPages(fetchPage: FetchPage, options: PagingOptions): Promise<KubeObject[]> {
  if (!Number.isSafeInteger(options.pageSize) || options.pageSize < 1) {
    throw new RangeError(`pageSize must be a positive integer, got ${options.pageSize}`);
  }
  const max = options.maxItems ?? Number.POSITIVE_INFINITY;
  let restarted = false;
  for (;;) {
    try {
      return await collectOnce(fetchPage, options.pageSize, max);
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

async function collectOnce(fetchPage: FetchPage, pageSize: number, max: number): Promise<KubeObject[]> {
  const items: KubeObject[] = [];
  let continueToken: string | undefined;
  do {
    const limit = Math.min(pageSize, max - items.length);
    const page = await fetchPage({ limit, continueToken });
    for (const item of page.items) {
      if (items.length >= max) break;
      items.push(item);
    }
    continueToken = page.continueToken || undefined;
  } while (continueToken !== undefined && items.length < max);
  return items;
}

function isExpired(error: unknown): boolean {
  return error instanceof ClusterReadError && error.status === 410;
}
