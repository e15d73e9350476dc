import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertReadPath, getTarget, listTarget, logTarget } from '../../../src/cluster/read-only-guard.js';
import { createClusterReader, type KubeClusterReader } from '../../../src/cluster/reader.js';
import {
  type GetQuery,
  type ListQuery,
  type LogQuery,
  READABLE_KINDS,
  ReadOnlyViolationError,
} from '../../../src/cluster/types.js';
import { type FakeApi, kubeconfigFor, sendJson, startFakeApi } from '../../support/cluster-fake-api.js';

let api: FakeApi;
let reader: KubeClusterReader;

beforeAll(async () => {
  api = await startFakeApi((_req, res) => sendJson(res, 200, { items: [] }));
  reader = createClusterReader({ kubeconfig: { yaml: kubeconfigFor(api.url) } });
});
afterAll(() => api.close());

async function refused(promise: Promise<unknown>): Promise<ReadOnlyViolationError> {
  const before = api.requests.length;
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ReadOnlyViolationError);
  expect((error as ReadOnlyViolationError).reason).toBe('refused-by-policy');
  expect(api.requests.length).toBe(before);
  return error as ReadOnlyViolationError;
}

describe('read-only guard: Secrets can never be requested', () => {
  it('Secrets are not a readable kind', () => {
    expect(READABLE_KINDS as readonly string[]).not.toContain('secrets');
  });

  const kindTricks: unknown[] = [
    'secrets',
    'Secret',
    'secret',
    'SECRETS',
    ' secrets',
    'secrets ',
    'v1/secrets',
    'core/v1/secrets',
    'pods/../secrets',
    '../secrets',
    'pods/../../secrets',
    'secrets?x=pods',
    'serviceaccounts',
    'serviceaccounts/token',
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    '',
    undefined,
    null,
    42,
    { plural: 'secrets' },
  ];
  for (const kind of kindTricks) {
    it(`refuses list and get of kind ${JSON.stringify(kind)} with zero requests sent`, async () => {
      const error = await refused(reader.list({ kind, namespace: 'shop' } as unknown as ListQuery));
      expect(error.message).toContain('not a readable kind');
      await refused(reader.list({ kind } as unknown as ListQuery));
      await refused(reader.get({ kind, namespace: 'shop', name: 'db' } as unknown as GetQuery));
    });
  }

  it('says so when Secrets are asked for', async () => {
    const error = await refused(reader.list({ kind: 'secrets', namespace: 'shop' } as unknown as ListQuery));
    expect(error.message).toContain('Secrets are never read');
  });

  const nameTricks = [
    '../secrets/x',
    '..',
    '.',
    'x/../../secrets/db',
    'web/../../secrets/db',
    'x%2F..%2Fsecrets%2Fdb',
    'x?watch=true',
    'x#frag',
    'web\n',
    'Web',
    '',
    'a'.repeat(254),
    '-web',
  ];
  for (const name of nameTricks) {
    it(`refuses the object name ${JSON.stringify(name.slice(0, 30))}`, async () => {
      await refused(reader.get({ kind: 'pods', namespace: 'shop', name }));
      await refused(reader.get({ kind: 'configmaps', namespace: 'shop', name }));
      await refused(reader.logs({ namespace: 'shop', pod: name }));
    });
  }

  const namespaceTricks = [
    '../kube-system/secrets',
    'kube-system/secrets',
    'shop/secrets/db',
    'Shop',
    'a.b',
    'a'.repeat(64),
  ];
  for (const namespace of namespaceTricks) {
    it(`refuses the namespace ${JSON.stringify(namespace.slice(0, 30))}`, async () => {
      await refused(reader.list({ kind: 'pods', namespace }));
      await refused(reader.get({ kind: 'pods', namespace, name: 'web' }));
      await refused(reader.logs({ namespace, pod: 'web' }));
    });
  }

  const selectorTricks = [
    'metadata.name=x&watch=true',
    'metadata.name=x&limit=1000000',
    'a=b#',
    'a=b?c',
    'a=%2E%2E',
    'a=b\nGET /api/v1/secrets',
    'x'.repeat(2049),
  ];
  for (const selector of selectorTricks) {
    it(`refuses the selector ${JSON.stringify(selector.slice(0, 30))}`, async () => {
      await refused(reader.list({ kind: 'events', namespace: 'shop', fieldSelector: selector }));
      await refused(reader.list({ kind: 'pods', namespace: 'shop', labelSelector: selector }));
    });
  }

  it('refuses bad log parameters', async () => {
    const bad: LogQuery[] = [
      { namespace: 'shop', pod: 'web', container: '../../secrets' },
      { namespace: 'shop', pod: 'web', container: 'App' },
      { namespace: 'shop', pod: 'web', tailLines: -1 },
      { namespace: 'shop', pod: 'web', tailLines: 1.5 },
      { namespace: 'shop', pod: 'web', tailLines: Number.NaN },
      { namespace: 'shop', pod: 'web', tailLines: 1e9 },
      { namespace: 'shop', pod: 'web', previous: 'true' as unknown as boolean },
    ];
    for (const query of bad) await refused(reader.logs(query));
  });

  it('refuses a namespaced get without a namespace and a bad maxItems', async () => {
    await refused(reader.get({ kind: 'pods', name: 'web' }));
    await refused(reader.list({ kind: 'pods', namespace: 'shop', maxItems: 0 }));
    await refused(reader.list({ kind: 'pods', namespace: 'shop', maxItems: 2.5 }));
  });

  it('the reader offers reads only', () => {
    expect(Object.keys(reader).sort()).toEqual(['context', 'get', 'list', 'logs', 'metrics', 'server', 'table']);
  });

  it('legitimate reads still pass, and every one is a GET', async () => {
    await reader.list({ kind: 'events', namespace: 'shop', fieldSelector: 'involvedObject.name=web-1,type!=Normal' });
    await reader.list({ kind: 'pods', namespace: 'shop', labelSelector: 'app in (web),!canary' });
    expect(api.requests.length).toBeGreaterThanOrEqual(2);
    expect(api.requests.every((r) => r.method === 'GET')).toBe(true);
    expect(api.requests.some((r) => r.path.includes('secret'))).toBe(false);
  });
});

describe('read-only guard: target shapes', () => {
  it('builds list, get and log targets', () => {
    expect(listTarget({ kind: 'ingresses', namespace: 'shop' }).path).toBe(
      '/apis/networking.k8s.io/v1/namespaces/shop/ingresses',
    );
    expect(getTarget({ kind: 'namespaces', name: 'shop' }).path).toBe('/api/v1/namespaces/shop');
    expect(getTarget({ kind: 'persistentvolumes', name: 'pvc-1.data', namespace: 'shop' }).path).toBe(
      '/api/v1/persistentvolumes/pvc-1.data',
    );
    expect(logTarget({ namespace: 'shop', pod: 'web-1', container: 'app' }).path).toBe(
      '/api/v1/namespaces/shop/pods/web-1/log',
    );
  });

  it('the last-line path check admits reads of allowed kinds only', () => {
    const allowed = [
      '/api/v1/namespaces/shop/pods',
      '/api/v1/namespaces/shop/pods/web-1',
      '/api/v1/namespaces/shop/pods/web-1/log',
      '/api/v1/pods',
      '/api/v1/nodes/n1',
      '/api/v1/namespaces',
      '/api/v1/namespaces/shop',
      '/apis/apps/v1/namespaces/shop/deployments/web',
      '/apis/route.openshift.io/v1/namespaces/shop/routes',
    ];
    for (const path of allowed) expect(() => assertReadPath(path), path).not.toThrow();
    const refusedPaths = [
      '/api/v1/namespaces/shop/secrets',
      '/api/v1/namespaces/shop/secrets/db',
      '/api/v1/secrets',
      '/api/v1/namespaces/shop/pods/web-1/exec',
      '/api/v1/namespaces/shop/pods/web-1/attach',
      '/api/v1/namespaces/shop/pods/web-1/portforward',
      '/api/v1/namespaces/shop/pods/web-1/eviction',
      '/api/v1/namespaces/shop/serviceaccounts/default/token',
      '/apis/apps/v1/namespaces/shop/deployments/web/scale',
      '/api/v1/namespaces/shop/configmaps/../secrets/db',
      '/api/v1/nodes/n1/proxy',
      '/apis/apps/v1/namespaces/shop/pods',
      '/api/v1/namespaces/shop/deployments',
      '/api/v1/namespaces/shop/pods//',
      'api/v1/pods',
    ];
    for (const path of refusedPaths) expect(() => assertReadPath(path), path).toThrow(ReadOnlyViolationError);
  });

  it('the path check refuses query parameters outside the read set', () => {
    for (const key of ['watch', 'dryRun', 'fieldManager', 'propagationPolicy', 'resourceVersion']) {
      expect(() => assertReadPath('/api/v1/pods', new URLSearchParams({ [key]: '1' }))).toThrow(ReadOnlyViolationError);
    }
  });
});
