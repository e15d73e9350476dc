import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../../src/triage/analyze/index.js';

const NOW = new Date('2026-06-02T10:00:00Z');

const pool = (used: string): KubeObject =>
  ({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'burst' },
    spec: { limits: { cpu: '32' } },
    status: { resources: { cpu: used, nodes: '4' } },
  }) as KubeObject;

const event = (namespace: string, pod: string): KubeObject =>
  ({
    kind: 'Event',
    metadata: { name: `${pod}.1`, namespace },
    involvedObject: { kind: 'Pod', name: pod, namespace },
    reason: 'FailedScheduling',
    type: 'Warning',
    source: { component: 'karpenter' },
    message: 'Failed to schedule pod, all available instance types exceed limits for nodepool: "burst"',
    lastTimestamp: '2026-06-02T09:58:00Z',
    count: 9,
  }) as KubeObject;

function analyze(objects: KubeObject[]) {
  const ctx = contextFromObjects({ namespace: 'shop', now: NOW, objects });
  return runAnalyzers([getAnalyzer('add-ons')], ctx).filter((f) => f.code === 'NODEPOOL_LIMIT_REACHED');
}

describe('NodePool limits seen from another namespace', () => {
  it('names the NodePool when pods of another namespace wait on it and its status shows the limit reached', () => {
    const [f] = analyze([pool('32'), event('batch', 'renderer-1'), event('batch', 'renderer-2')]);
    expect(f).toMatchObject({ resource: { kind: 'NodePool', name: 'burst' } });
    expect(f?.related).toContainEqual({ kind: 'Pod', name: 'renderer-1', namespace: 'batch' });
    expect(f?.message).toContain('2 pending pod(s)');
  });

  it('stays quiet when the NodePool has room now, whatever older pods of another namespace said', () => {
    expect(analyze([pool('20'), event('batch', 'renderer-1')])).toEqual([]);
  });
});
