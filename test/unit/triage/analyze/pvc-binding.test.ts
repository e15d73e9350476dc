import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { leaseNameFor } from '../../../../src/triage/kube/storage.js';
/**
 * The storage and node analyzers read evidence the way an engineer does: they name the object to change (the
 * provisioner's controller, the StorageClass, the PV, the VolumeAttachment, the node plugin DaemonSet, the workload
 * behind node pressure) and stay quiet, or keep the claim as the culprit, when the evidence says otherwise.
 */
import {
  ago,
  analyze,
  deployment,
  event,
  NS,
  namespace,
  node,
  only,
  pod,
  pvc,
  storageClass,
  text,
} from '../../../support/analyzers/storage-nodes.js';

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
