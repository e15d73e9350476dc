import { createClusterReader } from '../../src/cluster/reader.js';
import type { SnapshotLogs } from '../../src/cluster/snapshot.js';
import type { KubeObject } from '../../src/cluster/types.js';
import { kubeconfigYaml } from '../../src/snapshot-api/kubeconfig.js';
import { type FaultRule, type SnapshotServer, startSnapshotServer } from '../../src/snapshot-api/server.js';
import type { TriageRequest } from '../../src/triage/engine.js';
import { silentLogger } from '../../src/triage/engine.js';
import { triage } from '../../src/triage/index.js';

/** Serve objects through the snapshot API server and triage them through the real reader. */
export async function withSnapshotServer<T>(
  input: {
    objects: readonly KubeObject[];
    logs?: SnapshotLogs;
    latencyMs?: number;
    faults?: FaultRule[];
    faultRate?: number;
    seed?: number;
  },
  body: (server: SnapshotServer) => Promise<T>,
): Promise<T> {
  const server = await startSnapshotServer({ port: 0, ...input });
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

export function triageAt(url: string, request: TriageRequest, requestTimeoutMs = 5_000) {
  const reader = createClusterReader({ kubeconfig: { yaml: kubeconfigYaml({ server: url }) }, requestTimeoutMs });
  return triage(request, { reader, logger: silentLogger });
}

const at = (minutes: number) => new Date(Date.UTC(2025, 0, 1, 10, minutes)).toISOString();

/** A namespace whose claim waits for a StorageClass nobody marked default: the pvc-binding intent's classic. */
export function pvcScenario(namespace = 'student03'): KubeObject[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data-db-0', namespace, uid: 'pvc-1', creationTimestamp: at(0) },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      status: { phase: 'Pending' },
    },
    {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'data-db-0.1', namespace, uid: 'ev-1', creationTimestamp: at(1) },
      involvedObject: { kind: 'PersistentVolumeClaim', name: 'data-db-0', namespace },
      reason: 'FailedBinding',
      message: 'no persistent volumes available for this claim and no storage class is set',
      type: 'Normal',
      count: 12,
      firstTimestamp: at(1),
      lastTimestamp: at(20),
    },
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'standard', uid: 'sc-1', creationTimestamp: at(0) },
      provisioner: 'kubernetes.io/no-provisioner',
    },
  ];
}
