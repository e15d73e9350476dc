import { describe, expect, it } from 'vitest';
import { parseSchedulingMessage } from '../../../../src/triage/analyze/scheduling.js';
import { makePod, node, type PodSpec, podEvent, run } from '../../../support/analyzers/units.js';

describe('parseSchedulingMessage', () => {
  it('reads counts and reasons from the modern message, ignoring the preemption part', () => {
    const parsed = parseSchedulingMessage(
      '0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {node-role.kubernetes.io/master: }. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.',
    );
    expect(parsed.totalNodes).toBe(3);
    expect(parsed.reasons.map((r) => [r.nodes, r.code])).toEqual([
      [1, 'POD_INSUFFICIENT_CPU'],
      [2, 'POD_UNTOLERATED_TAINT'],
    ]);
    expect(parsed.reasons[1]?.taint).toBe('{node-role.kubernetes.io/master: }');
  });

  it('handles the old taint wording, affinity, too many pods, memory and unbound claims', () => {
    const parsed = parseSchedulingMessage(
      "0/6 nodes are available: 1 node(s) had taint {node.kubernetes.io/not-ready: }, that the pod didn't tolerate, 1 node(s) didn't match pod anti-affinity rules, 2 Too many pods, 2 Insufficient memory.",
    );
    expect(parsed.reasons.map((r) => r.code)).toEqual([
      'POD_UNTOLERATED_TAINT',
      'POD_AFFINITY_MISMATCH',
      'POD_TOO_MANY_PODS',
      'POD_INSUFFICIENT_MEMORY',
    ]);
    expect(
      parseSchedulingMessage('0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.').reasons[0],
    ).toMatchObject({
      code: 'POD_UNBOUND_PVC',
      nodes: 3,
    });
  });
});

describe('scheduling names nodes and the autoscaler', () => {
  const pending = (name: string, extra: Partial<PodSpec> = {}) =>
    makePod(name, {
      owner: { kind: 'ReplicaSet', name: 'idx-7b5d9' },
      phase: 'Pending',
      containers: [{ name: 'idx', image: 'r/idx:1', resources: { requests: { memory: '12Gi', cpu: '3' } } }],
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
      ...extra,
    });

  it('names the tainted nodes, the nodes the pod may use with their allocatable, and every pending pod', () => {
    const msg =
      '0/4 nodes are available: 2 Insufficient memory, 2 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.';
    const objects = [
      node('gpu-1', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }),
      node('gpu-2', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }),
      node('gen-1', { memory: '14Gi' }),
      node('gen-2', { memory: '15Gi' }),
      pending('idx-7b5d9-bsh7s'),
      pending('idx-7b5d9-x5sxq'),
      podEvent('idx-7b5d9-bsh7s', 'FailedScheduling', msg, 1, { count: 11 }),
      podEvent(
        'idx-7b5d9-bsh7s',
        'NotTriggerScaleUp',
        "pod didn't trigger scale-up: 1 max node group size reached",
        1,
        {
          type: 'Normal',
        },
      ),
    ];
    const findings = run(['scheduling'], objects);
    const memory = findings.find((f) => f.code === 'POD_INSUFFICIENT_MEMORY');
    expect(memory?.evidence[0]).toContain('idx-7b5d9-bsh7s, idx-7b5d9-x5sxq');
    expect(memory?.message).toContain('the cluster autoscaler adds no node (1 max node group size reached)');
    expect(memory?.evidence.join('\n')).toContain(
      'pod requests memory 12Gi; allocatable memory of the 2 node(s) it may use: gen-2 15Gi, gen-1 14Gi',
    );
    const taint = findings.find((f) => f.code === 'POD_UNTOLERATED_TAINT');
    expect(taint?.evidence).toContain(
      'taint dedicated=gpu:NoSchedule on gpu-1, gpu-2; the pod has no toleration for it',
    );
  });

  it('shows the values the nodes carry for each key the nodeSelector requires', () => {
    const msg = "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.";
    const objects = [
      node('c6i-a', { labels: { 'node.kubernetes.io/instance-type': 'c6i.4xlarge' } }),
      node('c6i-b', { labels: { 'node.kubernetes.io/instance-type': 'c6i.4xlarge' } }),
      pending('tc-1', { nodeSelector: { 'node.kubernetes.io/instance-type': 'c5.4xlarge' } }),
      podEvent('tc-1', 'FailedScheduling', msg, 1),
    ];
    const [f] = run(['scheduling'], objects);
    expect(f?.code).toBe('POD_NODE_SELECTOR_MISMATCH');
    expect(f?.evidence).toContain("nodes' node.kubernetes.io/instance-type: c6i.4xlarge (c6i-a, c6i-b)");
  });
});
