import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../../src/triage/analyze/index.js';
import { nodePoolZones, volumeZones } from '../../../../src/triage/analyze/volume-zone.js';

const NOW = new Date('2026-05-04T08:00:00Z');
const NS = 'orders';

const node = (name: string, zone: string): KubeObject =>
  ({ kind: 'Node', metadata: { name, labels: { 'topology.kubernetes.io/zone': zone } } }) as KubeObject;

const pool = (name: string, zones: string[], operator = 'In'): KubeObject =>
  ({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: { template: { spec: { requirements: [{ key: 'topology.kubernetes.io/zone', operator, values: zones }] } } },
  }) as KubeObject;

const pv: KubeObject = {
  kind: 'PersistentVolume',
  metadata: { name: 'pvc-0a1b' },
  spec: {
    nodeAffinity: {
      required: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'topology.ebs.csi.aws.com/zone', operator: 'In', values: ['eu-central-1c'] }] },
        ],
      },
    },
  },
} as KubeObject;

const claim: KubeObject = {
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'data-queue-1', namespace: NS },
  spec: { volumeName: 'pvc-0a1b' },
  status: { phase: 'Bound' },
} as KubeObject;

const pending: KubeObject = {
  kind: 'Pod',
  metadata: {
    name: 'queue-1',
    namespace: NS,
    ownerReferences: [{ kind: 'StatefulSet', name: 'queue', controller: true }],
  },
  spec: {
    containers: [{ name: 'queue' }],
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-queue-1' } }],
  },
  status: { phase: 'Pending' },
} as KubeObject;

const conflict: KubeObject = {
  kind: 'Event',
  metadata: { name: 'queue-1.1', namespace: NS },
  involvedObject: { kind: 'Pod', name: 'queue-1', namespace: NS },
  reason: 'FailedScheduling',
  type: 'Warning',
  message:
    '0/2 nodes are available: 2 node(s) had volume node affinity conflict. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.',
  lastTimestamp: '2026-05-04T07:58:00Z',
  count: 12,
} as KubeObject;

function analyze(objects: KubeObject[]) {
  const ctx = contextFromObjects({ namespace: NS, now: NOW, objects });
  return runAnalyzers([getAnalyzer('volume-zone')], ctx);
}

const base = [pending, claim, pv, conflict, node('n1', 'eu-central-1a'), node('n2', 'eu-central-1b')];

describe('volume-zone analyzer', () => {
  it('reads the zone from any provider zone label, and a pool that leaves it out', () => {
    expect(volumeZones(pv)).toEqual(['eu-central-1c']);
    expect(nodePoolZones(pool('p', ['eu-central-1a']), ['eu-central-1c'])).toEqual({
      allows: false,
      allowed: ['eu-central-1a'],
    });
    expect(nodePoolZones(pool('p', ['eu-central-1c'], 'NotIn'), ['eu-central-1c'])?.allows).toBe(false);
    expect(nodePoolZones({ kind: 'NodePool', metadata: { name: 'p' }, spec: {} } as KubeObject, ['x'])).toBeUndefined();
  });

  it("names the NodePool that cannot launch a node in the volume's zone, with the workload it holds", () => {
    const findings = analyze([...base, pool('general', ['eu-central-1a', 'eu-central-1b'])]);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      code: 'NODEPOOL_EXCLUDES_VOLUME_ZONE',
      resource: { kind: 'NodePool', name: 'general' },
    });
    expect(findings[0]?.related).toContainEqual({ kind: 'StatefulSet', name: 'queue', namespace: NS });
    expect(findings[0]?.change).toContain('add eu-central-1c');
    expect(findings[0]?.evidence.join('\n')).toContain('volume node affinity conflict');
  });

  it('stays quiet when a node is in the zone, a pool may launch there, or the pools were not read', () => {
    expect(analyze([...base, node('n3', 'eu-central-1c'), pool('general', ['eu-central-1a'])])).toEqual([]);
    expect(analyze([...base, pool('general', ['eu-central-1a']), pool('zonal-c', ['eu-central-1c'])])).toEqual([]);
    expect(analyze(base)).toEqual([]);
    const blind = contextFromObjects({
      namespace: NS,
      now: NOW,
      objects: [...base, pool('general', ['eu-central-1a'])],
      unavailable: ['persistentvolumes'],
    });
    expect(runAnalyzers([getAnalyzer('volume-zone')], blind)).toEqual([]);
  });
});
