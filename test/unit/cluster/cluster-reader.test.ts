import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClusterReader } from '../../../src/cluster/reader.js';
import { ClusterReadError } from '../../../src/cluster/types.js';
import {
  type FakeApi,
  type FakeHandler,
  kubeconfigFor,
  pod,
  sendJson,
  sendStatus,
  startFakeApi,
} from '../../support/cluster-fake-api.js';

let api: FakeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function serve(handler: FakeHandler, options: Parameters<typeof kubeconfigFor>[1] = {}, pageSize = 3) {
  api = await startFakeApi(handler);
  const reader = createClusterReader({
    kubeconfig: { yaml: kubeconfigFor(api.url, options), allowExec: options.exec !== undefined },
    pageSize,
    // A guard against a hang only: the tests of the request timeout make readers of their own.
    requestTimeoutMs: 60_000,
  });
  return { api, reader };
}

/** A paged pod list over `names`, continue token = index of the next item. */
function pagedPods(names: string[], onPage?: (token: string | null) => boolean): FakeHandler {
  return (req, res) => {
    const token = req.query.get('continue');
    if (onPage && !onPage(token)) {
      sendStatus(res, 410, 'Expired', 'The provided continue parameter is too old');
      return;
    }
    const start = token === null ? 0 : Number(token);
    const limit = Number(req.query.get('limit') ?? names.length);
    const slice = names.slice(start, start + limit);
    const next = start + limit < names.length ? String(start + limit) : undefined;
    sendJson(res, 200, {
      kind: 'PodList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '100', ...(next ? { continue: next } : {}) },
      items: slice.map((n) => pod(n)),
    });
  };
}

async function failureOf(promise: Promise<unknown>): Promise<ClusterReadError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ClusterReadError);
  return error as ClusterReadError;
}

describe('cluster reader: lists', () => {
  const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];

  it('pages with limit and continue until the end, and adds kind/apiVersion to items', async () => {
    const { api, reader } = await serve(pagedPods(names));
    const pods = await reader.list({ kind: 'pods', namespace: 'shop' });
    expect(pods.map((p) => p.metadata.name)).toEqual(names);
    expect(pods[0]).toMatchObject({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 'shop' } });
    expect(api.requests.map((r) => [r.path, r.query.get('limit'), r.query.get('continue')])).toEqual([
      ['/api/v1/namespaces/shop/pods', '3', null],
      ['/api/v1/namespaces/shop/pods', '3', '3'],
      ['/api/v1/namespaces/shop/pods', '3', '6'],
    ]);
  });

  it('asks for 2,000 objects a page by default, so 3,000 pods take two requests', async () => {
    api = await startFakeApi(pagedPods(Array.from({ length: 3000 }, (_, i) => `p-${i}`)));
    const reader = createClusterReader({ kubeconfig: { yaml: kubeconfigFor(api.url) }, requestTimeoutMs: 5_000 });
    const pods = await reader.list({ kind: 'pods', namespace: 'shop' });
    expect(pods).toHaveLength(3000);
    expect(api.requests.map((r) => [r.query.get('limit'), r.query.get('continue')])).toEqual([
      ['2000', null],
      ['2000', '2000'],
    ]);
  });

  it('asks again in smaller pages when a page is over the byte limit for one answer, and keeps every object', async () => {
    const many = Array.from({ length: 20 }, (_, i) => `big-${i}`);
    const padded = (name: string) => pod(name, 'shop', { padding: 'x'.repeat(1000) });
    api = await startFakeApi((req, res) => {
      const start = Number(req.query.get('continue') ?? 0);
      const end = Math.min(many.length, start + Number(req.query.get('limit')));
      sendJson(res, 200, {
        kind: 'PodList',
        metadata: end < many.length ? { continue: String(end) } : {},
        items: many.slice(start, end).map(padded),
      });
    });
    const reader = createClusterReader({
      kubeconfig: { yaml: kubeconfigFor(api.url) },
      pageSize: 16,
      // About seven of these pods fit one answer.
      maxResponseBytes: 8 * 1024,
      requestTimeoutMs: 5_000,
    });
    const pods = await reader.list({ kind: 'pods', namespace: 'shop' });
    expect(pods.map((p) => p.metadata.name)).toEqual(many);
    expect(api.requests.map((r) => [r.query.get('limit'), r.query.get('continue')])).toEqual([
      ['16', null],
      ['8', null],
      ['4', null],
      ['4', '4'],
      ['4', '8'],
      ['4', '12'],
      ['4', '16'],
    ]);
  });

  it('stops at maxItems and asks only for what it still needs', async () => {
    const { api, reader } = await serve(pagedPods(names));
    const pods = await reader.list({ kind: 'pods', namespace: 'shop', maxItems: 5 });
    expect(pods.map((p) => p.metadata.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(api.requests.map((r) => r.query.get('limit'))).toEqual(['3', '2']);
  });

  it('restarts the list once from the beginning when a continue token expires (410)', async () => {
    let expired = 0;
    const { api, reader } = await serve(
      pagedPods(names, (token) => {
        if (token === '3' && expired === 0) {
          expired++;
          return false;
        }
        return true;
      }),
    );
    const pods = await reader.list({ kind: 'pods', namespace: 'shop' });
    expect(pods.map((p) => p.metadata.name)).toEqual(names);
    expect(api.requests.map((r) => r.query.get('continue'))).toEqual([null, '3', null, '3', '6']);
  });

  it('fails when the list expires a second time', async () => {
    const { api, reader } = await serve(pagedPods(names, (token) => token !== '3'));
    const error = await failureOf(reader.list({ kind: 'pods', namespace: 'shop' }));
    expect(error.status).toBe(410);
    expect(error.reason).toBe('server-error');
    expect(error.message).toContain('pods in namespace shop');
    expect(api.requests.map((r) => r.query.get('continue'))).toEqual([null, '3', null, '3']);
  });

  it('passes label and field selectors through to the server', async () => {
    const { api, reader } = await serve((_req, res) => sendJson(res, 200, { kind: 'EventList', items: [] }));
    await reader.list({
      kind: 'events',
      namespace: 'shop',
      labelSelector: 'app in (web,api),tier!=db',
      fieldSelector: 'involvedObject.kind=Pod,involvedObject.fieldPath=spec.containers{app}',
    });
    const [req] = api.requests;
    expect(req?.path).toBe('/api/v1/namespaces/shop/events');
    expect(req?.query.get('labelSelector')).toBe('app in (web,api),tier!=db');
    expect(req?.query.get('fieldSelector')).toBe(
      'involvedObject.kind=Pod,involvedObject.fieldPath=spec.containers{app}',
    );
  });

  it('uses group paths, cluster scope, and all-namespace lists', async () => {
    const { api, reader } = await serve((_req, res) => sendJson(res, 200, { items: [] }));
    await reader.list({ kind: 'storageclasses' });
    await reader.list({ kind: 'nodes', namespace: 'shop' });
    await reader.list({ kind: 'routes', namespace: 'shop' });
    await reader.list({ kind: 'pods' });
    expect(api.requests.map((r) => r.path)).toEqual([
      '/apis/storage.k8s.io/v1/storageclasses',
      '/api/v1/nodes',
      '/apis/route.openshift.io/v1/namespaces/shop/routes',
      '/api/v1/pods',
    ]);
  });

  it('refuses a list holding an item of another kind, so a misbehaving server cannot hand over a Secret', async () => {
    const { reader } = await serve((_req, res) =>
      sendJson(res, 200, {
        items: [
          { kind: 'Secret', apiVersion: 'v1', metadata: { name: 'db' }, data: { password: 'aHVudGVyMg==' } },
          pod('ok'),
        ],
      }),
    );
    const error = await failureOf(reader.list({ kind: 'pods', namespace: 'shop' }));
    expect(error.reason).toBe('invalid');
    expect(error.message).toContain('item 1 has kind Secret instead of Pod');
    expect(error.message).not.toContain('aHVudGVyMg');
  });

  it('reports a response that is not a list as invalid', async () => {
    const { reader } = await serve((_req, res) => sendJson(res, 200, { hello: 'world' }));
    expect((await failureOf(reader.list({ kind: 'pods', namespace: 'shop' }))).reason).toBe('invalid');
  });
});

describe('cluster reader: get and logs', () => {
  it('gets one object exactly as the server returns it', async () => {
    const object = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 'shop', annotations: { a: 'b' } },
      spec: { storageClassName: 'fast', resources: { requests: { storage: '1Gi' } } },
      status: { phase: 'Pending' },
    };
    const { api, reader } = await serve((_req, res) => sendJson(res, 200, object));
    expect(await reader.get({ kind: 'persistentvolumeclaims', namespace: 'shop', name: 'data' })).toEqual(object);
    expect(api.requests[0]?.path).toBe('/api/v1/namespaces/shop/persistentvolumeclaims/data');
  });

  it('refuses an answer of the wrong kind', async () => {
    const { reader } = await serve((_req, res) =>
      sendJson(res, 200, { kind: 'Secret', apiVersion: 'v1', metadata: { name: 'data' } }),
    );
    const error = await failureOf(reader.get({ kind: 'configmaps', namespace: 'shop', name: 'data' }));
    expect(error.reason).toBe('invalid');
  });

  it('reads logs with container, previous and tailLines, as text', async () => {
    const { api, reader } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('line 1\nError: missing DATABASE_URL\n');
    });
    const text = await reader.logs({
      namespace: 'shop',
      pod: 'web-1',
      container: 'app',
      previous: true,
      tailLines: 50,
    });
    expect(text).toBe('line 1\nError: missing DATABASE_URL\n');
    const [req] = api.requests;
    expect(req?.path).toBe('/api/v1/namespaces/shop/pods/web-1/log');
    expect(req?.query.get('container')).toBe('app');
    expect(req?.query.get('previous')).toBe('true');
    expect(req?.query.get('tailLines')).toBe('50');
    expect(Number(req?.query.get('limitBytes'))).toBeGreaterThan(0);
  });
});

describe('cluster reader: only GET leaves the client', () => {
  it('sends GET for lists, gets and logs, with Accept and User-Agent', async () => {
    const { api, reader } = await serve((req, res) => {
      if (req.path.endsWith('/log')) {
        res.end('x');
        return;
      }
      if (req.path.endsWith('/web')) {
        sendJson(res, 200, { kind: 'Service', apiVersion: 'v1', metadata: { name: 'web' } });
        return;
      }
      sendJson(res, 200, { items: [] });
    });
    await Promise.all([
      reader.list({ kind: 'pods', namespace: 'shop' }),
      reader.get({ kind: 'services', namespace: 'shop', name: 'web' }),
      reader.logs({ namespace: 'shop', pod: 'web-1' }),
    ]);
    expect(api.requests).toHaveLength(3);
    expect(new Set(api.requests.map((r) => r.method))).toEqual(new Set(['GET']));
    expect(api.requests.every((r) => r.headers['user-agent'] === 'calmops')).toBe(true);
  });
});

describe('cluster reader: failures are classified', () => {
  const statusCases: Array<[number, string, string]> = [
    [403, 'Forbidden', 'forbidden'],
    [401, 'Unauthorized', 'unauthorized'],
    [404, 'NotFound', 'not-found'],
    [500, 'InternalError', 'server-error'],
    [503, 'ServiceUnavailable', 'server-error'],
    [400, 'BadRequest', 'invalid'],
  ];
  for (const [code, statusReason, reason] of statusCases) {
    it(`HTTP ${code} → ${reason}, naming the read and carrying the server's message`, async () => {
      const { reader } = await serve((_req, res) =>
        sendStatus(res, code, statusReason, `server says ${statusReason.toLowerCase()}`),
      );
      const error = await failureOf(reader.list({ kind: 'pods', namespace: 'shop' }));
      expect(error.reason).toBe(reason);
      expect(error.status).toBe(code);
      expect(error.message).toContain('pods in namespace shop');
      expect(error.message).toContain(`server says ${statusReason.toLowerCase()}`);
    });
  }

  it('a forbidden get names the object', async () => {
    const { reader } = await serve((_req, res) =>
      sendStatus(res, 403, 'Forbidden', 'nodes "n1" is forbidden: User "calmops" cannot get resource "nodes"'),
    );
    const error = await failureOf(reader.get({ kind: 'nodes', name: 'n1' }));
    expect(error.reason).toBe('forbidden');
    expect(error.message).toMatch(/Node n1.*cannot get resource "nodes"/);
  });

  it('a server that never answers times out with reason timeout', async () => {
    api = await startFakeApi(() => {
      // never answer
    });
    const reader = createClusterReader({ kubeconfig: { yaml: kubeconfigFor(api.url) }, requestTimeoutMs: 150 });
    const error = await failureOf(reader.list({ kind: 'pods', namespace: 'shop' }));
    expect(error.reason).toBe('timeout');
    expect(error.message).toContain('pods in namespace shop');
    expect(error.message).toContain('150 ms');
  });

  it("the caller's signal cancels a read in flight", async () => {
    const controller = new AbortController();
    // Never answers: the caller cancels once the request has reached the server.
    api = await startFakeApi(() => controller.abort());
    const reader = createClusterReader({ kubeconfig: { yaml: kubeconfigFor(api.url) }, requestTimeoutMs: 60_000 });
    const pending = reader.logs({ namespace: 'shop', pod: 'web-1' }, controller.signal);
    const error = await failureOf(pending);
    expect(error.reason).toBe('timeout');
    expect(error.message).toContain('cancelled');
  });

  it('an already aborted signal sends nothing', async () => {
    const { api, reader } = await serve((_req, res) => sendJson(res, 200, { items: [] }));
    const error = await failureOf(reader.list({ kind: 'pods', namespace: 'shop' }, AbortSignal.abort()));
    expect(error.reason).toBe('timeout');
    expect(api.requests).toHaveLength(0);
  });

  it('connection refused → unreachable, naming the server', async () => {
    const closed = await startFakeApi(() => undefined);
    await closed.close();
    const reader = createClusterReader({ kubeconfig: { yaml: kubeconfigFor(closed.url) } });
    const error = await failureOf(reader.list({ kind: 'pods', namespace: 'shop' }));
    expect(error.reason).toBe('unreachable');
    expect(error.message).toContain(closed.url);
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('a connection reset mid-response → unreachable', async () => {
    const { reader } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"items": [');
      res.socket?.destroy();
    });
    const error = await failureOf(reader.list({ kind: 'pods', namespace: 'shop' }));
    expect(error.reason).toBe('unreachable');
    expect(error.message).toContain('ECONNRESET');
  });
});

describe('cluster reader: credentials', () => {
  const token = 'sha256~Zx9TOKENvalue-0123456789abcdef';

  it('sends the kubeconfig token as a bearer token', async () => {
    const { api, reader } = await serve((_req, res) => sendJson(res, 200, { items: [] }), { token });
    await reader.list({ kind: 'pods', namespace: 'shop' });
    expect(api.requests[0]?.headers.authorization).toBe(`Bearer ${token}`);
  });

  it('never puts the token into an error message, even when the server echoes it', async () => {
    const { reader } = await serve(
      (req, res) => sendStatus(res, 401, 'Unauthorized', `rejected ${req.headers.authorization} (raw ${token} here)`),
      { token },
    );
    const error = await failureOf(reader.list({ kind: 'pods', namespace: 'shop' }));
    expect(error.reason).toBe('unauthorized');
    expect(error.message).not.toContain(token);
    expect(error.message).not.toContain('Zx9TOKEN');
    expect(JSON.stringify({ message: error.message, cause: String(error.cause) })).not.toContain(token);
  });

  it('runs exec credential plugins as the client does, once for many concurrent reads', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'calmops-exec-'));
    const counter = join(dir, 'runs');
    writeFileSync(counter, '');
    const script = join(dir, 'plugin.mjs');
    writeFileSync(
      script,
      `import { appendFileSync } from 'node:fs';
appendFileSync(${JSON.stringify(counter)}, 'x');
console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential',
  status: { token: 'exec-token-abcdef123', expirationTimestamp: '2999-01-01T00:00:00Z' } }));`,
    );
    const { api, reader } = await serve(pagedPods(['a', 'b']), { exec: { command: process.execPath, args: [script] } });
    const results = await Promise.all(
      Array.from({ length: 8 }, () => reader.list({ kind: 'pods', namespace: 'shop' })),
    );
    expect(results.every((r) => r.length === 2)).toBe(true);
    expect(api.requests.every((r) => r.headers.authorization === 'Bearer exec-token-abcdef123')).toBe(true);
    expect(readFileSync(counter, 'utf8')).toBe('x');
  });

  it('a failing credential plugin → unauthorized, with no request sent', async () => {
    const { api, reader } = await serve((_req, res) => sendJson(res, 200, { items: [] }), {
      exec: { command: process.execPath, args: ['-e', 'process.stderr.write("login required"); process.exit(1)'] },
    });
    const error = await failureOf(reader.list({ kind: 'pods', namespace: 'shop' }));
    expect(error.reason).toBe('unauthorized');
    expect(error.message).toContain('login required');
    expect(api.requests).toHaveLength(0);
  });
});

describe('cluster reader: concurrent use', () => {
  it('keeps parallel paged lists apart', async () => {
    const { reader } = await serve((req, res) => {
      const ns = req.path.split('/')[4] ?? '';
      const names = Array.from({ length: 5 }, (_, i) => `${ns}-${i}`);
      pagedPods(names)(req, res);
    });
    const namespaces = ['ns-a', 'ns-b', 'ns-c', 'ns-d', 'ns-e', 'ns-f'];
    const lists = await Promise.all(namespaces.map((namespace) => reader.list({ kind: 'pods', namespace })));
    lists.forEach((list, i) => {
      expect(list.map((p) => p.metadata.name)).toEqual(Array.from({ length: 5 }, (_, j) => `${namespaces[i]}-${j}`));
    });
  });
});
