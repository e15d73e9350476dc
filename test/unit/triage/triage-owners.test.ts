import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/cluster/types.js';
import { contextFromObjects } from '../../../src/triage/analyze/index.js';
import { type Finding, type FindingInput, FindingSchema } from '../../../src/triage/envelope/findings.js';
import { attributeOwners } from '../../../src/triage/rank/owners.js';

const NS = 'payments';
const NOW = new Date('2026-03-04T12:00:00Z');
const CREATED = '2026-03-01T09:00:00Z';

function ago(minutes: number): string {
  return new Date(NOW.getTime() - minutes * 60_000).toISOString();
}

// --- objects as `kubectl get -o yaml` prints them -------------------------------------------------------------------

function deployment(name: string, replicas: number, available: number): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS, uid: `uid-${name}`, creationTimestamp: CREATED },
    spec: { replicas, selector: { matchLabels: { app: name } } },
    status: { replicas, readyReplicas: available, availableReplicas: available, updatedReplicas: replicas },
  };
}

function replicaSet(deploymentName: string, hash: string): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${deploymentName}-${hash}`,
      namespace: NS,
      uid: `uid-${deploymentName}-${hash}`,
      creationTimestamp: CREATED,
      labels: { app: deploymentName, 'pod-template-hash': hash },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: deploymentName,
          uid: `uid-${deploymentName}`,
          controller: true,
        },
      ],
    },
    spec: { replicas: 3 },
    status: { replicas: 3 },
  };
}

function statefulSet(name: string, replicas: number, ready: number): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: NS, uid: `uid-${name}`, creationTimestamp: CREATED },
    spec: { replicas, serviceName: name, selector: { matchLabels: { app: name } } },
    status: { replicas, readyReplicas: ready, availableReplicas: ready },
  };
}

function cronJob(name: string): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: NS, uid: `uid-${name}`, creationTimestamp: CREATED },
    spec: { schedule: '0 2 * * *' },
  };
}

function job(name: string, cron?: string): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      creationTimestamp: CREATED,
      ...(cron
        ? {
            ownerReferences: [
              { apiVersion: 'batch/v1', kind: 'CronJob', name: cron, uid: `uid-${cron}`, controller: true },
            ],
          }
        : {}),
    },
    spec: { backoffLimit: 2 },
    status: { failed: 3 },
  };
}

interface PodState {
  phase?: string;
  reason?: string;
  /** Minutes ago the pod became Ready; undefined = not ready. */
  readyFor?: number;
  /** Minutes ago the current container started. */
  startedFor?: number;
  /** Minutes ago the previous container instance ended. */
  lastExitFor?: number;
  waiting?: string;
  restarts?: number;
}

function pod(name: string, owner: { kind: string; name: string } | undefined, state: PodState = {}): KubeObject {
  const ready = state.readyFor !== undefined;
  const phase = state.phase ?? 'Running';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      creationTimestamp: CREATED,
      labels: { app: owner?.name ?? name },
      ...(owner
        ? {
            ownerReferences: [
              { apiVersion: 'apps/v1', kind: owner.kind, name: owner.name, uid: `uid-${owner.name}`, controller: true },
            ],
          }
        : {}),
    },
    spec: { containers: [{ name: 'app', image: 'registry.example.com/payments:2.3.1' }], nodeName: 'worker-1' },
    status: {
      phase,
      ...(state.reason ? { reason: state.reason, message: 'The node was low on resource: memory.' } : {}),
      conditions: [
        { type: 'Initialized', status: 'True', lastTransitionTime: CREATED },
        {
          type: 'Ready',
          status: ready ? 'True' : 'False',
          lastTransitionTime: ready ? ago(state.readyFor as number) : ago(1),
        },
      ],
      ...(phase === 'Running'
        ? {
            containerStatuses: [
              {
                name: 'app',
                ready: ready && !state.waiting,
                restartCount: state.restarts ?? 0,
                image: 'registry.example.com/payments:2.3.1',
                state: state.waiting
                  ? { waiting: { reason: state.waiting, message: 'back-off 5m0s restarting failed container' } }
                  : { running: { startedAt: ago(state.startedFor ?? state.readyFor ?? 5) } },
                ...(state.lastExitFor !== undefined
                  ? {
                      lastState: {
                        terminated: {
                          exitCode: 1,
                          reason: 'Error',
                          startedAt: CREATED,
                          finishedAt: ago(state.lastExitFor),
                        },
                      },
                    }
                  : {}),
              },
            ],
          }
        : {}),
    },
  };
}

function warning(podName: string, minutesAgo: number, reason = 'BackOff'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${podName}.17f9a3c2b1d4e5f6`, namespace: NS, creationTimestamp: ago(minutesAgo) },
    involvedObject: { apiVersion: 'v1', kind: 'Pod', name: podName, namespace: NS, fieldPath: 'spec.containers{app}' },
    reason,
    message: 'Back-off restarting failed container app in pod',
    type: 'Warning',
    count: 4,
    firstTimestamp: ago(minutesAgo + 30),
    lastTimestamp: ago(minutesAgo),
  };
}

function finding(input: Partial<FindingInput> & Pick<FindingInput, 'resource'>): Finding {
  return FindingSchema.parse({
    code: 'CRASHLOOP_APP_ERROR',
    analyzer: 'crashloop',
    domain: 'compute',
    severity: 'high',
    message: `${input.resource.name} exits with code 1.`,
    evidence: [`${input.resource.name}: exit code 1`],
    confidence: 0.8,
    ...input,
  });
}

const podRef = (name: string) => ({ kind: 'Pod', name, namespace: NS });

function run(objects: KubeObject[], findings: Finding[], podsComplete = true): Finding[] {
  const ctx = contextFromObjects({ namespace: NS, now: NOW, objects });
  return attributeOwners(findings, ctx, { podsComplete });
}

const RS = { kind: 'ReplicaSet', name: 'payments-7c9f8b6d5' };
const payments = (available = 0) => [deployment('payments', 4, available), replicaSet('payments', '7c9f8b6d5')];
const replica = (suffix: string, state: PodState = { waiting: 'CrashLoopBackOff', restarts: 7 }) =>
  pod(`payments-7c9f8b6d5-${suffix}`, RS, state);

// --- owners ------------------------------------------------------------------------------------------------------

describe('attributeOwners: naming the owner a person changes', () => {
  it('names the Deployment behind a ReplicaSet pod', () => {
    const [f] = run([...payments(), replica('x2x7k')], [finding({ resource: podRef('payments-7c9f8b6d5-x2x7k') })]);
    expect(f?.owner).toEqual({ kind: 'Deployment', name: 'payments', namespace: NS });
    expect(f?.stale).toBeUndefined();
  });

  it('names the Deployment of a ReplicaSet finding, and the CronJob of a Job finding', () => {
    const objects = [...payments(), cronJob('nightly-export'), job('nightly-export-29012345', 'nightly-export')];
    const out = run(objects, [
      finding({ code: 'WORKLOAD_QUOTA_EXCEEDED', analyzer: 'workload-rollout', resource: { ...RS, namespace: NS } }),
      finding({
        code: 'JOB_FAILED',
        analyzer: 'workload-rollout',
        resource: { kind: 'Job', name: 'nightly-export-29012345', namespace: NS },
      }),
    ]);
    const byCode = new Map(out.map((f) => [f.code, f]));
    expect(byCode.get('WORKLOAD_QUOTA_EXCEEDED')?.owner).toEqual({
      kind: 'Deployment',
      name: 'payments',
      namespace: NS,
    });
    expect(byCode.get('JOB_FAILED')?.owner).toEqual({ kind: 'CronJob', name: 'nightly-export', namespace: NS });
  });

  it('names the CronJob behind a Job pod', () => {
    const objects = [cronJob('nightly-export'), job('nightly-export-29012345', 'nightly-export')];
    const p = pod(
      'nightly-export-29012345-4x8zq',
      { kind: 'Job', name: 'nightly-export-29012345' },
      { waiting: 'CrashLoopBackOff' },
    );
    const [f] = run([...objects, p], [finding({ resource: podRef(p.metadata.name) })]);
    expect(f?.owner).toEqual({ kind: 'CronJob', name: 'nightly-export', namespace: NS });
  });

  it('names the StatefulSet that owns a pod', () => {
    const p = pod('ledger-0', { kind: 'StatefulSet', name: 'ledger' }, { waiting: 'CrashLoopBackOff' });
    const [f] = run([statefulSet('ledger', 3, 2), p], [finding({ resource: podRef('ledger-0') })]);
    expect(f?.owner).toEqual({ kind: 'StatefulSet', name: 'ledger', namespace: NS });
  });

  it('keeps an owner the analyzer already named (the ConfigMap, the policy), and folds nothing under it', () => {
    const owner = { kind: 'ConfigMap', name: 'payments-config', namespace: NS };
    const out = run(
      [...payments(), replica('x2x7k'), replica('y3y8m')],
      [
        finding({ code: 'CONTAINER_CONFIG_ERROR', resource: podRef('payments-7c9f8b6d5-x2x7k'), owner }),
        finding({ code: 'CONTAINER_CONFIG_ERROR', resource: podRef('payments-7c9f8b6d5-y3y8m'), owner }),
      ],
    );
    expect(out).toHaveLength(2);
    for (const f of out) {
      expect(f.owner).toEqual(owner);
      expect(f.message).toBe(`${f.resource.name} exits with code 1.`);
    }
  });

  it('leaves alone a bare pod, a Job without a CronJob, and a finding on a workload itself', () => {
    const bare = pod('debug', undefined, { waiting: 'CrashLoopBackOff' });
    const input = [
      finding({ resource: podRef('debug') }),
      finding({
        code: 'JOB_FAILED',
        analyzer: 'workload-rollout',
        resource: { kind: 'Job', name: 'db-migrate', namespace: NS },
      }),
      finding({
        code: 'WORKLOAD_ROLLOUT_STUCK',
        analyzer: 'workload-rollout',
        resource: { kind: 'Deployment', name: 'payments', namespace: NS },
      }),
    ];
    const out = run([...payments(), bare, job('db-migrate')], input);
    expect(out).toHaveLength(3);
    for (const f of out) {
      expect(f.owner).toBeUndefined();
      expect(f.stale).toBeUndefined();
    }
    // Without an owner there is nothing to fold into: the message is the analyzer's own.
    expect(out.find((f) => f.resource.name === 'debug')?.message).toBe('debug exits with code 1.');
  });
});

// --- folding replicas --------------------------------------------------------------------------------------------

describe('attributeOwners: one finding per fault and workload', () => {
  it('folds the replicas of one Deployment that show the same code, and counts the pods it runs', () => {
    const objects = [
      ...payments(),
      replica('aaaaa'),
      replica('bbbbb'),
      replica('ccccc'),
      replica('ddddd', { readyFor: 50 }),
    ];
    const out = run(objects, [
      finding({ resource: podRef('payments-7c9f8b6d5-bbbbb'), evidence: ['exit code 1', 'panic: no DSN'] }),
      finding({ resource: podRef('payments-7c9f8b6d5-aaaaa'), evidence: ['exit code 1'], confidence: 0.6 }),
      finding({ resource: podRef('payments-7c9f8b6d5-ccccc'), evidence: ['exit code 1'], confidence: 0.9 }),
    ]);
    expect(out).toHaveLength(1);
    const [f] = out as [Finding];
    // The most certain replica leads; the others are named and related.
    expect(f.resource).toEqual(podRef('payments-7c9f8b6d5-ccccc'));
    expect(f.message).toBe(
      'payments-7c9f8b6d5-ccccc exits with code 1. (3 of 4 pods of Deployment payments: payments-7c9f8b6d5-ccccc, payments-7c9f8b6d5-bbbbb, payments-7c9f8b6d5-aaaaa)',
    );
    expect(f.confidence).toBe(0.9);
    expect(f.evidence).toEqual(['exit code 1', 'panic: no DSN']);
    expect(f.related).toEqual(
      expect.arrayContaining([podRef('payments-7c9f8b6d5-aaaaa'), podRef('payments-7c9f8b6d5-bbbbb')]),
    );
    expect(f.related).not.toContainEqual(podRef('payments-7c9f8b6d5-ccccc'));
  });

  it('keeps different codes, and different workloads, apart', () => {
    const objects = [
      ...payments(),
      replica('aaaaa'),
      replica('bbbbb'),
      statefulSet('ledger', 2, 0),
      pod('ledger-0', { kind: 'StatefulSet', name: 'ledger' }, { waiting: 'CrashLoopBackOff' }),
    ];
    const out = run(objects, [
      finding({ resource: podRef('payments-7c9f8b6d5-aaaaa') }),
      finding({ resource: podRef('payments-7c9f8b6d5-bbbbb'), code: 'OOM_KILLED', analyzer: 'oom-killed' }),
      finding({ resource: podRef('ledger-0') }),
    ]);
    expect(out).toHaveLength(3);
    expect(out.find((f) => f.code === 'OOM_KILLED')?.message).toContain(
      '(1 of 2 pods of Deployment payments: payments-7c9f8b6d5-bbbbb)',
    );
    expect(out.find((f) => f.resource.name === 'ledger-0')?.message).toContain(
      '(1 of 1 pods of StatefulSet ledger: ledger-0)',
    );
  });

  it('names at most four replicas and does not count finished pods among the workload\u2019s pods', () => {
    const suffixes = ['aaaaa', 'bbbbb', 'ccccc', 'ddddd', 'eeeee'];
    const objects = [...payments(), ...suffixes.map((s) => replica(s)), replica('fffff', { phase: 'Succeeded' })];
    const [f, ...rest] = run(
      objects,
      suffixes.map((s) => finding({ resource: podRef(`payments-7c9f8b6d5-${s}`) })),
    );
    expect(rest).toHaveLength(0);
    expect(f?.message).toContain(
      '(5 of 5 pods of Deployment payments: payments-7c9f8b6d5-aaaaa, payments-7c9f8b6d5-bbbbb, payments-7c9f8b6d5-ccccc, payments-7c9f8b6d5-ddddd, …)',
    );
  });
});

// --- stale ---------------------------------------------------------------------------------------------------

describe('attributeOwners: what the cluster has left behind', () => {
  it('marks a pod that no longer exists as stale when the pods were listed in full', () => {
    const gone = finding({ resource: podRef('payments-7c9f8b6d5-gone1') });
    const [complete] = run([...payments(), replica('aaaaa')], [gone], true);
    expect(complete?.stale).toBe('pod payments-7c9f8b6d5-gone1 no longer exists');
    // Not folded or rewritten: it is history.
    expect(complete?.message).toBe(gone.message);
    const [partial] = run([...payments(), replica('aaaaa')], [gone], false);
    expect(partial?.stale).toBeUndefined();
  });

  it('does not call a pod of another namespace gone because the analysed one lacks it', () => {
    const elsewhere = finding({ resource: { kind: 'Pod', name: 'postgres-0', namespace: 'db' } });
    const [f] = run([...payments()], [elsewhere], true);
    expect(f?.stale).toBeUndefined();
  });

  it('marks an evicted pod stale once its Deployment has all replicas available again', () => {
    const evicted = replica('evct1', { phase: 'Failed', reason: 'Evicted' });
    const input = [
      finding({ code: 'POD_EVICTED', analyzer: 'node-health', resource: podRef('payments-7c9f8b6d5-evct1') }),
    ];
    const [replaced] = run([...payments(4), evicted], input);
    expect(replaced?.stale).toBe(
      'pod payments-7c9f8b6d5-evct1 has finished and Deployment payments has 4/4 replicas available',
    );
    const [short] = run([...payments(3), evicted], input);
    expect(short?.stale).toBeUndefined();
    expect(short?.owner).toEqual({ kind: 'Deployment', name: 'payments', namespace: NS });
  });

  it('marks a failed StatefulSet pod stale only when the StatefulSet is ready in full', () => {
    const failed = pod('ledger-1', { kind: 'StatefulSet', name: 'ledger' }, { phase: 'Failed' });
    const input = [finding({ resource: podRef('ledger-1') })];
    expect(run([statefulSet('ledger', 3, 3), failed], input)[0]?.stale).toBe(
      'pod ledger-1 has finished and StatefulSet ledger has 3/3 replicas available',
    );
    expect(run([statefulSet('ledger', 3, 2), failed], input)[0]?.stale).toBeUndefined();
  });

  it('marks a crashloop finding stale on a pod ready for over 30 minutes since its last restart', () => {
    const settled = replica('sttl1', { readyFor: 45, startedFor: 46, lastExitFor: 46, restarts: 6 });
    const [f] = run([...payments(4), settled], [finding({ resource: podRef('payments-7c9f8b6d5-sttl1') })]);
    expect(f?.stale).toBe(`pod payments-7c9f8b6d5-sttl1 has been running and ready since ${ago(45)}`);
  });

  it('counts from the last restart when the pod restarted after it became ready', () => {
    const recent = replica('rcnt1', { readyFor: 120, startedFor: 10, lastExitFor: 10, restarts: 6 });
    const [f] = run([...payments(4), recent], [finding({ resource: podRef('payments-7c9f8b6d5-rcnt1') })]);
    expect(f?.stale).toBeUndefined();
  });

  it('does not mark a pod settled that became ready less than 30 minutes ago, or is waiting', () => {
    const fresh = replica('frsh1', { readyFor: 20, lastExitFor: 21, restarts: 2 });
    const waiting = replica('wait1', { readyFor: 90, waiting: 'CrashLoopBackOff', restarts: 9 });
    const out = run(
      [...payments(4), fresh, waiting],
      [
        finding({ resource: podRef('payments-7c9f8b6d5-frsh1') }),
        finding({ resource: podRef('payments-7c9f8b6d5-wait1') }),
      ],
    );
    for (const f of out) expect(f.stale).toBeUndefined();
  });

  it('does not mark a pod settled when a warning about it came after it became ready', () => {
    const p = replica('warn1', { readyFor: 60, lastExitFor: 61, restarts: 3 });
    const [f] = run(
      [...payments(4), p, warning('payments-7c9f8b6d5-warn1', 5)],
      [finding({ resource: podRef('payments-7c9f8b6d5-warn1') })],
    );
    expect(f?.stale).toBeUndefined();
    // An older warning, from before the pod settled, is history.
    const [g] = run(
      [...payments(4), p, warning('payments-7c9f8b6d5-warn1', 70)],
      [finding({ resource: podRef('payments-7c9f8b6d5-warn1') })],
    );
    expect(g?.stale).toMatch(/has been running and ready since/);
  });

  it('never marks what a ready pod logs now (DNS errors, unreachable dependencies) as history', () => {
    const settled = replica('sttl2', { readyFor: 240, restarts: 0 });
    const name = 'payments-7c9f8b6d5-sttl2';
    const out = run(
      [...payments(4), settled],
      [
        finding({ code: 'DNS_LOOKUP_FAILURES', analyzer: 'dns', domain: 'networking', resource: podRef(name) }),
        finding({
          code: 'DEPENDENCY_UNAVAILABLE',
          analyzer: 'dependencies',
          domain: 'networking',
          resource: podRef(name),
        }),
        finding({ code: 'CRASHLOOP_APP_ERROR', analyzer: 'crashloop', resource: podRef(name) }),
      ],
    );
    const byAnalyzer = new Map(out.map((f) => [f.analyzer, f]));
    expect(byAnalyzer.get('dns')?.stale).toBeUndefined();
    expect(byAnalyzer.get('dependencies')?.stale).toBeUndefined();
    expect(byAnalyzer.get('crashloop')?.stale).toBe(`pod ${name} has been running and ready since ${ago(240)}`);
    // What is not stale is still folded under its owner.
    expect(byAnalyzer.get('dns')?.message).toContain(`(1 of 1 pods of Deployment payments: ${name})`);
  });
});
