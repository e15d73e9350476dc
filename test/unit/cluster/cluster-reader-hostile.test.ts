import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeconfigError } from '../../../src/cluster/kubeconfig.js';
import { createClusterReader } from '../../../src/cluster/reader.js';
import { ClusterReadError } from '../../../src/cluster/types.js';
import {
  type FakeApi,
  type FakeHandler,
  kubeconfigFor,
  pod,
  sendJson,
  startFakeApi,
} from '../../support/cluster-fake-api.js';

/**
 * The reader against an API server that does not play by the rules: it redirects, answers with the wrong kind,
 * sends more than anyone asked for, or pages in circles. Each answer must end as a ClusterReadError with a reason
 * the triage envelope reports, and no credential may go anywhere but the request that was checked.
 */

const TOKEN = 'sha256~HostileTestToken0123456789abcdef';

const servers: FakeApi[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(handler: FakeHandler): Promise<FakeApi> {
  const api = await startFakeApi(handler);
  servers.push(api);
  return api;
}

function readerFor(url: string, extra: Partial<Parameters<typeof createClusterReader>[0]> = {}) {
  return createClusterReader({
    kubeconfig: { yaml: kubeconfigFor(url, { token: TOKEN }) },
    requestTimeoutMs: 5_000,
    pageSize: 2,
    ...extra,
  });
}

async function failureOf(promise: Promise<unknown>): Promise<ClusterReadError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ClusterReadError);
  return error as ClusterReadError;
}

describe('redirects are never followed', () => {
  for (const status of [301, 302, 303, 307, 308]) {
    it(`HTTP ${status} to the Secrets of the same server fails the read and sends nothing there`, async () => {
      const api = await start((req, res) => {
        if (req.path.includes('/secrets')) {
          sendJson(res, 200, { kind: 'SecretList', items: [{ metadata: { name: 'db' }, data: { p: 'aHVudGVy' } }] });
          return;
        }
        res.writeHead(status, { location: '/api/v1/namespaces/x/secrets' });
        res.end();
      });
      const error = await failureOf(readerFor(api.url).list({ kind: 'pods', namespace: 'shop' }));
      expect(error.reason).toBe('invalid');
      expect(error.status).toBe(status);
      expect(error.message).toBe(
        `could not list pods in namespace shop: redirect refused (HTTP ${status}), calmops never follows redirects; ` +
          'it pointed to /api/v1/namespaces/x/secrets',
      );
      expect(api.requests.map((r) => r.path)).toEqual(['/api/v1/namespaces/shop/pods']);
    });
  }

  it('a redirect to another server never reaches it, so the bearer token stays with the checked request', async () => {
    const elsewhere = await start((_req, res) => sendJson(res, 200, { kind: 'PodList', items: [] }));
    const api = await start((_req, res) => {
      res.writeHead(302, { location: `${elsewhere.url}/api/v1/namespaces/shop/pods?token=x` });
      res.end();
    });
    const error = await failureOf(readerFor(api.url).get({ kind: 'pods', namespace: 'shop', name: 'web-1' }));
    expect(error.message).toContain(
      `(HTTP 302), calmops never follows redirects; it pointed to ${elsewhere.url}/api/v1/namespaces/shop/pods`,
    );
    expect(error.message).not.toContain('token=x');
    expect(elsewhere.requests).toHaveLength(0);
    expect(api.requests[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('a redirect on a log read fails the same way', async () => {
    const api = await start((_req, res) => {
      res.writeHead(307, { location: '/api/v1/namespaces/kube-system/pods/etcd-0/log' });
      res.end('moved');
    });
    const error = await failureOf(readerFor(api.url).logs({ namespace: 'shop', pod: 'web-1' }));
    expect(error.message).toMatch(
      /redirect refused \(HTTP 307\).*pointed to \/api\/v1\/namespaces\/kube-system\/pods\/etcd-0\/log$/,
    );
    expect(api.requests).toHaveLength(1);
  });
});

describe('answers must be of the kind asked for', () => {
  it('a SecretList served for a pod list is refused, and none of it is returned', async () => {
    const api = await start((_req, res) =>
      sendJson(res, 200, {
        kind: 'SecretList',
        apiVersion: 'v1',
        metadata: {},
        items: [{ metadata: { name: 'db', namespace: 'shop' }, data: { password: 'aHVudGVyMg==' } }],
      }),
    );
    const error = await failureOf(readerFor(api.url).list({ kind: 'pods', namespace: 'shop' }));
    expect(error.reason).toBe('invalid');
    expect(error.message).toBe(
      'could not list pods in namespace shop: the answer is not what was asked for (kind SecretList instead of ' +
        'PodList); nothing of it was kept',
    );
    expect(error.message).not.toContain('aHVudGVy');
  });

  it('a list of the right kind with one Secret among its items is refused whole', async () => {
    const api = await start((_req, res) =>
      sendJson(res, 200, {
        kind: 'PodList',
        items: [pod('a'), { kind: 'Secret', metadata: { name: 'db' }, data: { password: 'aHVudGVyMg==' } }],
      }),
    );
    const error = await failureOf(readerFor(api.url).list({ kind: 'pods', namespace: 'shop' }));
    expect(error.message).toContain('item 2 has kind Secret instead of Pod');
  });

  it('a wrong kind on a later page fails the whole list', async () => {
    const api = await start((req, res) => {
      if (req.query.get('continue') === null) {
        sendJson(res, 200, {
          kind: 'DeploymentList',
          metadata: { continue: 'p2' },
          items: [{ metadata: { name: 'a' } }],
        });
      } else sendJson(res, 200, { kind: 'SecretList', items: [] });
    });
    const error = await failureOf(readerFor(api.url).list({ kind: 'deployments', namespace: 'shop' }));
    expect(error.message).toContain('kind SecretList instead of DeploymentList');
    expect(api.requests).toHaveLength(2);
  });

  it('a kind the server made up is printed safely', async () => {
    const api = await start((_req, res) => sendJson(res, 200, { kind: '\u001b]0;owned\u0007List', items: [] }));
    const error = await failureOf(readerFor(api.url).list({ kind: 'pods', namespace: 'shop' }));
    expect(error.message).not.toMatch(/[\u0000-\u001f]/);
    expect(error.message).toContain('instead of PodList');
  });

  it('lists of the right kind still read as before', async () => {
    const api = await start((_req, res) =>
      sendJson(res, 200, { kind: 'PodList', items: [pod('a'), { ...pod('b'), kind: 'Pod', apiVersion: 'v1' }] }),
    );
    const pods = await readerFor(api.url).list({ kind: 'pods', namespace: 'shop' });
    expect(pods.map((p) => [p.kind, p.metadata.name])).toEqual([
      ['Pod', 'a'],
      ['Pod', 'b'],
    ]);
  });
});

describe('the server URL cannot steer requests', () => {
  const refused: Array<[string, RegExp]> = [
    ['http://127.0.0.1:1/api/v1/namespaces/x/pods/p1/exec?command=id&x=', /query string/],
    ['http://127.0.0.1:1/?x=1', /query string/],
    ['http://127.0.0.1:1/#frag', /fragment/],
    ['http://127.0.0.1:1/api/v1/namespaces/x/pods/p1/proxy', /API path in it \('\/api\/…'\)/],
    ['http://127.0.0.1:1/gateway/apis/apps/v1', /API path in it \('\/apis\/…'\)/],
    ['http://127.0.0.1:1/k8s%2Fapi', /not a plain name/],
    ['http://127.0.0.1:1/k8s/..%2Fapi', /not a plain name/],
    ['http://127.0.0.1:1/x\\api\\v1', /API path in it/],
  ];
  for (const [server, why] of refused) {
    it(`refuses ${server} before any request`, () => {
      expect(() => readerFor(server)).toThrow(KubeconfigError);
      expect(() => readerFor(server)).toThrow(why);
    });
  }

  it('a query in the server URL never reaches the server', async () => {
    const api = await start((_req, res) => sendJson(res, 200, { kind: 'PodList', items: [] }));
    expect(() => readerFor(`${api.url}/api/v1/namespaces/x/pods/p1/exec?command=id&x=`)).toThrow(/query string/);
    expect(api.requests).toHaveLength(0);
  });

  it('a base path is kept as a prefix of every request, and the read-path check runs on what follows it', async () => {
    const api = await start((req, res) => {
      if (req.path.endsWith('/log')) res.end('ok');
      else sendJson(res, 200, { kind: 'PodList', items: [pod('a')] });
    });
    const reader = readerFor(`${api.url}/k8s/clusters/c-m-1/`);
    await reader.list({ kind: 'pods', namespace: 'shop' });
    await reader.logs({ namespace: 'shop', pod: 'a' });
    expect(api.requests.map((r) => r.path)).toEqual([
      '/k8s/clusters/c-m-1/api/v1/namespaces/shop/pods',
      '/k8s/clusters/c-m-1/api/v1/namespaces/shop/pods/a/log',
    ]);
    expect(reader.server).toBe(`${api.url}/k8s/clusters/c-m-1`);
  });
});

/** A server that streams `total` bytes of a JSON list (or forever), recording how much it got to write. */
async function streamingServer(options: { total?: number; declare?: boolean; chunk?: number }) {
  const written = { bytes: 0, closed: false };
  const server = createServer((_req, res) => {
    const chunk = Buffer.alloc(options.chunk ?? 64 * 1024, 'x');
    res.writeHead(200, {
      'content-type': 'application/json',
      ...(options.declare && options.total !== undefined ? { 'content-length': String(options.total) } : {}),
    });
    res.on('close', () => {
      written.closed = true;
    });
    const pump = () => {
      while (!written.closed && (options.total === undefined || written.bytes < options.total)) {
        written.bytes += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      if (!written.closed) res.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  servers.push({
    url,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return { url, written };
}

describe('a response is read up to a byte limit', () => {
  it('an endless list answer stops at the default 64 MiB, with the reason in the error', async () => {
    const { url, written } = await streamingServer({});
    // Pages of one object: a larger page over the limit is asked for again in smaller ones (cluster-paging.test.ts).
    const error = await failureOf(readerFor(url, { requestTimeoutMs: 30_000, pageSize: 1 }).list({ kind: 'pods' }));
    expect(error.reason).toBe('invalid');
    expect(error.message).toBe(
      'could not list pods in all namespaces: response over the 64 MiB limit for one answer from the API server; ' +
        'the read was stopped and nothing of it was kept',
    );
    // The connection was cut: the server stopped a little past the limit (socket buffers), not at its own end.
    await expect.poll(() => written.closed).toBe(true);
    expect(written.bytes).toBeLessThan(80 * 1024 * 1024);
  }, 30_000);

  it('a declared Content-Length over the limit fails before the body is read', async () => {
    const { url, written } = await streamingServer({ total: 8 * 1024 * 1024, declare: true });
    const reader = readerFor(url, { maxResponseBytes: 1024 * 1024 });
    const error = await failureOf(reader.get({ kind: 'configmaps', namespace: 'shop', name: 'big' }));
    expect(error.message).toContain('over the 1 MiB limit for one answer from the API server (8 MiB declared)');
    await expect.poll(() => written.closed).toBe(true);
  });

  it('a log answer that ignores limitBytes is cut off the same way', async () => {
    const { url } = await streamingServer({ total: 4 * 1024 * 1024 });
    const reader = readerFor(url, { maxResponseBytes: 512 * 1024 });
    const error = await failureOf(reader.logs({ namespace: 'shop', pod: 'web-1' }));
    expect(error.reason).toBe('invalid');
    expect(error.message).toContain('logs of pod web-1 in namespace shop: response over the 512 KiB limit');
  });

  it('an answer sent a byte at a time, characters split across writes, reads as the text that was sent', async () => {
    const message = 'Zeitüberschreitung — 读取超时 ☕ 🚀';
    const bytes = Buffer.from(JSON.stringify({ kind: 'PodList', items: [pod('a', 'shop', { message })] }));
    const api = await start((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      let at = 0;
      // Each byte its own chunk, each after the last is flushed: every multi-byte character arrives in pieces.
      const next = () => {
        if (at >= bytes.length) res.end();
        else res.write(bytes.subarray(at, ++at), () => setImmediate(next));
      };
      next();
    });
    const [read] = await readerFor(api.url).list({ kind: 'pods' });
    expect(read?.['message']).toBe(message);
  });

  it('answers read at the same time, in pieces that interleave, each read as the text its server sent', async () => {
    // Answers are gathered into buffers kept from one answer to the next (body-bytes.ts): none may see another's
    // bytes, whether the server declares their length or not.
    const namespaces = Array.from({ length: 8 }, (_, i) => `ns-${i}`);
    const api = await start((req, res) => {
      const namespace = req.path.split('/')[4] as string;
      const n = namespaces.indexOf(namespace);
      const items = Array.from({ length: 40 + n * 10 }, (_, i) =>
        pod(`${namespace}-${i}`, namespace, { padding: String(n).repeat(2_000 + i) }),
      );
      const bytes = Buffer.from(JSON.stringify({ kind: 'PodList', items }));
      res.writeHead(200, {
        'content-type': 'application/json',
        ...(n % 2 === 0 ? { 'content-length': String(bytes.length) } : {}),
      });
      let at = 0;
      const next = () => {
        if (at >= bytes.length) {
          res.end();
          return;
        }
        const from = at;
        at += 7_000 + n * 1_000;
        res.write(bytes.subarray(from, at), () => setImmediate(next));
      };
      next();
    });
    const reader = readerFor(api.url, { pageSize: 500 });
    for (let round = 0; round < 2; round++) {
      const lists = await Promise.all(namespaces.map((namespace) => reader.list({ kind: 'pods', namespace })));
      lists.forEach((pods, n) => {
        expect(pods).toHaveLength(40 + n * 10);
        pods.forEach((read, i) => {
          expect(read.metadata.name).toBe(`ns-${n}-${i}`);
          expect(read['padding']).toBe(String(n).repeat(2_000 + i));
        });
      });
    }
  });

  it('an answer just under the limit is read whole', async () => {
    const body = JSON.stringify({ kind: 'PodList', items: [pod('a', 'shop', { padding: 'y'.repeat(10_000) })] });
    const api = await start((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    const pods = await readerFor(api.url, { maxResponseBytes: Buffer.byteLength(body) }).list({ kind: 'pods' });
    expect(pods).toHaveLength(1);
  });
});

describe('paging in circles', () => {
  it('a server that repeats its continue token ends the list with a clear error after two pages', async () => {
    const api = await start((_req, res) =>
      sendJson(res, 200, { kind: 'PodList', metadata: { continue: 'same' }, items: [pod('a'), pod('b')] }),
    );
    const error = await failureOf(readerFor(api.url).list({ kind: 'pods', namespace: 'shop' }));
    expect(error.reason).toBe('invalid');
    expect(error.message).toBe(
      'could not list pods in namespace shop: the API server sent a continue token it had already sent (page 2, ' +
        '4 objects so far); paging stopped instead of reading the same pages again',
    );
    expect(api.requests.map((r) => r.query.get('continue'))).toEqual([null, 'same']);
  });

  it('a cycle through several tokens is caught when the first comes back', async () => {
    const next: Record<string, string> = { start: 't1', t1: 't2', t2: 't3', t3: 't1' };
    const api = await start((req, res) =>
      sendJson(res, 200, {
        kind: 'PodList',
        metadata: { continue: next[req.query.get('continue') ?? 'start'] },
        items: [pod('a')],
      }),
    );
    const error = await failureOf(readerFor(api.url).list({ kind: 'pods', namespace: 'shop' }));
    expect(error.message).toContain('already sent (page 4');
    expect(api.requests).toHaveLength(4);
  });

  it('a continue token too long to be one is refused instead of being sent back', async () => {
    const api = await start((_req, res) =>
      sendJson(res, 200, { kind: 'PodList', metadata: { continue: 'z'.repeat(100_000) }, items: [pod('a')] }),
    );
    const error = await failureOf(readerFor(api.url).list({ kind: 'pods', namespace: 'shop' }));
    expect(error.message).toContain('continue token of 100000 characters');
    expect(api.requests).toHaveLength(1);
  });
});
