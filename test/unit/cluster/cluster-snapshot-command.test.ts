import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/commands/snapshot.js';
import type { CliIo } from '../../../src/cli/io.js';
import { captureNamespace, logReads } from '../../../src/cluster/capture.js';
import { createClusterReader } from '../../../src/cluster/reader.js';
import { parseSnapshot, parseSnapshotLogs } from '../../../src/cluster/snapshot.js';
import type { KubeObject } from '../../../src/cluster/types.js';
import { type FakeApi, kubeconfigFor, sendJson, sendStatus, startFakeApi } from '../../support/cluster-fake-api.js';

const dir = mkdtempSync(join(tmpdir(), 'calmops-snapshot-cmd-'));

const crashing = {
  metadata: { name: 'web-1', namespace: 'shop', managedFields: [{ manager: 'kubelet' }] },
  spec: { containers: [{ name: 'app' }, { name: 'proxy' }] },
  status: {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: 'False' }],
    containerStatuses: [
      {
        name: 'app',
        restartCount: 4,
        state: { waiting: { reason: 'CrashLoopBackOff' } },
        lastState: { terminated: {} },
      },
      { name: 'proxy', restartCount: 0, state: { running: {} } },
    ],
  },
};
const healthy = {
  metadata: { name: 'web-2', namespace: 'shop' },
  status: {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: 'True' }],
    containerStatuses: [{ name: 'app', restartCount: 0, state: { running: {} } }],
  },
};

/** Collections of a small cluster, by API path. */
const collections: Record<string, unknown[]> = {
  '/api/v1/namespaces/shop/pods': [crashing, healthy],
  '/api/v1/namespaces/shop/events': [{ metadata: { name: 'web-1.1', namespace: 'shop' }, reason: 'BackOff' }],
  '/api/v1/namespaces/shop/persistentvolumeclaims': [
    { metadata: { name: 'data', namespace: 'shop' }, spec: { volumeName: 'pv-data' }, status: { phase: 'Bound' } },
  ],
  '/api/v1/namespaces/shop/configmaps': [{ metadata: { name: 'app-config', namespace: 'shop' }, data: { a: 'b' } }],
  '/api/v1/nodes': [{ metadata: { name: 'node-1' } }],
  '/api/v1/persistentvolumes': [
    { metadata: { name: 'pv-data' }, spec: { claimRef: { namespace: 'shop', name: 'data' } } },
    {
      metadata: { name: 'pv-other' },
      spec: { claimRef: { namespace: 'bank', name: 'x' } },
      status: { phase: 'Bound' },
    },
  ],
  '/apis/storage.k8s.io/v1/storageclasses': [{ metadata: { name: 'fast' }, provisioner: 'csi.example' }],
};

let api: FakeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function fakeCluster(forbidden: string[] = []): Promise<{ api: FakeApi; kubeconfig: string }> {
  api = await startFakeApi((req, res) => {
    if (forbidden.some((p) => req.path.includes(p))) {
      sendStatus(res, 403, 'Forbidden', `${req.path} is forbidden: User "snap" cannot list`);
      return;
    }
    if (req.path === '/api/v1/namespaces/shop') {
      sendJson(res, 200, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
      return;
    }
    if (req.path.endsWith('/log')) {
      const previous = req.query.get('previous') === 'true';
      res.end(
        `${req.path.split('/')[6]}/${req.query.get('container')}${previous ? ' previous' : ''} tail ${req.query.get('tailLines')}\n`,
      );
      return;
    }
    if (req.path === '/apis/route.openshift.io/v1/namespaces/shop/routes') {
      sendStatus(res, 404, 'NotFound', 'the server could not find the requested resource');
      return;
    }
    if (/^\/api\/v1\/namespaces\/[^/]+$/.test(req.path)) {
      sendStatus(res, 404, 'NotFound', `namespaces "${req.path.split('/')[4]}" not found`);
      return;
    }
    sendJson(res, 200, { metadata: {}, items: collections[req.path] ?? [] });
  });
  const kubeconfig = join(dir, `kubeconfig-${api.url.split(':').at(-1)}`);
  writeFileSync(kubeconfig, kubeconfigFor(api.url));
  return { api, kubeconfig };
}

function captureIo(env: Record<string, string | undefined> = {}): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    env,
    stdout(text: string) {
      io.out += text;
    },
    stderr(text: string) {
      io.err += text;
    },
  };
  return io;
}

describe('calmops snapshot', () => {
  it('writes the snapshot and the logs of failing pods, warns about ConfigMaps, and sends only GETs', async () => {
    const { api, kubeconfig } = await fakeCluster();
    const out = join(dir, 'shop.yaml');
    const io = captureIo();
    const code = await run(['-n', 'shop', '-o', out, '--kubeconfig', kubeconfig, '--tail', '20'], io);
    expect(io.err).not.toContain('Error');
    expect(code).toBe(0);

    const objects = parseSnapshot(readFileSync(out, 'utf8'));
    const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(names).toEqual([
      'Namespace/shop',
      'Pod/web-1',
      'Pod/web-2',
      'Event/web-1.1',
      'PersistentVolumeClaim/data',
      'PersistentVolume/pv-data',
      'StorageClass/fast',
      'Node/node-1',
      'ConfigMap/app-config',
    ]);
    expect(objects.find((o) => o.metadata.name === 'web-1')?.metadata.managedFields).toBeUndefined();

    const logs = parseSnapshotLogs(readFileSync(join(dir, 'shop.logs.json'), 'utf8'));
    expect(logs).toEqual({
      'shop/web-1/app': 'web-1/app tail 20\n',
      'shop/web-1/app:previous': 'web-1/app previous tail 20\n',
      'shop/web-1/proxy': 'web-1/proxy tail 20\n',
    });

    expect(io.err).toMatch(/warning: the snapshot holds 1 ConfigMap\(s\) as they are \(app-config\)/);
    expect(io.err).toContain('routes: this cluster does not serve route.openshift.io/v1 routes; skipped');
    expect(api.requests.every((r) => r.method === 'GET')).toBe(true);
    // Core Secrets, in any spelling of the path; ExternalSecrets and SecretStores hold only references.
    expect(api.requests.some((r) => /\/secrets(?:[/?]|$)/i.test(r.path))).toBe(false);
  });

  it('writes YAML to standard output without -o, and reads no logs then', async () => {
    const { api, kubeconfig } = await fakeCluster();
    const io = captureIo({ KUBECONFIG: kubeconfig });
    expect(await run(['-n', 'shop'], io)).toBe(0);
    expect(parseSnapshot(io.out).length).toBeGreaterThan(5);
    expect(api.requests.some((r) => r.path.endsWith('/log'))).toBe(false);
    expect(io.err).toContain('logs not captured');
  });

  it('warns and continues when one kind is forbidden', async () => {
    const { kubeconfig } = await fakeCluster(['/events']);
    const out = join(dir, 'forbidden.yaml');
    const io = captureIo();
    expect(await run(['-n', 'shop', '-o', out, '--kubeconfig', kubeconfig], io)).toBe(0);
    expect(io.err).toMatch(/warning: could not list events in namespace shop: forbidden.*cannot list/);
    const kinds = parseSnapshot(readFileSync(out, 'utf8')).map((o) => o.kind);
    expect(kinds).toContain('Pod');
    expect(kinds).not.toContain('Event');
  });

  it('exits 1 when every read is forbidden', async () => {
    const { kubeconfig } = await fakeCluster(['/api', '/apis']);
    const io = captureIo();
    expect(await run(['-n', 'shop', '--kubeconfig', kubeconfig], io)).toBe(1);
    expect(io.err).toContain('no kind could be read');
  });

  it('exits 1 when the namespace does not exist', async () => {
    const { kubeconfig } = await fakeCluster();
    const io = captureIo();
    expect(await run(['-n', 'nowhere', '--kubeconfig', kubeconfig], io)).toBe(1);
    expect(io.err).toContain('namespace nowhere does not exist');
  });

  it('exits 1 with a clear message when the cluster is unreachable', async () => {
    const { api, kubeconfig } = await fakeCluster();
    await api.close();
    const out = join(dir, 'unreachable.yaml');
    const io = captureIo();
    expect(await run(['-n', 'shop', '-o', out, '--kubeconfig', kubeconfig], io)).toBe(1);
    expect(io.err).toMatch(/cannot reach the API server at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
  });

  it('exits 2 on bad input', async () => {
    const { kubeconfig } = await fakeCluster();
    const cases: Array<[string[], RegExp]> = [
      [[], /missing -n/],
      [['-n', 'Shop'], /not a valid name/],
      [['-n', 'shop', '--tail', 'abc'], /--tail: not a whole number/],
      [['-n', 'shop', '--tail', '0'], /--tail: must be between/],
      [['-n', 'shop', '--bogus'], /unknown flag "--bogus"/],
      [['-n', 'shop', 'extra'], /unexpected argument/],
      [['-n', 'shop', '-o', join(dir, 'no-such-dir', 'x.yaml')], /folder .* does not exist/],
      [['-n', 'shop', '--kubeconfig', join(dir, 'missing')], /kubeconfig file .* does not exist/],
      [['-n', 'shop', '--kubeconfig', kubeconfig, '--context', 'prod'], /context 'prod' is not in/],
    ];
    for (const [args, message] of cases) {
      const io = captureIo({ HOME: dir });
      expect(await run(args, io), args.join(' ')).toBe(2);
      expect(io.err, args.join(' ')).toMatch(message);
      expect(io.err).toContain('Usage: calmops snapshot');
    }
  });

  it('prints usage with --help', async () => {
    const io = captureIo();
    expect(await run(['--help'], io)).toBe(0);
    expect(io.out).toContain('Usage: calmops snapshot');
  });
});

describe('capture', () => {
  it('keeps the PVs of the namespace, and Available ones only while a claim is Pending', async () => {
    const { kubeconfig } = await fakeCluster();
    collections['/api/v1/persistentvolumes']?.push({ metadata: { name: 'pv-free' }, status: { phase: 'Available' } });
    try {
      const reader = createClusterReader({ kubeconfig: { file: kubeconfig } });
      const bound = await captureNamespace(reader, { namespace: 'shop', logs: false, tailLines: 10 });
      expect(bound.objects.filter((o) => o.kind === 'PersistentVolume').map((o) => o.metadata.name)).toEqual([
        'pv-data',
      ]);
      const claims = collections['/api/v1/namespaces/shop/persistentvolumeclaims'] as Array<{ status: object }>;
      claims.push({ metadata: { name: 'new', namespace: 'shop' }, status: { phase: 'Pending' } } as never);
      const pending = await captureNamespace(reader, { namespace: 'shop', logs: false, tailLines: 10 });
      expect(pending.objects.filter((o) => o.kind === 'PersistentVolume').map((o) => o.metadata.name)).toEqual([
        'pv-data',
        'pv-free',
      ]);
      claims.pop();
    } finally {
      collections['/api/v1/persistentvolumes']?.pop();
    }
  });

  it('reads logs of pods that are not ready or restarting, only for containers that have run', () => {
    const pods = [
      crashing,
      healthy,
      {
        metadata: { name: 'pending-1' },
        status: {
          phase: 'Pending',
          containerStatuses: [{ name: 'app', state: { waiting: { reason: 'ContainerCreating' } } }],
        },
      },
      {
        metadata: { name: 'restarted-but-ready' },
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True' }],
          initContainerStatuses: [{ name: 'init', restartCount: 0, state: { terminated: { exitCode: 0 } } }],
          containerStatuses: [{ name: 'app', restartCount: 1, state: { running: {} } }],
        },
      },
      { metadata: { name: 'done' }, status: { phase: 'Succeeded' } },
    ] as unknown as KubeObject[];
    expect(logReads(pods, 5).map((r) => `${r.pod}/${r.container}${r.previous ? ':previous' : ''}`)).toEqual([
      'web-1/app',
      'web-1/app:previous',
      'web-1/proxy',
      'restarted-but-ready/init',
      'restarted-but-ready/app',
      'restarted-but-ready/app:previous',
    ]);
  });
});
