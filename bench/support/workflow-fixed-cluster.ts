import type { KubeObject } from '../../src/cluster/types.js';

/**
 * The `pvc-binding--no-default-storageclass` snapshot after the approved fix was applied: gp2-legacy is marked the
 * default StorageClass, the claim bound to a new volume, the pod that waited on it runs, and the warnings stopped.
 */
export function withDefaultStorageClassFix(objects: readonly KubeObject[]): KubeObject[] {
  const fixed: KubeObject[] = [];
  for (const original of objects) {
    const o = structuredClone(original);
    if (o.kind === 'Event' && o['type'] === 'Warning') continue;
    if (o.kind === 'StorageClass' && o.metadata.name === 'gp2-legacy') {
      o.metadata.annotations = { ...o.metadata.annotations, 'storageclass.kubernetes.io/is-default-class': 'true' };
    }
    if (o.kind === 'PersistentVolumeClaim' && o.metadata.name === 'jupyter-data') {
      o.spec = { ...o.spec, storageClassName: 'gp2-legacy', volumeName: 'pvc-41db6f63' };
      o.status = { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '10Gi' } };
    }
    if (o.kind === 'Pod' && o.metadata.namespace === 'student03') {
      const containers = o.spec.containers as Array<{ name: string; image: string }>;
      o.spec = { ...o.spec, nodeName: 'ip-10-1-1-20.ec2.internal' };
      o.status = {
        phase: 'Running',
        conditions: [
          { type: 'PodScheduled', status: 'True' },
          { type: 'Ready', status: 'True' },
          { type: 'ContainersReady', status: 'True' },
        ],
        containerStatuses: containers.map((c) => ({
          name: c.name,
          image: c.image,
          imageID: '',
          ready: true,
          restartCount: 0,
          state: { running: { startedAt: '2025-11-20T09:40:00Z' } },
        })),
      };
    }
    fixed.push(o);
  }
  fixed.push({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pvc-41db6f63', uid: 'pv-41db6f63', creationTimestamp: '2025-11-20T09:35:00Z' },
    spec: {
      capacity: { storage: '10Gi' },
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'gp2-legacy',
      persistentVolumeReclaimPolicy: 'Delete',
      claimRef: { kind: 'PersistentVolumeClaim', namespace: 'student03', name: 'jupyter-data' },
    },
    status: { phase: 'Bound' },
  });
  return fixed;
}
