import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/cluster/types.js';
import type { SnapshotServer } from '../../../src/snapshot-api/server.js';
import { startSnapshotServer } from '../../../src/snapshot-api/server.js';
import { startDemoServer } from '../../support/kube-demo.js';

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

let server: SnapshotServer;

beforeAll(async () => {
  server = await startDemoServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  server.setFaults([]);
});

// biome-ignore lint/suspicious/noExplicitAny: tests read raw API JSON
async function get(path: string, init: RequestInit = {}): Promise<{ status: number; body: any; type: string }> {
  const res = await fetch(`${server.url}${path}`, init);
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  return { status: res.status, body: type.startsWith('application/json') ? JSON.parse(text) : text, type };
}

const names = (body: { items: KubeObject[] }): string[] => body.items.map((o) => o.metadata.name);

describe('discovery', () => {
  it('answers /version, /api, /apis and every group version', async () => {
    expect((await get('/version')).body).toMatchObject({ major: '1', minor: '32' });
    expect((await get('/api')).body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const groups = (await get('/apis')).body;
    expect(groups.kind).toBe('APIGroupList');
    expect(groups.groups.map((g: { name: string }) => g.name)).toEqual(
      expect.arrayContaining(['apps', 'discovery.k8s.io', 'networking.k8s.io', 'route.openshift.io', 'storage.k8s.io']),
    );
    const core = (await get('/api/v1')).body;
    expect(core.resources.map((r: { name: string }) => r.name)).toEqual(
      expect.arrayContaining(['pods', 'pods/log', 'events', 'nodes', 'persistentvolumeclaims']),
    );
    expect(core.resources.map((r: { name: string }) => r.name)).not.toContain('secrets');
    const routes = (await get('/apis/route.openshift.io/v1')).body;
    expect(routes).toMatchObject({ kind: 'APIResourceList', groupVersion: 'route.openshift.io/v1' });
    expect(routes.resources[0]).toMatchObject({
      name: 'routes',
      namespaced: true,
      kind: 'Route',
      verbs: ['get', 'list', 'watch'],
    });
    expect((await get('/apis/storage.k8s.io')).body).toMatchObject({ kind: 'APIGroup', name: 'storage.k8s.io' });
  });

  it('answers OpenAPI and unknown paths with a NotFound Status', async () => {
    for (const path of ['/openapi/v2', '/openapi/v3', '/apis/apiextensions.k8s.io/v1', '/api/v2', '/nope']) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 });
    }
  });
});

describe('get and list', () => {
  it('lists a namespace with the list kind, apiVersion and resourceVersion', async () => {
    const { status, body } = await get('/api/v1/namespaces/shop/pods');
    expect(status).toBe(200);
    expect(body).toMatchObject({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '1605' } });
    expect(names(body)).toEqual(['checkout-6f5b9c7d4-x2k9p', 'web-5d8f7b6c9-q7x2m']);
  });

  it('lists namespaced kinds across all namespaces and cluster-scoped kinds', async () => {
    expect(names((await get('/api/v1/pods')).body)).toEqual([
      'ledger-0',
      'checkout-6f5b9c7d4-x2k9p',
      'web-5d8f7b6c9-q7x2m',
    ]);
    expect(names((await get('/api/v1/nodes')).body)).toEqual(['worker-1', 'worker-2']);
    expect((await get('/apis/storage.k8s.io/v1/storageclasses')).body).toMatchObject({
      kind: 'StorageClassList',
      apiVersion: 'storage.k8s.io/v1',
    });
    expect(names((await get('/apis/route.openshift.io/v1/namespaces/shop/routes')).body)).toEqual(['checkout']);
  });

  it('gets single objects and answers missing ones with NotFound', async () => {
    expect((await get('/api/v1/namespaces/payments/persistentvolumeclaims/ledger-data')).body.status.phase).toBe(
      'Pending',
    );
    expect((await get('/api/v1/nodes/worker-2')).body.metadata.name).toBe('worker-2');
    expect((await get('/api/v1/namespaces/shop')).body.kind).toBe('Namespace');
    const missing = await get('/apis/apps/v1/namespaces/shop/deployments/nope');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({
      reason: 'NotFound',
      message: 'deployments.apps "nope" not found',
      details: { name: 'nope', group: 'apps', kind: 'deployments' },
    });
    expect((await get('/api/v1/namespaces/payments/pods/web-5d8f7b6c9-q7x2m')).status).toBe(404);
  });

  it('applies label and field selectors', async () => {
    const q = (s: string) => encodeURIComponent(s);
    expect(names((await get(`/api/v1/pods?labelSelector=${q('tier in (frontend,backend),app!=web')}`)).body)).toEqual([
      'checkout-6f5b9c7d4-x2k9p',
    ]);
    expect(names((await get(`/api/v1/pods?fieldSelector=${q('status.phase=Pending')}`)).body)).toEqual(['ledger-0']);
    expect(names((await get(`/api/v1/pods?fieldSelector=${q('spec.nodeName=')}`)).body)).toEqual(['ledger-0']);
    const events = await get(
      `/api/v1/namespaces/shop/events?fieldSelector=${q('involvedObject.kind=Pod,involvedObject.name=checkout-6f5b9c7d4-x2k9p,type=Warning')}`,
    );
    expect(events.body.items.map((e: { reason: string }) => e.reason)).toEqual(['BackOff']);
    expect((await get(`/api/v1/events?fieldSelector=${q('reason=ProvisioningFailed')}`)).body.items).toHaveLength(1);
  });

  it('answers bad selectors and bad parameters with BadRequest', async () => {
    const bad = await get('/api/v1/pods?fieldSelector=reason%3DBackOff');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ reason: 'BadRequest', message: 'field label not supported: reason' });
    expect((await get('/api/v1/pods?labelSelector=a%20in%20(')).status).toBe(400);
    expect((await get('/api/v1/pods?limit=ten')).status).toBe(400);
  });

  it('pages with limit and continue, then refuses foreign and malformed tokens', async () => {
    const first = (await get('/api/v1/events?limit=2')).body;
    expect(first.items).toHaveLength(2);
    expect(first.metadata.remainingItemCount).toBe(3);
    const second = (await get(`/api/v1/events?limit=2&continue=${first.metadata.continue}`)).body;
    const third = (await get(`/api/v1/events?limit=2&continue=${second.metadata.continue}`)).body;
    expect(third.metadata.continue).toBeUndefined();
    const all = names((await get('/api/v1/events')).body);
    expect([...names(first), ...names(second), ...names(third)]).toEqual(all);

    const other = await startSnapshotServer({
      objects: [{ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', namespace: 'x', resourceVersion: '7' } }],
    });
    try {
      const foreign = await fetch(`${other.url}/api/v1/events?limit=1&continue=${first.metadata.continue}`);
      expect(foreign.status).toBe(410);
      expect(await foreign.json()).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410 });
    } finally {
      await other.close();
    }
    expect((await get('/api/v1/events?limit=2&continue=garbage')).status).toBe(400);
  });
});

describe('Table responses', () => {
  it('prints pods with kubectl columns and metadata rows', async () => {
    const { body } = await get('/api/v1/namespaces/shop/pods', { headers: { Accept: TABLE } });
    expect(body.kind).toBe('Table');
    expect(body.apiVersion).toBe('meta.k8s.io/v1');
    expect(body.columnDefinitions.slice(0, 5).map((c: { name: string }) => c.name)).toEqual([
      'Name',
      'Ready',
      'Status',
      'Restarts',
      'Age',
    ]);
    expect(body.rows[0].cells.slice(0, 5)).toEqual([
      'checkout-6f5b9c7d4-x2k9p',
      '0/1',
      'CrashLoopBackOff',
      '6 (5m ago)',
      '45m',
    ]);
    expect(body.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { namespace: 'shop' } });
  });

  it('ages things relative to the configured now', async () => {
    const later = await startDemoServer({ now: '2024-05-15T10:15:00Z' });
    try {
      const res = await fetch(`${later.url}/api/v1/namespaces/shop/pods/checkout-6f5b9c7d4-x2k9p`, {
        headers: { Accept: TABLE },
      });
      const table = await res.json();
      expect(table.rows).toHaveLength(1);
      expect(table.rows[0].cells[4]).toBe('24h');
    } finally {
      await later.close();
    }
  });

  it('pages Tables too', async () => {
    const { body } = await get('/api/v1/events?limit=1', { headers: { Accept: TABLE } });
    expect(body.rows).toHaveLength(1);
    expect(typeof body.metadata.continue).toBe('string');
  });
});

describe('pod logs', () => {
  const log = (pod: string, query = '') => get(`/api/v1/namespaces/shop/pods/${pod}/log${query}`);

  it('serves current and previous logs of a single-container pod', async () => {
    expect((await log('checkout-6f5b9c7d4-x2k9p')).body).toBe('2024-05-14T10:15:01Z starting checkout 4.0.0\n');
    const previous = await log('checkout-6f5b9c7d4-x2k9p', '?previous=true');
    expect(previous.type).toMatch(/^text\/plain/);
    expect(previous.body).toContain('FATAL: required environment variable PAYMENTS_API_KEY is not set');
    expect((await log('checkout-6f5b9c7d4-x2k9p', '?previous=true&tailLines=1')).body).toBe(
      '2024-05-14T10:10:00Z FATAL: required environment variable PAYMENTS_API_KEY is not set\n',
    );
  });

  it('requires a container name for a pod with several, like the real server', async () => {
    const res = await log('web-5d8f7b6c9-q7x2m');
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      'a container name must be specified for pod web-5d8f7b6c9-q7x2m, choose one of: [web metrics]',
    );
    expect((await log('web-5d8f7b6c9-q7x2m', '?container=metrics')).body).toContain('StatsD');
    expect((await log('web-5d8f7b6c9-q7x2m', '?container=nope')).status).toBe(400);
  });

  it('refuses a previous log that does not exist, and a missing pod', async () => {
    const res = await log('web-5d8f7b6c9-q7x2m', '?container=web&previous=true');
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('previous terminated container "web" in pod "web-5d8f7b6c9-q7x2m" not found');
    expect((await log('ghost')).status).toBe(404);
  });
});

describe('read-only', () => {
  it.each(['POST', 'PUT', 'PATCH', 'DELETE'])('%s gets 405 MethodNotAllowed', async (method) => {
    const res = await get('/api/v1/namespaces/shop/pods/web-5d8f7b6c9-q7x2m', {
      method,
      body: method === 'DELETE' ? null : '{}',
    });
    expect(res.status).toBe(405);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
  });

  it('never serves Secrets: empty lists and NotFound', async () => {
    expect((await get('/api/v1/namespaces/shop/secrets')).body).toMatchObject({ kind: 'SecretList', items: [] });
    expect((await get('/api/v1/secrets')).body.items).toEqual([]);
    expect((await get('/api/v1/namespaces/shop/secrets/db-password')).status).toBe(404);
  });

  it('does not serve Secrets even when handed one directly', async () => {
    const leaky = await startSnapshotServer({
      objects: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'x' }, data: { k: 'dg==' } }],
    });
    try {
      expect(leaky.catalog.skippedKinds.get('Secret')).toBe(1);
      const res = await fetch(`${leaky.url}/api/v1/namespaces/x/secrets/s`);
      expect(res.status).toBe(404);
    } finally {
      await leaky.close();
    }
  });
});

describe('watch', () => {
  it('replays the current state as ADDED events and ends at timeoutSeconds', async () => {
    const res = await fetch(`${server.url}/api/v1/namespaces/payments/pods?watch=true&timeoutSeconds=1`);
    const events = (await res.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'ledger-0']]);
  });
});

describe('fault injection', () => {
  it('answers 403 on one kind only, with a Forbidden Status', async () => {
    server.setFaults([{ match: { resource: 'events' }, effect: { type: 'status', status: 403 } }]);
    const denied = await get('/api/v1/namespaces/shop/events');
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
    expect(denied.body.message).toContain('cannot list resource "events" in the namespace "shop"');
    expect((await get('/api/v1/namespaces/shop/pods')).status).toBe(200);
  });

  it('answers 500 InternalError for a fraction of requests, reproducibly', async () => {
    const run = async (seed: number) => {
      const faulty = await startDemoServer({ faultRate: 0.5, seed });
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 20; i += 1) {
          statuses.push((await fetch(`${faulty.url}/api/v1/namespaces/shop/pods?i=${i}`)).status);
        }
        return statuses;
      } finally {
        await faulty.close();
      }
    };
    const first = await run(3);
    expect(new Set(first)).toEqual(new Set([200, 500]));
    expect(await run(3)).toEqual(first);
  });

  it('hangs a request until the client gives up, and still closes', async () => {
    const hanging = await startDemoServer({ faults: [{ match: { resource: 'pods' }, effect: { type: 'hang' } }] });
    try {
      await expect(
        fetch(`${hanging.url}/api/v1/namespaces/shop/pods`, { signal: AbortSignal.timeout(300) }),
      ).rejects.toThrow();
      const hung = hanging.requests().at(-1);
      expect(hung).toMatchObject({ verb: 'list', resource: 'pods' });
      expect(hung?.status).toBeUndefined();
      expect((await fetch(`${hanging.url}/api/v1/nodes`)).status).toBe(200);
    } finally {
      await hanging.close();
    }
  });

  it('drops the connection on reset', async () => {
    server.setFaults([{ match: { verb: 'log' }, effect: { type: 'reset' } }]);
    await expect(fetch(`${server.url}/api/v1/namespaces/shop/pods/checkout-6f5b9c7d4-x2k9p/log`)).rejects.toThrow();
  });

  it('expires a paged list midway with 410 once', async () => {
    server.setFaults([{ match: { withContinue: true }, effect: { type: 'status', status: 410 }, times: 1 }]);
    const first = (await get('/api/v1/events?limit=2')).body;
    const expired = await get(`/api/v1/events?limit=2&continue=${first.metadata.continue}`);
    expect(expired.body).toMatchObject({ reason: 'Expired', code: 410 });
    expect((await get(`/api/v1/events?limit=2&continue=${first.metadata.continue}`)).status).toBe(200);
  });

  it('records each request with its verb, resource and status', async () => {
    server.resetRequests();
    await get('/api/v1/namespaces/shop/pods?labelSelector=app%3Dweb');
    await get('/api/v1/namespaces/shop/pods/nope');
    expect(server.requestCount()).toBe(2);
    expect(server.requests()).toEqual([
      expect.objectContaining({
        verb: 'list',
        resource: 'pods',
        namespace: 'shop',
        query: { labelSelector: 'app=web' },
        status: 200,
      }),
      expect.objectContaining({ verb: 'get', resource: 'pods', status: 404 }),
    ]);
  });
});

describe('events exported from events.k8s.io', () => {
  it('are served as core/v1 Events, as kube-apiserver converts them, so field selectors and columns find them', async () => {
    const exported: KubeObject = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'worker-1.17f3', namespace: 'default', resourceVersion: '7' },
      eventTime: '2025-06-01T09:00:00.000000Z',
      series: { count: 4, lastObservedTime: '2025-06-01T09:05:00.000000Z' },
      reason: 'NodeNotReady',
      note: 'Node worker-1 status is now: NodeNotReady',
      type: 'Normal',
      regarding: { kind: 'Node', name: 'worker-1', apiVersion: 'v1' },
      reportingController: 'node-controller',
      reportingInstance: 'kube-controller-manager',
      deprecatedCount: 4,
    } as KubeObject;
    const own = await startSnapshotServer({ objects: [exported] });
    try {
      const res = await fetch(
        `${own.url}/api/v1/events?fieldSelector=${encodeURIComponent('involvedObject.kind=Node')}`,
      );
      const body = (await res.json()) as { items: Record<string, unknown>[] };
      expect(body.items).toHaveLength(1);
      expect(body.items[0]).toMatchObject({
        apiVersion: 'v1',
        involvedObject: { kind: 'Node', name: 'worker-1' },
        message: 'Node worker-1 status is now: NodeNotReady',
        reportingComponent: 'node-controller',
        reportingInstance: 'kube-controller-manager',
        count: 4,
        series: { count: 4 },
      });
      expect(body.items[0]).not.toHaveProperty('regarding');
      expect(body.items[0]).not.toHaveProperty('note');
    } finally {
      await own.close();
    }
  });
});
