import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { classifyMountEvent } from '../../../../src/triage/analyze/volume-mount.js';
/**
 * The storage and node analyzers read evidence the way an engineer does: they name the object to change (the
 * provisioner's controller, the StorageClass, the PV, the VolumeAttachment, the node plugin DaemonSet, the workload
 * behind node pressure) and stay quiet, or keep the claim as the culprit, when the evidence says otherwise.
 */
import {
  ago,
  analyze,
  event,
  NS,
  namespace,
  node,
  only,
  pod,
  replicaSet,
  text,
} from '../../../support/analyzers/storage-nodes.js';

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
