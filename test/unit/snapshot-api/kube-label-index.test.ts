import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/cluster/types.js';
import { byCodePoint } from '../../../src/code-point-order.js';
import { buildCatalog } from '../../../src/snapshot-api/catalog.js';
import { labelCandidates } from '../../../src/snapshot-api/label-index.js';
import { matchesLabels, parseLabelSelector } from '../../../src/snapshot-api/selectors.js';
import { type SnapshotServer, startSnapshotServer } from '../../../src/snapshot-api/server.js';

function pod(namespace: string, name: string, labels?: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, ...(labels ? { labels } : {}) } };
}

// Out of key order on purpose, across namespaces (`sh` is a prefix of `shop`), with objects that have no labels,
// empty labels, empty values, numeric and non-numeric values for Gt/Lt, and keys with a prefix.
const pods: KubeObject[] = [
  pod('shop', 'web-b', { app: 'web', tier: 'frontend', version: '3' }),
  pod('payments', 'api-a', { app: 'api', tier: 'backend', version: '10', canary: 'true' }),
  pod('shop', 'plain'),
  pod('shop', 'web-a', { app: 'web', tier: 'frontend', version: 'x' }),
  pod('sh', 'web-z', { app: 'web', 'app.kubernetes.io/component': 'controller' }),
  pod('shop', 'batch-1', { app: 'batch', empty: '', version: '-2' }),
  pod('payments', 'bare', {}),
  pod('shop', 'api-c', { app: 'api', tier: 'backend', canary: 'false', version: '2' }),
  pod('payments', 'web-c', { app: 'web', 'app.kubernetes.io/component': 'controller', version: '1' }),
  pod('kube-system', 'dns-1', { 'k8s-app': 'kube-dns' }),
];

const SELECTORS = [
  '',
  'app=web',
  'app==web',
  'app=nope',
  'app in (web,api)',
  'app in (batch, web, api, nope)',
  'app',
  'app!=web',
  'app notin (web,api)',
  '!app',
  'version>2',
  'version<3',
  'version>-3',
  'app=web,tier=frontend',
  'tier=frontend,app=web',
  'app in (web,api),!canary',
  'app,version>1',
  'tier=frontend,app!=web',
  'app!=api,!tier',
  'empty=',
  'empty',
  'missing',
  'missing=x',
  '!missing',
  'missing notin (x)',
  'canary,app=web',
  'app.kubernetes.io/component=controller',
  'app.kubernetes.io/component=controller,app=web,version<5',
  'k8s-app=kube-dns',
];

/** What a list answers when every object is tested: the objects in `namespace/name` order that the selector matches. */
function fullScan(selector: string, namespace?: string): string[] {
  const parsed = parseLabelSelector(selector);
  return pods
    .filter((p) => namespace === undefined || p.metadata.namespace === namespace)
    .filter((p) => matchesLabels(parsed, p.metadata.labels))
    .map((p) => `${p.metadata.namespace}/${p.metadata.name}`)
    .sort(byCodePoint);
}

describe('label-selected lists', () => {
  let server: SnapshotServer;

  beforeAll(async () => {
    server = await startSnapshotServer({ objects: pods });
  });

  afterAll(async () => {
    await server.close();
  });

  async function listed(path: string, selector: string): Promise<string[]> {
    const response = await fetch(`${server.url}${path}?labelSelector=${encodeURIComponent(selector)}`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { items: KubeObject[] };
    return body.items.map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
  }

  it.each(SELECTORS)('answers %j across all namespaces as testing every pod would', async (selector) => {
    expect(await listed('/api/v1/pods', selector)).toEqual(fullScan(selector));
  });

  it.each(SELECTORS)('answers %j in one namespace as testing every pod would', async (selector) => {
    for (const namespace of ['shop', 'sh', 'payments', 'nowhere']) {
      expect(await listed(`/api/v1/namespaces/${namespace}/pods`, selector)).toEqual(fullScan(selector, namespace));
    }
  });

  it('answers the same query again the same, and pages through a narrowed list in order', async () => {
    expect(await listed('/api/v1/pods', 'app in (web,api)')).toEqual(fullScan('app in (web,api)'));
    const first = await fetch(`${server.url}/api/v1/pods?labelSelector=app&limit=3`);
    const page = (await first.json()) as { items: KubeObject[]; metadata: { continue: string } };
    const rest = await fetch(`${server.url}/api/v1/pods?labelSelector=app&continue=${page.metadata.continue}`);
    const names = [...page.items, ...((await rest.json()) as { items: KubeObject[] }).items].map(
      (p) => `${p.metadata.namespace}/${p.metadata.name}`,
    );
    expect(names).toEqual(fullScan('app'));
  });
});

describe('label candidates', () => {
  const catalog = buildCatalog(pods, { now: new Date('2024-05-14T10:00:00Z') });
  const candidates = (selector: string, namespace?: string) =>
    labelCandidates(parseLabelSelector(selector), (key) => catalog.labelKey('pods', namespace, key))?.map(
      (o) => `${o.namespace}/${o.name}`,
    );

  it('narrows by the requirement met by the fewest objects, in catalog order', () => {
    expect(candidates('app=web,k8s-app=kube-dns')).toEqual(['kube-system/dns-1']);
    expect(candidates('app,app=nope')).toEqual([]);
    expect(candidates('app in (web,api),tier=backend')).toEqual(['payments/api-a', 'shop/api-c']);
    expect(candidates('app in (api,web)')).toEqual([
      'payments/api-a',
      'payments/web-c',
      'sh/web-z',
      'shop/api-c',
      'shop/web-a',
      'shop/web-b',
    ]);
    expect(candidates('version>2')).toEqual(['payments/api-a', 'shop/web-b']);
    expect(candidates('app=web', 'shop')).toEqual(['shop/web-a', 'shop/web-b']);
  });

  it('leaves the candidates to other requirements: the caller still tests the whole selector', () => {
    expect(candidates('app=api,canary!=true')).toEqual(['payments/api-a', 'shop/api-c']);
  });

  it('does not narrow by requirements that objects without the key meet', () => {
    for (const selector of ['', 'app!=web', 'app notin (web)', '!app', 'app!=web,!missing']) {
      expect(candidates(selector)).toBeUndefined();
    }
  });

  it('finds nothing for a key no object carries', () => {
    expect(candidates('missing')).toEqual([]);
    expect(candidates('app=web', 'nowhere')).toEqual([]);
  });
});
