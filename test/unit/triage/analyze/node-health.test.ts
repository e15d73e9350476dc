import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../../src/triage/analyze/index.js';
import { parseEviction } from '../../../../src/triage/analyze/node-health.js';
import { attributeOwners } from '../../../../src/triage/rank/owners.js';
import { rankRootCauses } from '../../../../src/triage/rank/root-cause.js';
/**
 * The storage and node analyzers read evidence the way an engineer does: they name the object to change (the
 * provisioner's controller, the StorageClass, the PV, the VolumeAttachment, the node plugin DaemonSet, the workload
 * behind node pressure) and stay quiet, or keep the claim as the culprit, when the evidence says otherwise.
 */
import {
  ago,
  analyze,
  NOW,
  NS,
  namespace,
  node,
  only,
  pod,
  replicaSet,
  text,
} from '../../../support/analyzers/storage-nodes.js';

describe('node-health: a node that stopped reporting', () => {
  const down = (): KubeObject => {
    const n = node('w3', {
      ready: 'Unknown',
      taints: [
        { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule', timeAdded: ago(12) },
        { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: ago(12) },
      ],
    });
    n.status.conditions = [
      {
        type: 'Ready',
        status: 'Unknown',
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
        lastTransitionTime: ago(12),
      },
    ];
    return n;
  };
  const lease = (minutes: number): KubeObject => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'w3', namespace: 'kube-node-lease' },
    spec: { holderIdentity: 'w3', leaseDurationSeconds: 40, renewTime: ago(minutes) },
  });
  const db = pod('ledger-db-0', {
    node: 'w3',
    labels: { app: 'ledger-db' },
    owner: { kind: 'StatefulSet', name: 'ledger-db' },
    deleting: ago(6),
    ready: false,
  });
  const svc: KubeObject = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'ledger-db', namespace: NS },
    spec: { selector: { app: 'ledger-db' } },
  };
  const pv: KubeObject = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pvc-led' },
    spec: { claimRef: { name: 'data-ledger-db-0', namespace: NS } },
  };
  const va: KubeObject = {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttachment',
    metadata: { name: 'csi-led' },
    spec: { nodeName: 'w3', source: { persistentVolumeName: 'pvc-led' } },
    status: { attached: true },
  };

  it('cites the stale Lease, the taints, the stranded StatefulSet pod and the attached volume', () => {
    const f = only(analyze([namespace(NS), down(), lease(13), db, svc, pv, va], ['node-health']), 'NODE_NOT_READY');
    expect(f.severity).toBe('critical');
    expect(f.message).toContain('Kubelet stopped posting node status.');
    expect(f.message).toContain('Service ledger-db has no ready pod elsewhere');
    const all = text(f);
    expect(all).toContain('node.kubernetes.io/unreachable:NoSchedule,NoExecute (added 12m ago)');
    expect(all).toContain('Lease kube-node-lease/w3 last renewed 13m ago');
    expect(all).toContain('the kubelet has stopped heartbeating');
    expect(all).toContain('StatefulSet ledger-db will not recreate ledger-db-0');
    expect(all).toContain('VolumeAttachment csi-led keeps PV pvc-led (claim shop/data-ledger-db-0) attached to w3');
    expect(f.evidence.length).toBeLessThanOrEqual(5);
    expect(f.related).toEqual(
      expect.arrayContaining([
        { kind: 'Pod', name: 'ledger-db-0', namespace: NS },
        { kind: 'Service', name: 'ledger-db', namespace: NS },
        { kind: 'Lease', name: 'w3', namespace: 'kube-node-lease' },
        { kind: 'VolumeAttachment', name: 'csi-led' },
      ]),
    );
  });

  it('says the kubelet still heartbeats when the Lease is fresh', () => {
    const f = only(analyze([namespace(NS), down(), lease(0.2), db], ['node-health']), 'NODE_NOT_READY');
    expect(text(f)).toContain('the kubelet still heartbeats');
  });

  it('outranks the Service that lost its only endpoint', () => {
    const endpoints: KubeObject = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'ledger-db', namespace: NS },
      subsets: [{ notReadyAddresses: [{ ip: '10.0.0.9', targetRef: { kind: 'Pod', name: 'ledger-db-0' } }] }],
    };
    const objects = [namespace(NS), down(), lease(13), db, svc, endpoints];
    const ctx = contextFromObjects({ namespace: NS, now: NOW, objects });
    const findings = attributeOwners(
      runAnalyzers([getAnalyzer('node-health'), getAnalyzer('service-endpoints')], ctx),
      ctx,
      { podsComplete: true },
    );
    const causes = rankRootCauses(findings, { now: NOW, events: [] });
    expect(causes[0]?.resource).toEqual({ kind: 'Node', name: 'w3' });
    expect(causes[0]?.chain).toContainEqual({ kind: 'Service', name: 'ledger-db', namespace: NS });
  });

  it('names the CNI DaemonSet that cannot run on a node whose network plugin is not ready', () => {
    const n = node('w4', { ready: 'False', taints: [{ key: 'dedicated', value: 'edge', effect: 'NoSchedule' }] });
    n.status.conditions = [
      {
        type: 'Ready',
        status: 'False',
        reason: 'KubeletNotReady',
        message:
          'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized',
        lastTransitionTime: ago(20),
      },
    ];
    const cni: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'calico-node', namespace: 'kube-system' },
      spec: {
        template: {
          spec: {
            tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' }],
            volumes: [{ name: 'cni-net-dir', hostPath: { path: '/etc/cni/net.d' } }],
          },
        },
      },
    };
    const web = pod('web-1', { node: 'w4', ready: false });
    const f = only(analyze([namespace(NS), n, cni, web], ['node-health']), 'NODE_NOT_READY');
    expect(f.owner).toEqual({ kind: 'DaemonSet', name: 'calico-node', namespace: 'kube-system' });
    expect(text(f)).toContain('does not tolerate taint dedicated=edge:NoSchedule');
  });
});

describe('node-health: pressure and evictions', () => {
  const pressured = (type: string, status: string): KubeObject => {
    const n = node('m1', { taints: [{ key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }] });
    n.status.conditions.push({
      type,
      status,
      reason: 'KubeletHasInsufficientMemory',
      message: 'kubelet has insufficient memory available',
      lastTransitionTime: ago(6),
    });
    return n;
  };
  const evicted = (name: string, rsName: string, message: string): KubeObject =>
    pod(name, {
      node: 'm1',
      phase: 'Failed',
      owner: { kind: 'ReplicaSet', name: rsName },
      status: { reason: 'Evicted', message },
      containers: [{ name: name.split('-')[0], resources: { requests: { memory: '512Mi' } } }],
    });
  const hog = evicted(
    'report-abc-1',
    'report-abc',
    'The node was low on resource: memory. Threshold quantity: 100Mi, available: 78836Ki. Container report was using 6012380Ki, request is 512Mi, has larger consumption of memory. ',
  );
  const victim = evicted(
    'pdf-def-1',
    'pdf-def',
    'The node was low on resource: memory. Threshold quantity: 100Mi, available: 97112Ki. Container pdf was using 412664Ki, which exceeds its request of 0. ',
  );
  const owners = [replicaSet('report-abc', 'report'), replicaSet('pdf-def', 'pdf')];

  it('parses both kubelet eviction message formats', () => {
    expect(parseEviction(hog.status.message)).toEqual({
      resource: 'memory',
      containers: [{ name: 'report', usage: 6012380 * 1024, request: 512 * 2 ** 20 }],
    });
    expect(parseEviction(victim.status.message).containers).toEqual([
      { name: 'pdf', usage: 412664 * 1024, request: 0 },
    ]);
    expect(parseEviction('The node had condition: [DiskPressure]. ')).toEqual({ containers: [] });
  });

  it('makes the workload far beyond its request the owner of the pressure, not its victims', () => {
    const f = only(
      analyze([namespace(NS), pressured('MemoryPressure', 'True'), hog, victim, ...owners], ['node-health']),
      'NODE_PRESSURE',
    );
    expect(f.owner).toEqual({ kind: 'Deployment', name: 'report', namespace: NS });
    expect(text(f)).toContain('The node was low on resource: memory.');
    expect(text(f)).toContain('was using 5.7Gi of memory against a request of 512Mi and no memory limit');
    expect(f.evidence[0]).toContain('MemoryPressure=True');
    expect(f.evidence[0]).toContain('node.kubernetes.io/memory-pressure:NoSchedule');
  });

  it('names no owner when the evicted pods only slightly exceed their requests', () => {
    const f = only(
      analyze([namespace(NS), pressured('MemoryPressure', 'True'), victim, ...owners], ['node-health']),
      'NODE_PRESSURE',
    );
    expect(f.owner).toBeUndefined();
  });

  it('treats a pressure condition that has cleared as history', () => {
    const findings = analyze([namespace(NS), pressured('MemoryPressure', 'False'), hog, ...owners], ['node-health']);
    expect(findings.map((f) => f.code)).not.toContain('NODE_PRESSURE');
  });
});

// ---------------------------------------------------------------------------------------------------------------
