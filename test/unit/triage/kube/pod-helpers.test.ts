import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { contextFromObjects } from '../../../../src/triage/analyze/index.js';
import {
  forEachCrashedContainer,
  type PodContainer,
  worstFirst,
} from '../../../../src/triage/kube/container-groups.js';
import { nameList } from '../../../../src/triage/kube/evidence-list.js';
import { containers } from '../../../../src/triage/kube/pods.js';

const now = new Date('2025-06-01T09:00:00Z');

function pod(
  name: string,
  statuses: Array<{ name: string; restartCount?: number; waiting?: string; finishedAt?: string; ready?: boolean }>,
  namespace = 'shop',
): KubeObject {
  return {
    kind: 'Pod',
    metadata: { name, namespace },
    spec: { containers: statuses.map((s) => ({ name: s.name })) },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: statuses.every((s) => s.ready !== false) ? 'True' : 'False' }],
      containerStatuses: statuses.map((s) => ({
        name: s.name,
        ready: s.ready !== false,
        restartCount: s.restartCount ?? 0,
        ...(s.waiting ? { state: { waiting: { reason: s.waiting } } } : { state: { running: {} } }),
        ...(s.finishedAt ? { lastState: { terminated: { exitCode: 1, finishedAt: s.finishedAt } } } : {}),
      })),
    },
  };
}

describe('forEachCrashedContainer', () => {
  it("visits the namespace's containers that restarted or back off, in name order, beside their pods", () => {
    const ctx = contextFromObjects({
      namespace: 'shop',
      now,
      objects: [
        pod('web-2', [{ name: 'app', restartCount: 3 }, { name: 'proxy' }]),
        pod('web-1', [
          { name: 'app', waiting: 'CrashLoopBackOff' },
          { name: 'proxy', restartCount: 1 },
        ]),
        pod('web-3', [{ name: 'app', waiting: 'ContainerCreating' }]),
        pod('other-1', [{ name: 'app', restartCount: 9 }], 'elsewhere'),
      ],
    });
    const seen: string[] = [];
    forEachCrashedContainer(ctx, (p, c) => seen.push(`${p.metadata.name}/${c.name}`));
    expect(seen).toEqual(['web-1/app', 'web-1/proxy', 'web-2/app']);
  });
});

describe('worstFirst', () => {
  it('leads with the replica backing off, then the not ready, then the latest crash, ties in name order', () => {
    const group = (pods: KubeObject[]): PodContainer[] => pods.map((p) => ({ pod: p, c: containers(p)[0]! }));
    const replicas = group([
      pod('web-1', [{ name: 'app', finishedAt: '2025-06-01T08:00:00Z' }]),
      pod('web-2', [{ name: 'app', finishedAt: '2025-06-01T08:30:00Z' }]),
      pod('web-3', [{ name: 'app', ready: false, finishedAt: '2025-06-01T08:10:00Z' }]),
      pod('web-4', [{ name: 'app', waiting: 'CrashLoopBackOff', ready: false }]),
      pod('web-0', [{ name: 'app', finishedAt: '2025-06-01T08:00:00Z' }]),
    ]);
    expect(worstFirst(replicas).map((g) => g.pod.metadata.name)).toEqual(['web-4', 'web-3', 'web-2', 'web-0', 'web-1']);
  });
});

describe('nameList', () => {
  it('names each name once and counts the unique ones it leaves out', () => {
    expect(nameList(['a', 'b', 'a'])).toBe('a, b');
    expect(nameList(['a', 'b', 'a', 'c', 'd', 'c', 'e'], 2)).toBe('a, b and 3 more');
  });
});
