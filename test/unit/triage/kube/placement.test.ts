import { describe, expect, it } from 'vitest';
import { allowsNode, placementBlockers, tolerates } from '../../../../src/triage/kube/placement.js';
import { elideMiddle } from '../../../../src/triage/kube/storage.js';
/**
 * The storage and node analyzers read evidence the way an engineer does: they name the object to change (the
 * provisioner's controller, the StorageClass, the PV, the VolumeAttachment, the node plugin DaemonSet, the workload
 * behind node pressure) and stay quiet, or keep the claim as the culprit, when the evidence says otherwise.
 */
import { node } from '../../../support/analyzers/storage-nodes.js';

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
