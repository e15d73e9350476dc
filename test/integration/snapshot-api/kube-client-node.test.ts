import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  StorageV1Api,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/cluster/types.js';
import { kubeconfigYaml, writeKubeconfig } from '../../../src/snapshot-api/kubeconfig.js';
import { type SnapshotServer, startSnapshotServer } from '../../../src/snapshot-api/server.js';
import { startDemoServer } from '../../support/kube-demo.js';

/** Wire compatibility with the client the cluster reader is built on: typed models must deserialize cleanly. */

let server: SnapshotServer;
let dir: string;
let kc: KubeConfig;

beforeAll(async () => {
  server = await startDemoServer();
  dir = await mkdtemp(join(tmpdir(), 'calmops-client-node-'));
  const file = join(dir, 'kubeconfig');
  await writeKubeconfig(file, { server: server.url, namespace: 'shop' });
  kc = new KubeConfig();
  kc.loadFromFile(file);
});
afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function manyPods(count: number): KubeObject[] {
  return Array.from({ length: count }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `worker-${String(i).padStart(4, '0')}`,
      namespace: 'batch',
      uid: `uid-${i}`,
      resourceVersion: String(1000 + i),
      creationTimestamp: '2024-05-14T10:00:00Z',
      labels: { app: 'worker', shard: String(i % 3) },
    },
    spec: { containers: [{ name: 'main', image: 'busybox' }], nodeName: `node-${i % 2}` },
    status: { phase: i % 10 === 0 ? 'Pending' : 'Running' },
  }));
}

describe('@kubernetes/client-node 1.4.0 against the snapshot API server', () => {
  it('reads the kubeconfig context and namespace', () => {
    expect(kc.getCurrentCluster()).toMatchObject({ server: server.url, skipTLSVerify: true });
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('shop');
  });

  it('pages listNamespacedPod with limit and _continue until the end', async () => {
    const big = await startSnapshotServer({ objects: manyPods(1234) });
    try {
      const bigConfig = new KubeConfig();
      bigConfig.loadFromString(kubeconfigYaml({ server: big.url }));
      const api = bigConfig.makeApiClient(CoreV1Api);
      const pods: V1Pod[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const page = await api.listNamespacedPod({
          namespace: 'batch',
          limit: 500,
          labelSelector: 'app=worker,shard!=2',
          fieldSelector: 'status.phase=Running',
          ...(token ? { _continue: token } : {}),
        });
        pods.push(...page.items);
        token = page.metadata?._continue;
        pages += 1;
      } while (token);
      const expected = manyPods(1234).filter((p) => p.metadata.labels?.shard !== '2' && p.status.phase === 'Running');
      expect(pages).toBe(Math.ceil(expected.length / 500));
      expect(pods.map((p) => p.metadata?.name)).toEqual(expected.map((p) => p.metadata.name));
      expect(pods[0]?.metadata?.creationTimestamp).toBeInstanceOf(Date);
      expect(new Set(big.requests().map((r) => r.query.limit))).toEqual(new Set(['500']));
    } finally {
      await big.close();
    }
  });

  it('reads typed objects of several groups', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const pod = await core.readNamespacedPod({ namespace: 'shop', name: 'checkout-6f5b9c7d4-x2k9p' });
    expect(pod.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('CrashLoopBackOff');
    expect(pod.status?.containerStatuses?.[0]?.lastState?.terminated?.finishedAt).toBeInstanceOf(Date);
    const deployments = await kc.makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace: 'shop' });
    expect(deployments.items.map((d) => d.metadata?.name)).toEqual(['checkout', 'web']);
    const classes = await kc.makeApiClient(StorageV1Api).listStorageClass();
    expect(classes.items[0]?.volumeBindingMode).toBe('WaitForFirstConsumer');
    const routes = (await kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
      group: 'route.openshift.io',
      version: 'v1',
      namespace: 'shop',
      plural: 'routes',
    })) as { items: KubeObject[] };
    expect(routes.items.map((r) => r.spec.host)).toEqual(['checkout-shop.apps.example.com']);
  });

  it('filters events server-side and reads previous logs', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const events = await core.listEventForAllNamespaces({ fieldSelector: 'involvedObject.kind=PersistentVolumeClaim' });
    expect(events.items.map((e) => e.reason)).toEqual(['ProvisioningFailed']);
    const log = await core.readNamespacedPodLog({
      namespace: 'shop',
      name: 'checkout-6f5b9c7d4-x2k9p',
      container: 'checkout',
      previous: true,
      tailLines: 1,
    });
    expect(log).toBe('2024-05-14T10:10:00Z FATAL: required environment variable PAYMENTS_API_KEY is not set\n');
  });

  it('surfaces NotFound, MethodNotAllowed and injected Forbidden as ApiException with the status code', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const codeOf = async (call: Promise<unknown>): Promise<number> => {
      try {
        await call;
      } catch (error) {
        if (error instanceof ApiException) return error.code;
        throw error;
      }
      throw new Error('expected the call to fail');
    };
    expect(await codeOf(core.readNamespacedPod({ namespace: 'shop', name: 'ghost' }))).toBe(404);
    expect(await codeOf(core.deleteNamespacedPod({ namespace: 'shop', name: 'web-5d8f7b6c9-q7x2m' }))).toBe(405);
    server.setFaults([{ match: { resource: 'events' }, effect: { type: 'status', status: 403 } }]);
    try {
      expect(await codeOf(core.listNamespacedEvent({ namespace: 'shop' }))).toBe(403);
    } finally {
      server.setFaults([]);
    }
  });
});
