import { describe, expect, it } from 'vitest';
import { collectPages, type FetchPage, type Page } from '../../src/cluster/paging.js';
import { ClusterReadError, type KubeObject } from '../../src/cluster/types.js';

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

  it('rejects a page size that is not a positive integer', async () => {
    const { fetch } = pages();
    await expect(collectPages(fetch, { pageSize: 0, describe: 'pods' })).rejects.toThrow(RangeError);
  });
});
