import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/cluster/types.js';
import { humanDuration, podStatus, toTable } from '../../../src/snapshot-api/tables.js';

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;

describe('humanDuration (kubectl ages)', () => {
  it.each([
    [-5 * s, '<invalid>'],
    [-500, '0s'],
    [45 * s, '45s'],
    [119 * s, '119s'],
    [3 * m + 20 * s, '3m20s'],
    [5 * m, '5m'],
    [45 * m, '45m'],
    [179 * m, '179m'],
    [5 * h + 12 * m, '5h12m'],
    [7 * h, '7h'],
    [26 * h, '26h'],
    [3 * d + 5 * h, '3d5h'],
    [4 * d, '4d'],
    [40 * d, '40d'],
    [(2 * 365 + 30) * d, '2y30d'],
    [9 * 365 * d, '9y'],
  ])('%d ms → %s', (ms, expected) => {
    expect(humanDuration(ms)).toBe(expected);
  });
});

function pod(status: object, spec: object = { containers: [{ name: 'app' }] }, meta: object = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', ...meta }, spec, status };
}

describe('podStatus (the STATUS column)', () => {
  it('shows the waiting reason of a crash-looping container', () => {
    expect(
      podStatus(
        pod({
          phase: 'Running',
          containerStatuses: [{ name: 'app', state: { waiting: { reason: 'CrashLoopBackOff' } } }],
        }),
      ),
    ).toBe('CrashLoopBackOff');
  });

  it('shows OOMKilled for a terminated container', () => {
    expect(
      podStatus(
        pod({
          phase: 'Running',
          containerStatuses: [{ name: 'app', state: { terminated: { reason: 'OOMKilled', exitCode: 137 } } }],
        }),
      ),
    ).toBe('OOMKilled');
  });

  it('falls back to the exit code or signal', () => {
    expect(podStatus(pod({ containerStatuses: [{ state: { terminated: { exitCode: 3 } } }] }))).toBe('ExitCode:3');
    expect(podStatus(pod({ containerStatuses: [{ state: { terminated: { exitCode: 0, signal: 9 } } }] }))).toBe(
      'Signal:9',
    );
  });

  it('prefers the pod reason (Evicted) over the phase', () => {
    expect(podStatus(pod({ phase: 'Failed', reason: 'Evicted' }))).toBe('Evicted');
  });

  it('reports init container progress and failures', () => {
    const spec = { initContainers: [{ name: 'a' }, { name: 'b' }], containers: [{ name: 'app' }] };
    expect(
      podStatus(
        pod(
          {
            phase: 'Pending',
            initContainerStatuses: [
              { name: 'a', state: { terminated: { exitCode: 0, reason: 'Completed' } } },
              { name: 'b', state: { running: {} } },
            ],
          },
          spec,
        ),
      ),
    ).toBe('Init:1/2');
    expect(
      podStatus(
        pod(
          {
            phase: 'Pending',
            initContainerStatuses: [{ name: 'a', state: { waiting: { reason: 'ImagePullBackOff' } } }],
          },
          spec,
        ),
      ),
    ).toBe('Init:ImagePullBackOff');
  });

  it('shows Terminating for a pod being deleted', () => {
    expect(podStatus(pod({ phase: 'Running' }, undefined, { deletionTimestamp: '2024-01-01T00:00:00Z' }))).toBe(
      'Terminating',
    );
  });

  it('shows the phase of a pending pod with no container statuses', () => {
    expect(podStatus(pod({ phase: 'Pending' }))).toBe('Pending');
  });
});

describe('toTable', () => {
  const now = new Date('2024-05-14T10:15:00Z');
  const crashing = pod({
    phase: 'Running',
    containerStatuses: [
      {
        name: 'app',
        ready: false,
        restartCount: 6,
        state: { waiting: { reason: 'CrashLoopBackOff' } },
        lastState: { terminated: { exitCode: 1, finishedAt: '2024-05-14T10:10:00Z' } },
      },
    ],
  });
  crashing.metadata.creationTimestamp = '2024-05-14T09:30:00Z';

  it('prints the kubectl pod columns, with wide columns at priority 1', () => {
    const table = toTable('pods', [crashing], { now, resourceVersion: '9' });
    const visible = table.columnDefinitions.filter((c) => c.priority === 0).map((c) => c.name);
    expect(visible).toEqual(['Name', 'Ready', 'Status', 'Restarts', 'Age']);
    expect(table.rows[0]?.cells.slice(0, 5)).toEqual(['p', '0/1', 'CrashLoopBackOff', '6 (5m ago)', '45m']);
    expect(table.rows[0]?.object).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: crashing.metadata,
    });
  });

  it('embeds the full object or nothing on request', () => {
    expect(toTable('pods', [crashing], { now, resourceVersion: '9', includeObject: 'Object' }).rows[0]?.object).toBe(
      crashing,
    );
    expect(
      toTable('pods', [crashing], { now, resourceVersion: '9', includeObject: 'None' }).rows[0],
    ).not.toHaveProperty('object');
  });

  it('prints events as kubectl get events does', () => {
    const event: KubeObject = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e', namespace: 'ns' },
      involvedObject: { kind: 'PersistentVolumeClaim', name: 'data' },
      type: 'Warning',
      reason: 'ProvisioningFailed',
      message: 'storageclass "fast" not found',
      lastTimestamp: '2024-05-14T10:14:30Z',
    };
    const table = toTable('events', [event], { now, resourceVersion: '9' });
    const visible = table.columnDefinitions.flatMap((c, i) =>
      c.priority === 0 ? [[c.name, table.rows[0]?.cells[i]]] : [],
    );
    expect(visible).toEqual([
      ['Last Seen', '30s'],
      ['Type', 'Warning'],
      ['Reason', 'ProvisioningFailed'],
      ['Object', 'persistentvolumeclaim/data'],
      ['Message', 'storageclass "fast" not found'],
    ]);
  });

  it('falls back to NAME and AGE for kinds without printers', () => {
    const table = toTable('statefulsets', [], { now, resourceVersion: '9' });
    expect(table.columnDefinitions.map((c) => c.name)).toContain('Name');
    expect(table.columnDefinitions.map((c) => c.name)).toContain('Age');
  });
});
