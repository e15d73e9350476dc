import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../../src/triage/analyze/index.js';
import { parseEviction } from '../../../../src/triage/analyze/node-health.js';
import { classifyMountEvent } from '../../../../src/triage/analyze/volume-mount.js';
import type { Finding } from '../../../../src/triage/envelope/findings.js';
import { allowsNode, placementBlockers, tolerates } from '../../../../src/triage/kube/placement.js';
import { elideMiddle, leaseNameFor } from '../../../../src/triage/kube/storage.js';
import { attributeOwners } from '../../../../src/triage/rank/owners.js';
import { rankRootCauses } from '../../../../src/triage/rank/root-cause.js';

/**
 * The storage and node analyzers read evidence the way an engineer does: they name the object to change (the
 * provisioner's controller, the StorageClass, the PV, the VolumeAttachment, the node plugin DaemonSet, the workload
 * behind node pressure) and stay quiet, or keep the claim as the culprit, when the evidence says otherwise.
 */

const NOW = new Date('2026-05-04T12:00:00Z');
const NS = 'shop';

function ago(minutes: number): string {
  return new Date(NOW.getTime() - minutes * 60_000).toISOString();
}

function analyze(objects: KubeObject[], analyzers: string[], unavailable: string[] = []): Finding[] {
  const ctx = contextFromObjects({
    namespace: NS,
    now: NOW,
    objects,
    // biome-ignore lint/suspicious/noExplicitAny: test shorthand for ResourceKind
    unavailable: unavailable as any,
  });
  return runAnalyzers(
    analyzers.map((a) => getAnalyzer(a)),
    ctx,
  );
}

function only(findings: Finding[], code: string): Finding {
  const matching = findings.filter((f) => f.code === code);
  expect(matching.map((f) => f.code)).toEqual([code]);
  return matching[0]!;
}

function text(f: Finding): string {
  return [f.message, ...f.evidence].join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// Object builders: just the fields the analyzers read.

function namespace(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

function node(name: string, opts: { labels?: Record<string, string>; taints?: unknown[]; ready?: string } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...opts.labels } },
    spec: { ...(opts.taints ? { taints: opts.taints } : {}) },
    status: {
      allocatable: { memory: '16Gi', 'ephemeral-storage': '100Gi' },
      conditions: [
        { type: 'Ready', status: opts.ready ?? 'True', lastTransitionTime: ago(600), reason: 'KubeletReady' },
      ],
    },
  } as KubeObject;
}

function storageClass(name: string, provisioner: string, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, ...((extra.metadata as object) ?? {}) },
    provisioner,
    volumeBindingMode: 'Immediate',
    ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'metadata')),
  };
}

function pvc(name: string, spec: Record<string, unknown>, minutes = 20): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: NS, creationTimestamp: ago(minutes) },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } }, ...spec },
    status: { phase: 'Pending' },
  };
}

function event(
  kind: string,
  name: string,
  reason: string,
  message: string,
  opts: { type?: string; count?: number; minutes?: number; namespace?: string; seriesShape?: boolean } = {},
): KubeObject {
  const last = ago(opts.minutes ?? 1);
  const base = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${name}.${reason}.${Math.abs(hash(message))}`, namespace: opts.namespace ?? NS },
    involvedObject: { kind, name, namespace: opts.namespace ?? NS },
    reason,
    message,
    type: opts.type ?? 'Warning',
  };
  // events.k8s.io-style shape: eventTime and series instead of count and lastTimestamp.
  return opts.seriesShape
    ? { ...base, eventTime: ago(30), series: { count: opts.count ?? 5, lastObservedTime: last } }
    : { ...base, count: opts.count ?? 5, firstTimestamp: ago(30), lastTimestamp: last };
}

function hash(s: string): number {
  let h = 0;
  for (const c of s) h = (h * 31 + c.charCodeAt(0)) | 0;
  return h;
}

function pod(
  name: string,
  opts: {
    node?: string;
    claim?: string;
    labels?: Record<string, string>;
    owner?: { kind: string; name: string };
    phase?: string;
    ready?: boolean;
    namespace?: string;
    deleting?: string;
    status?: Record<string, unknown>;
    containers?: unknown[];
    conditions?: unknown[];
  } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: opts.namespace ?? NS,
      creationTimestamp: ago(30),
      labels: opts.labels ?? {},
      ...(opts.deleting ? { deletionTimestamp: opts.deleting } : {}),
      ...(opts.owner ? { ownerReferences: [{ ...opts.owner, controller: true }] } : {}),
    },
    spec: {
      ...(opts.node ? { nodeName: opts.node } : {}),
      containers: opts.containers ?? [{ name: 'app', image: 'app:1' }],
      volumes: opts.claim ? [{ name: 'data', persistentVolumeClaim: { claimName: opts.claim } }] : [],
    },
    status: {
      phase: opts.phase ?? 'Running',
      conditions: opts.conditions ?? [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }],
      ...opts.status,
    },
  };
}

function deployment(name: string, ns: string, spec: Record<string, unknown>, labels: Record<string, string> = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns, labels },
    spec,
    status: {},
  } as KubeObject;
}

function replicaSet(name: string, deploymentName: string): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name,
      namespace: NS,
      ownerReferences: [{ kind: 'Deployment', name: deploymentName, controller: true }],
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------

describe('pvc-binding: who provisions the claim', () => {
  const controllerTemplate = {
    metadata: { labels: { app: 'ebs-csi-controller' } },
    spec: {
      containers: [
        { name: 'ebs-plugin', image: 'public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.48.0' },
        { name: 'csi-provisioner', image: 'public.ecr.aws/csi-components/csi-provisioner:v5.3.0' },
      ],
    },
  };
  const csiDriver: KubeObject = {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIDriver',
    metadata: { name: 'ebs.csi.aws.com', labels: { 'app.kubernetes.io/name': 'aws-ebs-csi-driver' } },
  };
  const waiting = event(
    'PersistentVolumeClaim',
    'data-db-1',
    'ExternalProvisioning',
    "Waiting for a volume to be created either by the external provisioner 'ebs.csi.aws.com' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
    { type: 'Normal', count: 40 },
  );
  const claim = pvc('data-db-1', { storageClassName: 'gp3' });
  const sc = storageClass('gp3', 'ebs.csi.aws.com');

  it('names the controller Deployment scaled to 0 in another namespace and makes it the owner', () => {
    const controller = deployment(
      'ebs-csi-controller',
      'kube-system',
      { replicas: 0, template: controllerTemplate },
      { 'app.kubernetes.io/name': 'aws-ebs-csi-driver' },
    );
    const f = only(
      analyze([namespace(NS), claim, sc, waiting, controller, csiDriver], ['pvc-binding']),
      'PVC_PROVISIONER_MISSING',
    );
    expect(f.owner).toEqual({ kind: 'Deployment', name: 'ebs-csi-controller', namespace: 'kube-system' });
    expect(f.related).toContainEqual({ kind: 'StorageClass', name: 'gp3' });
    expect(f.message).toContain('Deployment kube-system/ebs-csi-controller is scaled to 0 replicas');
    expect(text(f)).toContain('shares app.kubernetes.io/name=aws-ebs-csi-driver with CSIDriver ebs.csi.aws.com');
    expect(f.confidence).toBeGreaterThanOrEqual(0.9);
  });

  it("follows the provisioner's leader-election Lease to the controller", () => {
    const controller = deployment('storage-controller', 'storage', { replicas: 2, template: controllerTemplate });
    controller.status = { availableReplicas: 0 };
    const lease: KubeObject = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: leaseNameFor('ebs.csi.aws.com'), namespace: 'storage' },
      spec: { holderIdentity: 'storage-controller-6b4d9f8c7d-h7x2k', renewTime: ago(120) },
    };
    expect(lease.metadata.name).toBe('ebs-csi-aws-com');
    const f = only(
      analyze([namespace(NS), claim, sc, waiting, controller, lease], ['pvc-binding']),
      'PVC_PROVISIONER_MISSING',
    );
    expect(f.owner?.name).toBe('storage-controller');
    expect(text(f)).toContain('has 0/2 replicas available');
    expect(text(f)).toContain('leader Lease ebs-csi-aws-com');
  });

  it('does not blame a controller that is running, and stays less sure', () => {
    const controller = deployment(
      'ebs-csi-controller',
      'kube-system',
      { replicas: 2, template: controllerTemplate },
      { 'app.kubernetes.io/name': 'aws-ebs-csi-driver' },
    );
    controller.status = { availableReplicas: 2 };
    const f = only(
      analyze([namespace(NS), claim, sc, waiting, controller, csiDriver], ['pvc-binding']),
      'PVC_PROVISIONER_MISSING',
    );
    expect(f.owner).toBeUndefined();
    expect(f.confidence).toBeLessThan(0.7);
    expect(f.message).toContain('has 2/2 replicas available');
  });

  it('falls back to a controller whose name shares the driver name, with less certainty', () => {
    const controller = deployment('ebs-csi-controller', 'kube-system', { replicas: 0, template: controllerTemplate });
    const f = only(
      analyze([namespace(NS), claim, sc, waiting, controller], ['pvc-binding']),
      'PVC_PROVISIONER_MISSING',
    );
    expect(f.owner?.name).toBe('ebs-csi-controller');
    expect(text(f)).toContain('its name shares "ebs" with ebs.csi.aws.com');
    expect(f.confidence).toBe(0.85);
  });

  it('ignores the top-level domain when matching names', () => {
    const controller = deployment('com-storage-controller', 'kube-system', {
      replicas: 0,
      template: controllerTemplate,
    });
    const f = only(
      analyze([namespace(NS), claim, sc, waiting, controller], ['pvc-binding']),
      'PVC_PROVISIONER_MISSING',
    );
    expect(f.owner).toBeUndefined();
  });

  it("does not tie another driver's controller to the provisioner by generic words", () => {
    const controller = deployment('ebs-csi-controller', 'kube-system', { replicas: 0, template: controllerTemplate });
    const rbd = storageClass('ceph-rbd', 'rbd.csi.ceph.com');
    const cephClaim = pvc('data-db-1', { storageClassName: 'ceph-rbd' });
    const cephWaiting = event(
      'PersistentVolumeClaim',
      'data-db-1',
      'ExternalProvisioning',
      "Waiting for a volume to be created either by the external provisioner 'rbd.csi.ceph.com' or manually by the system administrator.",
      { type: 'Normal' },
    );
    const f = only(
      analyze([namespace(NS), cephClaim, rbd, cephWaiting, controller], ['pvc-binding']),
      'PVC_PROVISIONER_MISSING',
    );
    expect(f.owner).toBeUndefined();
    expect(text(f)).not.toContain('ebs-csi-controller');
  });
});

describe('pvc-binding: classes', () => {
  const failedBinding = event(
    'PersistentVolumeClaim',
    'data-pg-0',
    'FailedBinding',
    'no persistent volumes available for this claim and no storage class is set',
    { type: 'Normal', count: 120 },
  );

  it('names the class whose is-default-class annotation was switched off, and quotes FailedBinding', () => {
    const longhorn = storageClass('longhorn', 'driver.longhorn.io', {
      metadata: { annotations: { 'storageclass.kubernetes.io/is-default-class': 'false' } },
    });
    const staticClass = storageClass('longhorn-static', 'driver.longhorn.io');
    const f = only(
      analyze([namespace(NS), pvc('data-pg-0', {}), longhorn, staticClass, failedBinding], ['pvc-binding']),
      'PVC_NO_DEFAULT_STORAGECLASS',
    );
    expect(f.owner).toEqual({ kind: 'StorageClass', name: 'longhorn' });
    expect(text(f)).toContain('no persistent volumes available for this claim and no storage class is set');
    expect(text(f)).toContain('is-default-class="false"');
  });

  it('falls back to the class that provisioned most volumes, and names none when that is a tie', () => {
    const pv = (name: string, cls: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': 'x' } },
      spec: { storageClassName: cls },
      status: { phase: 'Bound' },
    });
    const a = storageClass('fast', 'x.csi.io');
    const b = storageClass('slow', 'y.csi.io');
    const claim = pvc('data-pg-0', {});
    const lead = only(
      analyze([namespace(NS), claim, a, b, pv('p1', 'fast'), pv('p2', 'fast'), pv('p3', 'slow')], ['pvc-binding']),
      'PVC_NO_DEFAULT_STORAGECLASS',
    );
    expect(lead.owner?.name).toBe('fast');
    const tie = only(
      analyze([namespace(NS), claim, a, b, pv('p1', 'fast'), pv('p3', 'slow')], ['pvc-binding']),
      'PVC_NO_DEFAULT_STORAGECLASS',
    );
    expect(tie.owner).toBeUndefined();
  });

  it('suggests the existing class a mistyped name meant, and nothing when none is close', () => {
    const classes = [storageClass('gp3', 'ebs.csi.aws.com'), storageClass('gp3-enc', 'ebs.csi.aws.com')];
    const typo = only(
      analyze([namespace(NS), pvc('cache', { storageClassName: 'gp3-encrypted' }), ...classes], ['pvc-binding']),
      'PVC_STORAGECLASS_NOT_FOUND',
    );
    expect(typo.message).toContain('did you mean gp3-enc?');
    const far = only(
      analyze([namespace(NS), pvc('cache', { storageClassName: 'premium-rwx' }), ...classes], ['pvc-binding']),
      'PVC_STORAGECLASS_NOT_FOUND',
    );
    expect(far.message).not.toContain('did you mean');
  });
});

describe('pvc-binding: WaitForFirstConsumer with allowedTopologies', () => {
  const zonal = storageClass('gp3-zonal', 'ebs.csi.aws.com', {
    volumeBindingMode: 'WaitForFirstConsumer',
    allowedTopologies: [
      { matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['us-east-1a', 'us-east-1b'] }] },
    ],
  });
  const claim = pvc('data-search-0', { storageClassName: 'gp3-zonal' });
  const message =
    "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
  const consumer = pod('search-0', {
    claim: 'data-search-0',
    phase: 'Pending',
    conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }],
  });
  const west = ['us-west-2a', 'us-west-2b'].map((z, i) =>
    node(`n${i}`, { labels: { 'topology.kubernetes.io/zone': z } }),
  );

  it('blames the StorageClass when no node is in an allowed topology', () => {
    const f = only(analyze([namespace(NS), claim, zonal, consumer, ...west], ['pvc-binding']), 'PVC_TOPOLOGY_MISMATCH');
    expect(f.owner).toEqual({ kind: 'StorageClass', name: 'gp3-zonal' });
    expect(f.severity).toBe('high');
    expect(text(f)).toContain('topology.kubernetes.io/zone in (us-east-1a, us-east-1b)');
    expect(text(f)).toContain(
      '0 of 2 nodes match; the nodes are in topology.kubernetes.io/zone us-west-2a, us-west-2b',
    );
    expect(text(f)).toContain("didn't find available persistent volumes to bind");
  });

  it('does not blame the class when a node satisfies it', () => {
    const east = node('n9', { labels: { 'topology.kubernetes.io/zone': 'us-east-1a' } });
    const findings = analyze([namespace(NS), claim, zonal, consumer, ...west, east], ['pvc-binding']);
    expect(findings.map((f) => f.code)).toEqual(['PVC_WAIT_FOR_FIRST_CONSUMER']);
  });

  it('reads the scheduler verdict from an events.k8s.io-shaped event when nodes could not be read', () => {
    const quiet = pod('search-0', {
      claim: 'data-search-0',
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
    });
    const scheduling = event('Pod', 'search-0', 'FailedScheduling', message, { seriesShape: true });
    const f = only(
      analyze([namespace(NS), claim, zonal, quiet, scheduling], ['pvc-binding'], ['nodes']),
      'PVC_TOPOLOGY_MISMATCH',
    );
    expect(f.confidence).toBe(0.8);
    expect(f.owner?.name).toBe('gp3-zonal');
  });
});

describe('pvc-binding: static PVs', () => {
  const claim = pvc('media', {
    storageClassName: '',
    accessModes: ['ReadWriteMany'],
    selector: { matchLabels: { pv: 'media' } },
  });
  const pv = (source: Record<string, unknown>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'media-nfs', labels: { pv: 'media' } },
    spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '10Gi' }, ...source },
    status: { phase: 'Available' },
  });

  it('blames the PV made for the claim when its volume type supports the requested mode', () => {
    const f = only(
      analyze([namespace(NS), claim, pv({ nfs: { server: '10.0.0.1', path: '/x' } })], ['pvc-binding']),
      'PVC_PV_ACCESSMODE_MISMATCH',
    );
    expect(f.owner).toEqual({ kind: 'PersistentVolume', name: 'media-nfs' });
    expect(text(f)).toContain("it matches the claim's selector pv=media");
    expect(text(f)).toContain('a nfs volume supports RWX');
  });

  it('keeps the claim at fault when the volume type cannot provide the mode', () => {
    const f = only(
      analyze([namespace(NS), claim, pv({ awsElasticBlockStore: { volumeID: 'vol-1' } })], ['pvc-binding']),
      'PVC_PV_ACCESSMODE_MISMATCH',
    );
    expect(f.owner).toBeUndefined();
    expect(text(f)).toContain('a awsElasticBlockStore volume cannot provide RWX');
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('volume-mount: attach failures', () => {
  const deploy = 'grafana';
  const rs = replicaSet('grafana-abc', deploy);
  const claimBound: KubeObject = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'grafana', namespace: NS },
    spec: { volumeName: 'pvc-1' },
    status: { phase: 'Bound' },
  };
  const pv = (extra: Record<string, unknown> = {}): KubeObject => ({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pvc-1' },
    spec: {
      csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0abc' },
      claimRef: { name: 'grafana', namespace: NS },
      ...extra,
    },
    status: { phase: 'Bound' },
  });
  const newPod = pod('grafana-abc-new', {
    node: 'node-b',
    claim: 'grafana',
    phase: 'Pending',
    ready: false,
    owner: { kind: 'ReplicaSet', name: 'grafana-abc' },
  });

  it('names the VolumeAttachment still holding the volume on the old node, the node and the old pod', () => {
    const oldNode = node('node-a');
    oldNode.spec = { unschedulable: true };
    oldNode.status.volumesInUse = ['kubernetes.io/csi/ebs.csi.aws.com^vol-0abc'];
    const oldPod = pod('grafana-abc-old', {
      node: 'node-a',
      claim: 'grafana',
      phase: 'Succeeded',
      deleting: ago(15),
      owner: { kind: 'ReplicaSet', name: 'grafana-abc' },
    });
    const va: KubeObject = {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'VolumeAttachment',
      metadata: { name: 'csi-0123', creationTimestamp: ago(5000) },
      spec: { attacher: 'ebs.csi.aws.com', nodeName: 'node-a', source: { persistentVolumeName: 'pvc-1' } },
      status: { attached: true },
    };
    const multi = event(
      'Pod',
      'grafana-abc-new',
      'FailedAttachVolume',
      'Multi-Attach error for volume "pvc-1" Volume is already exclusively attached to one node and can\'t be attached to another',
    );
    const f = only(
      analyze(
        [namespace(NS), rs, claimBound, pv(), newPod, oldPod, oldNode, node('node-b'), va, multi],
        ['volume-mount'],
      ),
      'VOLUME_ATTACH_FAILED',
    );
    expect(f.owner).toEqual({ kind: 'VolumeAttachment', name: 'csi-0123' });
    expect(f.related).toContainEqual({ kind: 'Node', name: 'node-a' });
    expect(f.related).toContainEqual({ kind: 'Pod', name: 'grafana-abc-old', namespace: NS });
    expect(f.message).toContain('still attached to node node-a by VolumeAttachment csi-0123');
    expect(text(f)).toContain('cordoned (unschedulable); it still reports the volume in status.volumesInUse');
    expect(f.evidence.length).toBeLessThanOrEqual(5);
  });

  const zoneError =
    'rpc error: code = Internal desc = Could not attach volume "vol-0abc" to node "i-0def": could not attach volume "vol-0abc" to node "i-0def": operation error EC2: AttachVolume, https response error StatusCode: 400, RequestID: 536a6e56-7079-4a7f-afba-14ee485128a9, api error InvalidVolume.ZoneMismatch: The volume \'vol-0abc\' is not in the same availability zone as instance \'i-0def\'';
  const attachFailed = event(
    'Pod',
    'grafana-abc-new',
    'FailedAttachVolume',
    `AttachVolume.Attach failed for volume "pvc-1" : ${zoneError}`,
  );
  const nodeB = node('node-b', { labels: { 'topology.kubernetes.io/zone': 'us-east-1c' } });

  it('blames a PV without nodeAffinity for a zone mismatch, keeping the decisive end of the error', () => {
    const f = only(
      analyze([namespace(NS), rs, claimBound, pv(), newPod, nodeB, attachFailed], ['volume-mount']),
      'VOLUME_ATTACH_FAILED',
    );
    expect(f.owner).toEqual({ kind: 'PersistentVolume', name: 'pvc-1' });
    expect(text(f)).toContain('InvalidVolume.ZoneMismatch');
    expect(text(f)).toContain('PV pvc-1 has no nodeAffinity');
    expect(text(f)).toContain('us-east-1c');
    expect(f.evidence.every((e) => e.length <= 300)).toBe(true);
  });

  it('does not blame a PV that has nodeAffinity', () => {
    const withAffinity = pv({ nodeAffinity: { required: { nodeSelectorTerms: [] } } });
    const f = only(
      analyze([namespace(NS), rs, claimBound, withAffinity, newPod, nodeB, attachFailed], ['volume-mount']),
      'VOLUME_ATTACH_FAILED',
    );
    expect(f.owner?.kind).not.toBe('PersistentVolume');
  });
});

describe('volume-mount: CSI driver not registered on the node', () => {
  const driverEvent = event(
    'Pod',
    'trainer-abc-1',
    'FailedMount',
    'MountVolume.MountDevice failed for volume "pvc-9" : kubernetes.io/csi: attacher.MountDevice failed to create newCsiDriverClient: driver name efs.csi.aws.com not found in the list of registered CSI drivers',
  );
  const trainer = pod('trainer-abc-1', {
    node: 'gpu-1',
    claim: 'datasets',
    phase: 'Pending',
    ready: false,
    owner: { kind: 'ReplicaSet', name: 'trainer-abc' },
  });
  const gpu = node('gpu-1', { taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] });
  const nodePlugin = (tolerations: unknown[]): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'efs-csi-node', namespace: 'kube-system' },
    spec: {
      template: {
        spec: {
          tolerations,
          containers: [
            {
              name: 'csi-driver-registrar',
              env: [{ name: 'DRIVER_REG_SOCK_PATH', value: '/var/lib/kubelet/plugins/efs.csi.aws.com/csi.sock' }],
            },
          ],
        },
      },
    },
    status: { desiredNumberScheduled: 1, numberReady: 1 },
  });

  it('classifies the kubelet message', () => {
    const c = classifyMountEvent(
      {
        reason: 'FailedMount',
        message: driverEvent.message as string,
        type: 'Warning',
        count: 1,
        first: undefined,
        last: undefined,
        involvedKind: 'Pod',
        involvedName: 'x',
        fieldPath: undefined,
      },
      NS,
    );
    expect(c.code).toBe('VOLUME_CSI_DRIVER_NOT_REGISTERED');
    expect(c.object).toEqual({ kind: 'CSIDriver', name: 'efs.csi.aws.com' });
  });

  it('names the node plugin DaemonSet that does not tolerate the node taint', () => {
    const f = only(
      analyze(
        [
          namespace(NS),
          replicaSet('trainer-abc', 'trainer'),
          trainer,
          gpu,
          nodePlugin([{ key: 'CriticalAddonsOnly', operator: 'Exists' }]),
          driverEvent,
        ],
        ['volume-mount'],
      ),
      'VOLUME_CSI_DRIVER_NOT_REGISTERED',
    );
    expect(f.owner).toEqual({ kind: 'DaemonSet', name: 'efs-csi-node', namespace: 'kube-system' });
    expect(f.related).toContainEqual({ kind: 'Node', name: 'gpu-1' });
    expect(f.message).toContain('does not tolerate taint nvidia.com/gpu=true:NoSchedule');
  });

  it('reports the node plugin pod itself when the DaemonSet can run there', () => {
    const broken = pod('efs-csi-node-x', {
      namespace: 'kube-system',
      node: 'gpu-1',
      owner: { kind: 'DaemonSet', name: 'efs-csi-node' },
      ready: false,
      status: { containerStatuses: [{ name: 'app', state: { waiting: { reason: 'CrashLoopBackOff' } } }] },
    });
    const f = only(
      analyze(
        [
          namespace(NS),
          replicaSet('trainer-abc', 'trainer'),
          trainer,
          gpu,
          nodePlugin([{ operator: 'Exists' }]),
          broken,
          driverEvent,
        ],
        ['volume-mount'],
      ),
      'VOLUME_CSI_DRIVER_NOT_REGISTERED',
    );
    expect(f.owner?.name).toBe('efs-csi-node');
    expect(f.message).toContain('node plugin pod efs-csi-node-x on node gpu-1 is not registered');
    expect(f.message).toContain('CrashLoopBackOff');
  });
});

// ---------------------------------------------------------------------------------------------------------------

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

describe('placement and text helpers', () => {
  it('matches tolerations the way the scheduler does', () => {
    const taint = { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' };
    expect(tolerates({ operator: 'Exists' }, taint)).toBe(true);
    expect(tolerates({ key: 'nvidia.com/gpu', operator: 'Exists' }, taint)).toBe(true);
    expect(tolerates({ key: 'nvidia.com/gpu', value: 'true' }, taint)).toBe(true);
    expect(tolerates({ key: 'nvidia.com/gpu', value: 'false' }, taint)).toBe(false);
    expect(tolerates({ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoExecute' }, taint)).toBe(false);
  });

  it('gives DaemonSet pods the tolerations their controller adds, and checks selectors and affinity', () => {
    const cordoned = node('n1', {
      labels: { 'kubernetes.io/os': 'linux' },
      taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }],
    });
    expect(placementBlockers({}, cordoned, { daemonSet: true })).toEqual([]);
    expect(placementBlockers({}, cordoned)).toEqual([
      'does not tolerate taint node.kubernetes.io/unschedulable:NoSchedule',
    ]);
    expect(
      placementBlockers({ nodeSelector: { 'kubernetes.io/os': 'windows' } }, cordoned, { daemonSet: true }),
    ).toEqual(['nodeSelector kubernetes.io/os=windows not on node']);
    const affinity = {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/os', operator: 'NotIn', values: ['linux'] }] },
            ],
          },
        },
      },
    };
    expect(placementBlockers(affinity, cordoned, { daemonSet: true })).toEqual([
      'required node affinity does not match the node',
    ]);
  });

  it('evaluates allowedTopologies terms as ORed, expressions as ANDed', () => {
    const n = node('n1', { labels: { 'topology.kubernetes.io/zone': 'a', tier: 'x' } });
    expect(allowsNode(undefined, n)).toBe(true);
    expect(allowsNode([{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['b'] }] }], n)).toBe(
      false,
    );
    expect(
      allowsNode(
        [
          { matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['b'] }] },
          { matchLabelExpressions: [{ key: 'tier', values: ['x'] }] },
        ],
        n,
      ),
    ).toBe(true);
  });

  it('keeps the head and the decisive tail of a long error', () => {
    const long = `AttachVolume.Attach failed: ${'x'.repeat(500)} api error InvalidVolume.ZoneMismatch: not in the same zone`;
    const out = elideMiddle(long);
    expect(out.length).toBeLessThanOrEqual(300);
    expect(out.startsWith('AttachVolume.Attach failed')).toBe(true);
    expect(out.endsWith('InvalidVolume.ZoneMismatch: not in the same zone')).toBe(true);
  });
});
