import { afterEach, describe, expect, it } from 'vitest';
import type { ReadScope } from '../../../src/cluster/read-only-guard.js';
import { createClusterReader } from '../../../src/cluster/reader.js';
import { ReadOnlyViolationError } from '../../../src/cluster/types.js';
import { type FakeApi, kubeconfigFor, sendJson, startFakeApi } from '../../support/cluster-fake-api.js';

/**
 * A reader created with a scope refuses, before any request leaves the process, every read of a namespace outside
 * it, and turns a list across all namespaces into lists of the allowed ones. The fake API server records what
 * actually arrived.
 */

let api: FakeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const NAMESPACES = ['shop', 'shop-db', 'payments', 'kube-system', 'openshift-dns', 'team-a-web'];

async function serve(scope: ReadScope) {
  api = await startFakeApi((req, res) => {
    const match = /^\/api\/v1(?:\/namespaces\/([^/]+))?\/([a-z]+)(?:\/([^/]+))?(\/log)?$/.exec(req.path);
    const [, namespace, plural, name, log] = match ?? [];
    if (log !== undefined) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`log of ${name} in ${namespace}\n`);
      return;
    }
    if (plural === 'namespaces') {
      if (name !== undefined) {
        sendJson(res, 200, { kind: 'Namespace', apiVersion: 'v1', metadata: { name } });
        return;
      }
      sendJson(res, 200, {
        kind: 'NamespaceList',
        apiVersion: 'v1',
        metadata: {},
        items: NAMESPACES.map((n) => ({ metadata: { name: n } })),
      });
      return;
    }
    const where = namespace === undefined ? NAMESPACES : [namespace];
    sendJson(res, 200, {
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: {},
      items: where.map((ns) => ({ metadata: { name: `settings`, namespace: ns } })),
    });
  });
  const reader = createClusterReader({ kubeconfig: { yaml: kubeconfigFor(api.url) }, requestTimeoutMs: 2_000, scope });
  return { api, reader };
}

async function refusal(read: Promise<unknown>): Promise<ReadOnlyViolationError> {
  const error = await read.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ReadOnlyViolationError);
  return error as ReadOnlyViolationError;
}

describe('a reader bound to a scope', () => {
  it('refuses reads of other namespaces before sending, and says what it would have read', async () => {
    const { api, reader } = await serve({ namespaces: ['shop', 'shop-db'] });
    const logs = await refusal(reader.logs({ namespace: 'payments', pod: 'postgres-0' }));
    expect(logs.reason).toBe('refused-by-policy');
    expect(logs.message).toMatch(/would have read the logs of pod postgres-0 in namespace payments/);
    expect(logs.message).toMatch(/outside this channel's namespaces \(shop, shop-db\)/);
    await refusal(reader.list({ kind: 'configmaps', namespace: 'payments' }));
    await refusal(reader.get({ kind: 'configmaps', namespace: 'kube-system', name: 'coredns' }));
    await refusal(reader.get({ kind: 'namespaces', name: 'payments' }));
    expect(api.requests).toEqual([]);

    expect(await reader.logs({ namespace: 'shop', pod: 'web-0' })).toBe('log of web-0 in shop\n');
    expect(api.requests.map((r) => r.path)).toEqual(['/api/v1/namespaces/shop/pods/web-0/log']);
  });

  it('lists across the allowed namespaces only, one list each', async () => {
    const { api, reader } = await serve({ namespaces: ['shop', 'shop-db'] });
    const items = await reader.list({ kind: 'configmaps' });
    expect(items.map((i) => i.metadata.namespace)).toEqual(['shop', 'shop-db']);
    expect(api.requests.map((r) => r.path)).toEqual([
      '/api/v1/namespaces/shop/configmaps',
      '/api/v1/namespaces/shop-db/configmaps',
    ]);
    const namespaces = await reader.list({ kind: 'namespaces' });
    expect(namespaces.map((n) => n.metadata.name)).toEqual(['shop', 'shop-db']);
  });

  it('reads platform namespaces only where the scope names them, never under "*"', async () => {
    const { reader } = await serve({ namespaces: ['*'] });
    const refused = await refusal(reader.logs({ namespace: 'kube-system', pod: 'coredns-1' }));
    expect(refused.message).toMatch(/a platform namespace/);
    await refusal(reader.list({ kind: 'configmaps', namespace: 'openshift-dns' }));
    const items = await reader.list({ kind: 'configmaps' });
    expect(items.map((i) => i.metadata.namespace)).toEqual(['shop', 'shop-db', 'payments', 'team-a-web']);

    const platform = await serve({ namespaces: ['team-a-*', 'openshift-*'] });
    const listed = await platform.reader.list({ kind: 'configmaps' });
    expect(listed.map((i) => i.metadata.namespace)).toEqual(['openshift-dns', 'team-a-web']);
    await refusal(platform.reader.logs({ namespace: 'shop', pod: 'web-0' }));
  });

  it('refuses a scope entry that is neither a namespace nor a pattern', async () => {
    await expect(serve({ namespaces: ['shop/../kube-system'] })).rejects.toThrow(ReadOnlyViolationError);
  });
});
