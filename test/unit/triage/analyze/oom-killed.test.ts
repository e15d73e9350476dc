import { describe, expect, it } from 'vitest';
import { at, makePod, node, podEvent, run, runningOk, seriesEvent } from '../../../support/analyzers/units.js';

describe('oom-killed tells a node OOM from a container limit', () => {
  const victim = (finishedMinAgo: number) =>
    makePod('ledger-kgdbx', {
      owner: { kind: 'ReplicaSet', name: 'ledger-86c7f' },
      node: 'node-a',
      containers: [
        {
          name: 'ledger',
          image: 'r/ledger:12',
          resources: { limits: { memory: '4Gi' }, requests: { memory: '1Gi' } },
          env: [{ name: 'JAVA_TOOL_OPTIONS', value: '-XX:MaxRAMPercentage=60' }],
        },
      ],
      statuses: [
        {
          name: 'ledger',
          ready: true,
          restartCount: 3,
          state: { running: { startedAt: at(finishedMinAgo - 0.1) } },
          lastState: { terminated: { reason: 'OOMKilled', exitCode: 137, finishedAt: at(finishedMinAgo) } },
        },
      ],
    });
  const backfill = makePod('backfill-29282640-hf7g7', {
    namespace: 'analytics',
    owner: { kind: 'Job', name: 'backfill-29282640' },
    node: 'node-a',
    containers: [{ name: 'backfill', image: 'r/backfill:1', resources: {} }],
    statuses: [runningOk('backfill')],
    ready: true,
  });

  it('names the one unbounded neighbour, with the node as the alternative, when a system OOM coincides with the kill, whichever event shape reports it', () => {
    for (const systemOom of [
      podEvent('node-a', 'SystemOOM', 'System OOM encountered, victim process: java, pid: 51877', 7.05, {
        kind: 'Node',
        namespace: 'default',
      }),
      seriesEvent('Node', 'node-a', 'SystemOOM', 'System OOM encountered, victim process: java, pid: 51877', 7.05, 1),
    ]) {
      const [f] = run(['oom-killed'], [victim(7), backfill, node('node-a'), systemOom]);
      expect(f?.owner).toEqual({ kind: 'CronJob', name: 'backfill', namespace: 'analytics' });
      expect(f?.change).toContain('set a memory limit');
      expect(f?.alternatives?.map((a) => a.resource)).toEqual([{ kind: 'Node', name: 'node-a' }]);
      expect(f?.message).toContain('node node-a ran out of memory (system OOM), not its own 4Gi limit');
      expect(f?.message).not.toContain('exceeds');
      expect(f?.evidence.join('\n')).toContain('System OOM encountered, victim process: java, pid: 51877');
      expect(f?.related).toContainEqual({ kind: 'CronJob', name: 'backfill', namespace: 'analytics' });
      expect(f?.evidence.join('\n')).toContain('analytics/backfill-29282640-hf7g7 (CronJob backfill)');
    }
  });

  it('keeps the container limit as the cause when the node OOM happened at another time', () => {
    const earlier = podEvent('node-a', 'SystemOOM', 'System OOM encountered, victim process: python3, pid: 1', 90, {
      kind: 'Node',
      namespace: 'default',
    });
    const [f] = run(['oom-killed'], [victim(7), node('node-a'), earlier]);
    expect(f?.owner).toBeUndefined();
    expect(f?.message).toContain('it exceeds its 4Gi memory limit');
    expect(f?.evidence.join('\n')).toContain('not at the time of this kill');
    expect(f?.evidence.join('\n')).toContain('-XX:MaxRAMPercentage=60: heap capped at 2.4Gi, 60% of the 4Gi limit');
  });
});
