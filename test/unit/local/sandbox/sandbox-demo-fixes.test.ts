import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoClusterControl, DemoClusterError } from '../../../../local/demo/control.js';
import { DEMO_FIXES, type DemoCluster, DemoFixError, demoFixFor } from '../../../../local/demo/fixes.js';
import { DEMO_NAMESPACES, DEMO_SNAPSHOT } from '../../../../local/demo/index.js';
import { banner, type RunningCalmops } from '../../../../local/start.js';
import { createClusterReader } from '../../../../src/cluster/reader.js';
import { loadSnapshotFiles } from '../../../../src/cluster/snapshot.js';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { kubeconfigYaml } from '../../../../src/snapshot-api/kubeconfig.js';
import { type SnapshotServer, startSnapshotServer } from '../../../../src/snapshot-api/server.js';
import { silentLogger } from '../../../../src/triage/engine.js';
import { SEVERITY_ORDER } from '../../../../src/triage/envelope/findings.js';
import { triage } from '../../../../src/triage/index.js';

/**
 * The demo's fixes stand in for a person running the approved plan: after each one, the triage a "resolved" runs
 * must no longer see the scenario's fault (which is what lets the sandbox validate a fix), while every other
 * namespace keeps its own.
 */

let broken: DemoCluster;
let server: SnapshotServer;

beforeAll(async () => {
  broken = await loadSnapshotFiles(DEMO_SNAPSHOT);
  server = await startSnapshotServer({ objects: broken.objects, logs: broken.logs, port: 0 });
});
afterAll(async () => {
  await server?.close();
});

function triageDemo(namespace: string) {
  const demo = DEMO_NAMESPACES.find((d) => d.namespace === namespace);
  if (demo === undefined) throw new Error(`no demo namespace ${namespace}`);
  const reader = createClusterReader({
    kubeconfig: { yaml: kubeconfigYaml({ server: server.url }) },
    requestTimeoutMs: 5_000,
  });
  return triage({ text: demo.try.replace(/^\/triage\s+/, '') }, { reader, logger: silentLogger });
}

const outside = (cluster: DemoCluster, namespace: string) =>
  cluster.objects.filter((o) => o.metadata.namespace !== undefined && o.metadata.namespace !== namespace);
const objectsIn = (cluster: DemoCluster, namespace: string, kind: string) =>
  cluster.objects.filter((o) => o.metadata.namespace === namespace && o.kind === kind);

describe('the demo fixes', () => {
  it('cover every broken demo namespace, each for the root cause the demo expects, and none for the healthy one', () => {
    const broken = DEMO_NAMESPACES.filter((d) => d.expectedRootCause !== undefined);
    expect(DEMO_FIXES.map((f) => f.namespace)).toEqual(broken.map((d) => d.namespace));
    for (const demo of broken) expect(demoFixFor(demo.namespace)?.rootCause).toBe(demo.expectedRootCause);
    expect(demoFixFor('wiki')).toBeUndefined();
  });

  for (const fix of DEMO_FIXES) {
    describe(fix.namespace, () => {
      it(`the triage no longer finds ${fix.rootCause} (nor anything of medium severity), with complete evidence`, async () => {
        // The same triage on the same server sees the fault before the fix, so its absence after means something.
        expect((await triageDemo(fix.namespace)).rootCause[0]?.code).toBe(fix.rootCause);
        const fixed = fix.apply(broken);
        server.setObjects(fixed.objects, fixed.logs);
        try {
          const envelope = await triageDemo(fix.namespace);
          expect(envelope.routing.namespace).toBe(fix.namespace);
          expect(envelope.findings.filter((f) => f.code === fix.rootCause)).toEqual([]);
          expect(envelope.rootCause.map((c) => c.code)).not.toContain(fix.rootCause);
          const serious = envelope.findings.filter((f) => SEVERITY_ORDER[f.severity] >= SEVERITY_ORDER.medium);
          expect(serious).toEqual([]);
          expect(envelope.evidence.completeness).toBeGreaterThanOrEqual(envelope.evidence.threshold);
          // The fixed namespace reads as later than the fault: the fix happened after it.
          expect(Date.parse(envelope.execution.now)).toBeGreaterThanOrEqual(Date.parse('2025-11-21T10:00:00Z'));
        } finally {
          server.setObjects(broken.objects, broken.logs);
        }
        // And the unfixed demo still shows the fault to the same triage.
        const again = await triageDemo(fix.namespace);
        expect(again.rootCause[0]?.code).toBe(fix.rootCause);
      });

      it('leaves every other namespace as it was, and they still show their own faults', async () => {
        const fixed = fix.apply(broken);
        expect(outside(fixed, fix.namespace)).toEqual(outside(broken, fix.namespace));
        for (const [key, text] of Object.entries(broken.logs)) {
          if (!key.startsWith(`${fix.namespace}/`)) expect(fixed.logs[key]).toBe(text);
        }
        server.setObjects(fixed.objects, fixed.logs);
        try {
          for (const demo of DEMO_NAMESPACES.filter((d) => d.namespace !== fix.namespace)) {
            expect((await triageDemo(demo.namespace)).rootCause[0]?.code).toBe(demo.expectedRootCause);
          }
        } finally {
          server.setObjects(broken.objects, broken.logs);
        }
      });

      it('is pure: the input is not changed and the same input gives the same cluster', () => {
        const copy = structuredClone(broken);
        const first = fix.apply(broken);
        expect(broken).toEqual(copy);
        expect(fix.apply(broken)).toEqual(first);
        expect(first.objects).not.toBe(broken.objects);
      });
    });
  }

  it('ml-team: the StorageClass exists, the claim is Bound to a provisioned volume, the job pod runs', () => {
    const fixed = demoFixFor('ml-team')?.apply(broken) as DemoCluster;
    const claim = objectsIn(fixed, 'ml-team', 'PersistentVolumeClaim').find(
      (c) => c.metadata.name === 'training-cache',
    ) as KubeObject;
    expect(claim.status.phase).toBe('Bound');
    const volume = fixed.objects.find(
      (o) => o.kind === 'PersistentVolume' && o.metadata.name === claim.spec.volumeName,
    );
    expect(volume?.spec.claimRef).toMatchObject({
      namespace: 'ml-team',
      name: 'training-cache',
      uid: claim.metadata.uid,
    });
    expect(volume?.spec.capacity.storage).toBe(claim.spec.resources.requests.storage);
    expect(
      fixed.objects.some((o) => o.kind === 'StorageClass' && o.metadata.name === claim.spec.storageClassName),
    ).toBe(true);
    const pods = objectsIn(fixed, 'ml-team', 'Pod');
    expect(pods.map((p) => p.status.phase)).toEqual(['Running']);
    expect(pods[0]?.spec.nodeName).toMatch(/^ip-10-3-/);
    const events = objectsIn(fixed, 'ml-team', 'Event').map((e) => `${e['type']}:${e['reason']}`);
    expect(events).toEqual(expect.arrayContaining(['Normal:ProvisioningSucceeded', 'Normal:Scheduled']));
  });

  it('payments: the new pods request CPU the workers can hold, are scheduled and Ready; the pending ones are gone', () => {
    const fixed = demoFixFor('payments')?.apply(broken) as DemoCluster;
    const api = objectsIn(fixed, 'payments', 'Pod').filter((p) => p.metadata.labels?.['app'] === 'payments-api');
    expect(api).toHaveLength(3);
    const nodes = new Map(
      fixed.objects
        .filter((o) => o.kind === 'Node')
        .map((n) => [n.metadata.name, Number.parseInt(String(n.status.allocatable.cpu), 10)] as const),
    );
    const used = new Map<string, number>();
    for (const pod of objectsIn(fixed, 'payments', 'Pod')) {
      expect(pod.status.phase).toBe('Running');
      const cpu = String(pod.spec.containers[0].resources.requests.cpu);
      const milli = cpu.endsWith('m') ? Number.parseInt(cpu, 10) : Number(cpu) * 1000;
      used.set(pod.spec.nodeName, (used.get(pod.spec.nodeName) ?? 0) + milli);
    }
    for (const [node, milli] of used) expect(milli).toBeLessThanOrEqual(nodes.get(node) ?? 0);
    const deployment = objectsIn(fixed, 'payments', 'Deployment').find((d) => d.metadata.name === 'payments-api');
    expect(deployment?.status.availableReplicas).toBe(3);
    expect(
      api.every((p) =>
        p.status.conditions.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True'),
      ),
    ).toBe(true);
  });

  it('orders: DATABASE_URL comes from a ConfigMap that has it, and the new pods run without restarts', () => {
    const fixed = demoFixFor('orders')?.apply(broken) as DemoCluster;
    const pods = objectsIn(fixed, 'orders', 'Pod');
    expect(pods).toHaveLength(2);
    const configMaps = objectsIn(fixed, 'orders', 'ConfigMap');
    for (const pod of pods) {
      const env = pod.spec.containers[0].env as Array<{
        name: string;
        valueFrom?: { configMapKeyRef?: { name: string; key: string } };
      }>;
      const ref = env.find((e) => e.name === 'DATABASE_URL')?.valueFrom?.configMapKeyRef;
      expect(ref).toBeDefined();
      expect(configMaps.find((c) => c.metadata.name === ref?.name)?.['data']).toHaveProperty(ref?.key ?? '');
      const status = pod.status.containerStatuses[0];
      expect(status).toMatchObject({ ready: true, restartCount: 0 });
      expect(status.state.running).toBeDefined();
      // The new containers log a normal start, and nothing secret.
      const log = fixed.logs[`orders/${pod.metadata.name}/order-worker`] ?? '';
      expect(log).toMatch(/connected to database/);
      expect(log).not.toMatch(/Sup3rS3cret|Bearer/);
    }
    expect(Object.keys(fixed.logs).filter((k) => k.startsWith('orders/') && k.endsWith(':previous'))).toEqual([]);
  });

  it('inventory: the pods are Ready, the endpoints list them as ready, and the route has backends', () => {
    const fixed = demoFixFor('inventory')?.apply(broken) as DemoCluster;
    const endpoints = objectsIn(fixed, 'inventory', 'Endpoints')[0];
    const subsets = endpoints?.['subsets'] as Array<{ addresses?: unknown[]; notReadyAddresses?: unknown[] }>;
    expect(subsets.flatMap((s) => s.addresses ?? [])).toHaveLength(2);
    expect(subsets.flatMap((s) => s.notReadyAddresses ?? [])).toEqual([]);
    for (const pod of objectsIn(fixed, 'inventory', 'Pod')) {
      expect(pod.status.containerStatuses[0].ready).toBe(true);
      expect(pod.status.conditions.find((c: { type: string }) => c.type === 'Ready').status).toBe('True');
    }
  });

  it('refuses a cluster without the namespace, naming it', () => {
    expect(() => demoFixFor('orders')?.apply({ objects: [], logs: {} })).toThrow(DemoFixError);
    expect(() => demoFixFor('orders')?.apply({ objects: [], logs: {} })).toThrow(/no namespace orders/);
  });
});

describe('the demo cluster control', () => {
  const make = () => {
    const served: DemoCluster[] = [];
    const control = createDemoClusterControl({
      broken,
      serve: (cluster) => served.push(cluster),
      clock: () => new Date('2026-01-02T03:04:05Z'),
    });
    return { control, served };
  };

  it('lists every demo namespace, all broken but the healthy one', () => {
    const view = make().control.view();
    expect(view.namespaces.map((n) => [n.namespace, n.status])).toEqual([
      ['ml-team', 'broken'],
      ['payments', 'broken'],
      ['orders', 'broken'],
      ['inventory', 'broken'],
      ['wiki', 'healthy'],
    ]);
    expect(view.namespaces.find((n) => n.namespace === 'orders')?.fix?.rootCause).toBe(
      'CONTAINER_CRASHLOOP_CONFIG_ERROR',
    );
    expect(view.namespaces.find((n) => n.namespace === 'wiki')?.fix).toBeUndefined();
  });

  it('serves the fixed namespaces together, and a restore brings back exactly the original fault', () => {
    const { control, served } = make();
    expect(control.fix('orders')).toMatchObject({
      changed: true,
      namespace: { status: 'fixed', changedAt: '2026-01-02T03:04:05.000Z' },
    });
    expect(control.fix('payments').changed).toBe(true);
    const both = served.at(-1) as DemoCluster;
    expect(both).toEqual(demoFixFor('orders')?.apply(demoFixFor('payments')?.apply(broken) as DemoCluster));
    expect(control.fix('orders').changed).toBe(false);
    expect(served).toHaveLength(2);
    control.restore('orders');
    expect(served.at(-1)).toEqual(demoFixFor('payments')?.apply(broken));
    control.restore('payments');
    expect(served.at(-1)).toEqual(broken);
    expect(control.restore('payments').changed).toBe(false);
    expect(control.view().namespaces.every((n) => n.status !== 'fixed')).toBe(true);
  });

  it('refuses the healthy namespace and unknown ones with reasons', () => {
    const { control, served } = make();
    expect(() => control.fix('wiki')).toThrow(expect.objectContaining({ reason: 'healthy' }));
    expect(() => control.restore('kube-system')).toThrow(DemoClusterError);
    expect(() => control.restore('kube-system')).toThrow(/not a demo namespace.*ml-team, payments, orders, inventory/);
    expect(served).toEqual([]);
  });

  it('keeps serving the earlier cluster when serving the new one fails', () => {
    let fail = true;
    const control = createDemoClusterControl({
      broken,
      serve: () => {
        if (fail) throw new Error('server closed');
      },
    });
    expect(() => control.fix('orders')).toThrow('server closed');
    expect(control.view().namespaces.find((n) => n.namespace === 'orders')?.status).toBe('broken');
    fail = false;
    expect(control.fix('orders').changed).toBe(true);
  });
});

describe('npm start and the demo cluster', () => {
  const running = (cluster: RunningCalmops['cluster']) =>
    ({
      mode: 'sandbox',
      origin: 'http://127.0.0.1:3000',
      sandboxUrl: 'http://127.0.0.1:3000/sandbox/',
      cluster,
      namespaces: [],
    }) as unknown as RunningCalmops;

  it('points at the panel with the demo only', () => {
    expect(banner(running({ kind: 'demo', file: DEMO_SNAPSHOT }))).toContain('run its fix from "Demo cluster"');
    expect(banner(running({ kind: 'snapshot', file: '/srv/x.yaml' }))).not.toContain('Demo cluster');
    expect(banner(running({ kind: 'kubeconfig', file: '/k' }))).not.toContain('Demo cluster');
  });
});
