import { describe, expect, it } from 'vitest';
import { ResponseTooLargeError } from '../../../src/cluster/bounded-get.js';
import { collectPages, type FetchPage, type Page } from '../../../src/cluster/paging.js';
import { ClusterReadError, type KubeObject } from '../../../src/cluster/types.js';

const obj = (name: string): KubeObject => ({ kind: 'Pod', apiVersion: 'v1', metadata: { name } });

function pages(...contents: Array<[string[], string | undefined]>): { fetch: FetchPage; calls: unknown[] } {
  const calls: unknown[] = [];
  let index = 0;
  return {
    calls,
    fetch: async (request) => {
      calls.push(request);
      const [names, continueToken] = contents[index++] ?? [[], undefined];
      return { items: names.map(obj), continueToken } satisfies Page;
    },
  };
}

const gone = () => new ClusterReadError('expired', 'invalid', 410);
const tooLarge = () =>
  new ClusterReadError('response over the limit', 'invalid', undefined, { cause: new ResponseTooLargeError(1024) });

describe('collectPages', () => {
  it('follows continue tokens to the end; an empty token ends the list', async () => {
    const { fetch, calls } = pages([['a', 'b'], 't1'], [['c'], '']);
    const items = await collectPages(fetch, { pageSize: 2, describe: 'pods' });
    expect(items.map((o) => o.metadata.name)).toEqual(['a', 'b', 'c']);
    expect(calls).toEqual([
      { limit: 2, continueToken: undefined },
      { limit: 2, continueToken: 't1' },
    ]);
  });

  it('never returns more than maxItems even if the server sends more', async () => {
    const { fetch, calls } = pages([['a', 'b', 'c', 'd'], 't1']);
    const items = await collectPages(fetch, { pageSize: 10, maxItems: 3, describe: 'pods' });
    expect(items.map((o) => o.metadata.name)).toEqual(['a', 'b', 'c']);
    expect(calls).toEqual([{ limit: 3, continueToken: undefined }]);
  });

  it('restarts once on 410 and discards the pages of the expired list', async () => {
    let call = 0;
    const fetch: FetchPage = async ({ continueToken }) => {
      call++;
      if (call === 2) throw gone();
      return continueToken ? { items: [obj('b')] } : { items: [obj('a')], continueToken: 'next' };
    };
    const items = await collectPages(fetch, { pageSize: 1, describe: 'pods' });
    expect(items.map((o) => o.metadata.name)).toEqual(['a', 'b']);
    expect(call).toBe(4);
  });

  it('fails on the second 410 with a message naming the list', async () => {
    const fetch: FetchPage = async ({ continueToken }) => {
      if (continueToken) throw gone();
      return { items: [obj('a')], continueToken: 'next' };
    };
    const error = await collectPages(fetch, { pageSize: 1, describe: 'events in namespace shop' }).catch((e) => e);
    expect(error).toBeInstanceOf(ClusterReadError);
    expect(error.message).toContain('events in namespace shop');
    expect(error.status).toBe(410);
  });

  it('does not retry other failures', async () => {
    let calls = 0;
    const fetch: FetchPage = async () => {
      calls++;
      throw new ClusterReadError('forbidden', 'forbidden', 403);
    };
    await expect(collectPages(fetch, { pageSize: 5, describe: 'pods' })).rejects.toMatchObject({ reason: 'forbidden' });
    expect(calls).toBe(1);
  });

  it('asks for a page that does not fit the byte limit again at half the size, and keeps that size', async () => {
    const names = Array.from({ length: 10 }, (_, i) => `p${i}`);
    const calls: Array<{ limit: number; continueToken: string | undefined }> = [];
    // Pages of more than 3 objects are too large; the token is the index of the next object.
    const fetch: FetchPage = async (request) => {
      calls.push(request);
      if (request.limit > 3) throw tooLarge();
      const start = Number(request.continueToken ?? 0);
      const end = Math.min(names.length, start + request.limit);
      return { items: names.slice(start, end).map(obj), continueToken: end < names.length ? String(end) : undefined };
    };
    const items = await collectPages(fetch, { pageSize: 8, describe: 'pods' });
    expect(items.map((o) => o.metadata.name)).toEqual(names);
    expect(calls).toEqual([
      { limit: 8, continueToken: undefined },
      { limit: 4, continueToken: undefined },
      { limit: 2, continueToken: undefined },
      { limit: 2, continueToken: '2' },
      { limit: 2, continueToken: '4' },
      { limit: 2, continueToken: '6' },
      { limit: 2, continueToken: '8' },
    ]);
  });

  it('fails with the size error when a single object does not fit the byte limit', async () => {
    const calls: number[] = [];
    const fetch: FetchPage = async ({ limit }) => {
      calls.push(limit);
      throw tooLarge();
    };
    const error = await collectPages(fetch, { pageSize: 3, describe: 'pods' }).catch((e) => e);
    expect(error).toBeInstanceOf(ClusterReadError);
    expect(error.cause).toBeInstanceOf(ResponseTooLargeError);
    expect(calls).toEqual([3, 1]);
  });

  it('stops shrinking after a few halvings, so an answer that never fits costs a bounded number of reads', async () => {
    const calls: number[] = [];
    const fetch: FetchPage = async ({ limit }) => {
      calls.push(limit);
      throw tooLarge();
    };
    const error = await collectPages(fetch, { pageSize: 2000, describe: 'pods' }).catch((e) => e);
    expect(error.cause).toBeInstanceOf(ResponseTooLargeError);
    expect(calls).toEqual([2000, 1000, 500]);
  });

  it('rejects a page size that is not a positive integer', async () => {
    const { fetch } = pages();
    await expect(collectPages(fetch, { pageSize: 0, describe: 'pods' })).rejects.toThrow(RangeError);
  });
});
