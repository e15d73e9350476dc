import { describe, expect, it } from 'vitest';
import { logKey } from '../../../../src/cluster/snapshot.js';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { configuredHosts } from '../../../../src/triage/analyze/dependencies.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../../src/triage/analyze/index.js';
import { classifyFailedCreate } from '../../../../src/triage/analyze/workload-rollout.js';
import type { Finding } from '../../../../src/triage/envelope/findings.js';
import { parseDependencyFailure } from '../../../../src/triage/kube/dependency-failures.js';
import { foreignNamespaces } from '../../../../src/triage/route/follow.js';

const NOW = new Date('2026-03-04T12:00:00Z');
const NS = 'shop';
const CREATED = '2026-02-20T09:00:00Z';

function ago(minutes: number): string {
  return new Date(NOW.getTime() - minutes * 60_000).toISOString();
}

function analyze(
  name: 'workload-rollout' | 'dependencies',
  objects: KubeObject[],
  logs: Record<string, string> = {},
): Finding[] {
  const ctx = contextFromObjects({ namespace: NS, now: NOW, objects, logs });
  return runAnalyzers([getAnalyzer(name)], ctx);
}

function only(findings: Finding[], code: string): Finding {
  const matching = findings.filter((f) => f.code === code);
  expect(
    matching.map((f) => f.code),
    `codes: ${findings.map((f) => f.code).join(', ')}`,
  ).toEqual([code]);
  return matching[0] as Finding;
}

// --- objects as `kubectl get -o yaml` prints them -------------------------------------------------------------------

function namespace(name: string, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, creationTimestamp: CREATED, labels: { 'kubernetes.io/metadata.name': name, ...labels } },
    status: { phase: 'Active' },
  };
}

function deployment(
  name: string,
  ns = NS,
  extra: { status?: Record<string, unknown>; revision?: string } = {},
): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace: ns,
      uid: `uid-${name}`,
      creationTimestamp: CREATED,
      annotations: { 'deployment.kubernetes.io/revision': extra.revision ?? '3' },
    },
    spec: {
      replicas: 3,
      progressDeadlineSeconds: 600,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: `registry.example.com/${name}:1.2.0` }] },
      },
    },
    status: extra.status ?? {
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      updatedReplicas: 3,
      observedGeneration: 4,
    },
  };
}

function replicaSet(deploymentName: string, hash: string, ns = NS): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${deploymentName}-${hash}`,
      namespace: ns,
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
    spec: { replicas: 3, selector: { matchLabels: { app: deploymentName, 'pod-template-hash': hash } } },
    status: { replicas: 0, observedGeneration: 1 },
  };
}

function statefulSet(name: string, ns = NS): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: ns, uid: `uid-${name}`, creationTimestamp: CREATED },
    spec: { replicas: 1, serviceName: name, selector: { matchLabels: { app: name } } },
    status: { replicas: 1, readyReplicas: 1, availableReplicas: 1 },
  };
}

function event(
  involved: { kind: string; name: string; apiVersion?: string },
  reason: string,
  message: string,
  minutesAgo: number,
  opts: { type?: string; count?: number; component?: string; ns?: string } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      name: `${involved.name}.${(minutesAgo * 7919).toString(16)}`,
      namespace: opts.ns ?? NS,
      creationTimestamp: ago(minutesAgo + 20),
    },
    involvedObject: {
      apiVersion: involved.apiVersion ?? 'apps/v1',
      kind: involved.kind,
      name: involved.name,
      namespace: opts.ns ?? NS,
      uid: `uid-${involved.name}`,
    },
    reason,
    message,
    type: opts.type ?? 'Warning',
    count: opts.count ?? 1,
    firstTimestamp: ago(minutesAgo + 20),
    lastTimestamp: ago(minutesAgo),
    source: { component: opts.component ?? 'replicaset-controller' },
  };
}

function pod(
  name: string,
  labels: Record<string, string>,
  opts: {
    ns?: string;
    owner?: { kind: string; name: string };
    ip?: string;
    node?: string;
    ready?: boolean;
    env?: unknown[];
    envFrom?: unknown[];
  } = {},
): KubeObject {
  const ready = opts.ready ?? true;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: opts.ns ?? NS,
      uid: `uid-${name}`,
      creationTimestamp: CREATED,
      labels,
      ...(opts.owner
        ? {
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: opts.owner.kind,
                name: opts.owner.name,
                uid: `uid-${opts.owner.name}`,
                controller: true,
              },
            ],
          }
        : {}),
    },
    spec: {
      nodeName: opts.node ?? 'worker-1',
      containers: [
        {
          name: 'app',
          image: 'registry.example.com/app:1.2.0',
          ...(opts.env ? { env: opts.env } : {}),
          ...(opts.envFrom ? { envFrom: opts.envFrom } : {}),
        },
      ],
    },
    status: {
      phase: 'Running',
      podIP: opts.ip ?? '10.244.1.17',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: ago(90) }],
      containerStatuses: [
        {
          name: 'app',
          ready,
          restartCount: 0,
          image: 'registry.example.com/app:1.2.0',
          state: { running: { startedAt: ago(90) } },
        },
      ],
    },
  };
}

// ================================================================================================================
// workload-rollout
// ================================================================================================================

describe('classifyFailedCreate', () => {
  it('reads a ResourceQuota refusal and names the quota', () => {
    const refusal = classifyFailedCreate(
      'Error creating: pods "x-7d9f-abcde" is forbidden: exceeded quota: compute-quota, requested: requests.cpu=500m, used: requests.cpu=3800m, limited: requests.cpu=4',
      NS,
    );
    expect(refusal).toEqual({
      code: 'WORKLOAD_QUOTA_EXCEEDED',
      entity: { kind: 'ResourceQuota', name: 'compute-quota', namespace: NS },
      what: 'ResourceQuota compute-quota refuses new pods (requested requests.cpu=500m, used requests.cpu=3800m, limited requests.cpu=4)',
      remediation: 'raise-quota',
    });
  });

  it('keeps every resource of a quota refusal that names several', () => {
    const refusal = classifyFailedCreate(
      'pods "x-7d9f-abcde" is forbidden: exceeded quota: team-a.compute, requested: limits.memory=512Mi,requests.cpu=500m, used: limits.memory=7680Mi,requests.cpu=3800m, limited: limits.memory=8Gi,requests.cpu=4',
      NS,
    );
    expect(refusal?.entity).toEqual({ kind: 'ResourceQuota', name: 'team-a.compute', namespace: NS });
    expect(refusal?.what).toContain('requested limits.memory=512Mi,requests.cpu=500m');
    expect(refusal?.what).toContain('used limits.memory=7680Mi,requests.cpu=3800m');
    expect(refusal?.what).toContain('limited limits.memory=8Gi,requests.cpu=4');
  });

  it('reads a PodSecurity refusal with its level and what the pods must set', () => {
    const refusal = classifyFailedCreate(
      'Error creating: pods "x-7d9f-abcde" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)',
      NS,
    );
    expect(refusal?.code).toBe('WORKLOAD_ADMISSION_DENIED');
    expect(refusal?.what).toBe(
      'PodSecurity "restricted:latest" admission refuses the pods: allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)',
    );
    expect(refusal?.remediation).toBe('fix-security-context');
    // The pods meet the policy: the workload changes, not an object the message names.
    expect(refusal?.entity).toBeUndefined();
  });

  it('reads an OpenShift SCC refusal', () => {
    const refusal = classifyFailedCreate(
      'Error creating: pods "web-5f6d7c8b9-" is forbidden: unable to validate against any security context constraint: [provider "anyuid": Forbidden: not usable by user or serviceaccount, spec.containers[0].securityContext.runAsUser: Invalid value: 0: must be in the ranges: [1000680000, 1000689999]]',
      NS,
    );
    expect(refusal).toEqual({
      code: 'WORKLOAD_ADMISSION_DENIED',
      what: 'no SecurityContextConstraints admits the pods',
      remediation: 'fix-security-context',
    });
  });

  it('reads a LimitRange refusal with the bound it breaks', () => {
    for (const [message, detail] of [
      [
        'pods "web-5f6d7c8b9-k2x9p" is forbidden: maximum cpu usage per Container is 2, but limit is 4',
        'maximum cpu usage per Container is 2, but limit is 4',
      ],
      [
        'pods "web-5f6d7c8b9-k2x9p" is forbidden: minimum memory usage per Pod is 64Mi, but request is 32Mi.',
        'minimum memory usage per Pod is 64Mi, but request is 32Mi',
      ],
      [
        'pods "web-5f6d7c8b9-k2x9p" is forbidden: maximum cpu usage per Container is 2.  No limit is specified',
        'maximum cpu usage per Container is 2.  No limit is specified',
      ],
      [
        'pods "web-5f6d7c8b9-k2x9p" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000',
        'cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000',
      ],
    ] as const) {
      const refusal = classifyFailedCreate(`Error creating: ${message}`, NS);
      expect(refusal?.code, message).toBe('WORKLOAD_LIMITRANGE_REJECTED');
      expect(refusal?.what, message).toBe(`a LimitRange rejects the pods\u2019 resources: ${detail}`);
      expect(refusal?.entity, message).toBeUndefined();
    }
  });

  it('names only the first bound when a pod breaks several', () => {
    const refusal = classifyFailedCreate(
      'pods "web-5f6d7c8b9-k2x9p" is forbidden: [maximum cpu usage per Container is 2, but limit is 4, maximum memory usage per Container is 1Gi, but limit is 2Gi]',
      NS,
    );
    expect(refusal?.what).toBe(
      'a LimitRange rejects the pods\u2019 resources: maximum cpu usage per Container is 2, but limit is 4',
    );
  });

  it('reads an admission webhook refusal', () => {
    const refusal = classifyFailedCreate(
      'Error creating: admission webhook "validate.kyverno.svc-fail" denied the request: policy Deployment/shop/web for resource violation: require-labels',
      NS,
    );
    expect(refusal?.code).toBe('WORKLOAD_ADMISSION_DENIED');
    expect(refusal?.what).toBe(
      'admission webhook validate.kyverno.svc-fail denies the pods: policy Deployment/shop/web for resource violation: require-labels',
    );
  });

  it('leaves alone what it cannot read', () => {
    expect(
      classifyFailedCreate('Error creating: Internal error occurred: resource quota evaluation timed out', NS),
    ).toBeUndefined();
  });
});

describe('workload-rollout analyzer', () => {
  const web = deployment('web');
  const rs = replicaSet('web', '7d9f8b6c5');
  const rsRef = { kind: 'ReplicaSet', name: 'web-7d9f8b6c5' };
  const quotaMessage =
    'Error creating: pods "web-7d9f8b6c5-abcde" is forbidden: exceeded quota: compute-quota, requested: requests.cpu=500m, used: requests.cpu=3800m, limited: requests.cpu=4';
  const quota: KubeObject = {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'compute-quota', namespace: NS, creationTimestamp: CREATED },
    spec: { hard: { 'requests.cpu': '4', pods: '20' } },
    status: { hard: { 'requests.cpu': '4', pods: '20' }, used: { 'requests.cpu': '3800m', pods: '9' } },
  };

  it('names the ResourceQuota that refuses the pods of a Deployment, through its ReplicaSet', () => {
    const f = only(
      analyze('workload-rollout', [web, rs, quota, event(rsRef, 'FailedCreate', quotaMessage, 2, { count: 14 })]),
      'WORKLOAD_QUOTA_EXCEEDED',
    );
    expect(f.resource).toEqual({ kind: 'ReplicaSet', name: 'web-7d9f8b6c5', namespace: NS });
    expect(f.owner).toEqual({ kind: 'ResourceQuota', name: 'compute-quota', namespace: NS });
    expect(f.related).toEqual([
      { kind: 'Deployment', name: 'web', namespace: NS },
      { kind: 'ResourceQuota', name: 'compute-quota', namespace: NS },
    ]);
    expect(f.message).toBe(
      'Deployment web cannot create its pods: ResourceQuota compute-quota refuses new pods (requested requests.cpu=500m, used requests.cpu=3800m, limited requests.cpu=4).',
    );
    expect(f.evidence[0]).toMatch(
      /^FailedCreate ×14 \(last 2m ago\): Error creating: pods "web-7d9f8b6c5-abcde" is forbidden: exceeded quota/,
    );
    expect(f.evidence).toContain('ResourceQuota compute-quota: requests.cpu 3800m/4, pods 9/20');
    expect(f.severity).toBe('high');
  });

  it('reports a refusal once per workload, and not one that is over an hour old', () => {
    const twice = analyze('workload-rollout', [
      web,
      rs,
      event(rsRef, 'FailedCreate', quotaMessage, 2),
      event(rsRef, 'FailedCreate', quotaMessage.replace('abcde', 'fghij'), 5),
    ]);
    expect(twice.filter((f) => f.code === 'WORKLOAD_QUOTA_EXCEEDED')).toHaveLength(1);
    expect(analyze('workload-rollout', [web, rs, event(rsRef, 'FailedCreate', quotaMessage, 75)])).toEqual([]);
  });

  it('names the LimitRange whose bound the refusal quotes, with the Deployment as the alternative fix', () => {
    const limits: KubeObject = {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'resource-limits', namespace: NS },
      spec: { limits: [{ type: 'Container', max: { cpu: '2' }, default: { cpu: '500m' } }] },
    };
    const message =
      'Error creating: pods "web-7d9f8b6c5-abcde" is forbidden: maximum cpu usage per Container is 2, but limit is 4';
    const f = only(
      analyze('workload-rollout', [web, rs, limits, event(rsRef, 'FailedCreate', message, 3)]),
      'WORKLOAD_LIMITRANGE_REJECTED',
    );
    expect(f.owner).toEqual({ kind: 'LimitRange', name: 'resource-limits', namespace: NS });
    expect(f.alternatives?.map((a) => a.resource)).toEqual([{ kind: 'Deployment', name: 'web', namespace: NS }]);
    expect(f.change).toContain('max cpu per Container 2');
    expect(f.related).toContainEqual({ kind: 'Deployment', name: 'web', namespace: NS });
    expect(f.message).toContain('maximum cpu usage per Container is 2, but limit is 4');
  });

  it('names the Namespace whose PodSecurity level refuses the StatefulSet\u2019s pods, with the StatefulSet as the alternative', () => {
    const message =
      'create Pod ledger-0 in StatefulSet ledger failed error: pods "ledger-0" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true)';
    const f = only(
      analyze('workload-rollout', [
        statefulSet('ledger'),
        event({ kind: 'StatefulSet', name: 'ledger' }, 'FailedCreate', message, 1, {
          component: 'statefulset-controller',
        }),
      ]),
      'WORKLOAD_ADMISSION_DENIED',
    );
    expect(f.resource).toEqual({ kind: 'StatefulSet', name: 'ledger', namespace: NS });
    expect(f.owner).toEqual({ kind: 'Namespace', name: NS });
    expect(f.alternatives?.map((a) => a.resource)).toEqual([{ kind: 'StatefulSet', name: 'ledger', namespace: NS }]);
    expect(f.remediation).toEqual(['fix-security-context']);
  });

  it('still reports a refusal it cannot classify, less surely, with its message', () => {
    const message =
      'Error creating: pods "web-7d9f8b6c5-abcde" is forbidden: failed quota: compute-quota: must specify limits.cpu for: app; limits.memory for: app';
    const f = only(
      analyze('workload-rollout', [web, rs, event(rsRef, 'FailedCreate', message, 4)]),
      'WORKLOAD_CREATE_FAILED',
    );
    expect(f.owner).toEqual({ kind: 'Deployment', name: 'web', namespace: NS });
    expect(f.message).toContain('must specify limits.cpu for: app');
    expect(f.confidence).toBeLessThan(0.9);
  });

  it('ignores a FailedCreate in another namespace', () => {
    const elsewhere = event(rsRef, 'FailedCreate', quotaMessage, 2, { ns: 'other' });
    expect(analyze('workload-rollout', [web, rs, elsewhere])).toEqual([]);
  });

  const hpa = (current: number, utilization: number, limited: boolean): KubeObject => ({
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web', namespace: NS, creationTimestamp: CREATED },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 2,
      maxReplicas: 10,
      metrics: [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
      ],
    },
    status: {
      currentReplicas: current,
      desiredReplicas: current,
      currentMetrics: [
        {
          type: 'Resource',
          resource: { name: 'cpu', current: { averageUtilization: utilization, averageValue: '675m' } },
        },
      ],
      conditions: [
        { type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', lastTransitionTime: ago(300) },
        { type: 'ScalingActive', status: 'True', reason: 'ValidMetricFound', lastTransitionTime: ago(300) },
        limited
          ? {
              type: 'ScalingLimited',
              status: 'True',
              reason: 'TooManyReplicas',
              message: 'the desired replica count is more than the maximum replica count',
              lastTransitionTime: ago(40),
            }
          : {
              type: 'ScalingLimited',
              status: 'False',
              reason: 'DesiredWithinRange',
              message: 'the desired count is within the acceptable range',
              lastTransitionTime: ago(40),
            },
      ],
    },
  });

  it('reports an autoscaler pinned at its maximum while its metric stays above target', () => {
    const f = only(analyze('workload-rollout', [web, hpa(10, 135, true)]), 'HPA_AT_MAX_REPLICAS');
    expect(f.severity).toBe('high');
    expect(f.message).toBe(
      'HorizontalPodAutoscaler web is pinned at its maximum of 10 replicas while its metrics stay above target: Deployment web cannot scale to the load.',
    );
    expect(f.evidence).toEqual(
      expect.arrayContaining([
        'currentReplicas 10, maxReplicas 10, minReplicas 2',
        'cpu 135% of requests against a target of 70%',
      ]),
    );
    expect(f.related).toEqual([{ kind: 'Deployment', name: 'web', namespace: NS }]);
  });

  it('reports an autoscaler at its maximum that says it is limited, less severely, when the metric is within target', () => {
    expect(only(analyze('workload-rollout', [hpa(10, 60, true)]), 'HPA_AT_MAX_REPLICAS').severity).toBe('medium');
  });

  it('stays quiet about an autoscaler below its maximum, or at it with room to spare', () => {
    expect(analyze('workload-rollout', [hpa(7, 135, false)])).toEqual([]);
    expect(analyze('workload-rollout', [hpa(10, 55, false)])).toEqual([]);
  });

  it('reports a Deployment past its progress deadline', () => {
    const stuck = deployment('web', NS, {
      revision: '7',
      status: {
        replicas: 4,
        updatedReplicas: 1,
        readyReplicas: 3,
        availableReplicas: 3,
        unavailableReplicas: 1,
        conditions: [
          { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
          {
            type: 'Progressing',
            status: 'False',
            reason: 'ProgressDeadlineExceeded',
            message: 'ReplicaSet "web-5f6d7c8b9" has timed out progressing.',
          },
        ],
      },
    });
    const f = only(analyze('workload-rollout', [stuck]), 'WORKLOAD_ROLLOUT_STUCK');
    expect(f.message).toBe('Deployment web stopped progressing: ReplicaSet "web-5f6d7c8b9" has timed out progressing.');
    expect(f.evidence).toEqual(['replicas 3, updated 1, available 3, unavailable 1', 'revision 7']);
    const progressing = deployment('web', NS, {
      status: {
        replicas: 3,
        availableReplicas: 3,
        conditions: [{ type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' }],
      },
    });
    expect(analyze('workload-rollout', [progressing])).toEqual([]);
  });

  const cron: KubeObject = {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'nightly-export', namespace: NS, uid: 'uid-nightly-export', creationTimestamp: CREATED },
    spec: { schedule: '0 2 * * *', jobTemplate: { spec: { backoffLimit: 2 } } },
  };
  const job = (name: string, createdAgo: number, outcome: 'Failed' | 'Complete', owned = true): KubeObject => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      creationTimestamp: ago(createdAgo),
      ...(owned
        ? {
            ownerReferences: [
              {
                apiVersion: 'batch/v1',
                kind: 'CronJob',
                name: 'nightly-export',
                uid: 'uid-nightly-export',
                controller: true,
              },
            ],
          }
        : {}),
    },
    spec: { backoffLimit: 2, completions: 1, parallelism: 1 },
    status:
      outcome === 'Failed'
        ? {
            failed: 3,
            startTime: ago(createdAgo),
            conditions: [
              {
                type: 'Failed',
                status: 'True',
                reason: 'BackoffLimitExceeded',
                message: 'Job has reached the specified backoff limit',
                lastTransitionTime: ago(createdAgo - 10),
              },
            ],
          }
        : {
            succeeded: 1,
            startTime: ago(createdAgo),
            completionTime: ago(createdAgo - 5),
            conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: ago(createdAgo - 5) }],
          },
  });

  it('reports a failed Job of a CronJob, owned by the CronJob', () => {
    const f = only(analyze('workload-rollout', [cron, job('nightly-export-29012345', 190, 'Failed')]), 'JOB_FAILED');
    expect(f.owner).toEqual({ kind: 'CronJob', name: 'nightly-export', namespace: NS });
    expect(f.message).toBe(
      'Job nightly-export-29012345 of CronJob nightly-export failed: BackoffLimitExceeded Job has reached the specified backoff limit',
    );
    expect(f.evidence).toEqual(['failed 3, succeeded 0, backoffLimit 2', 'failed 3h ago']);
  });

  it('leaves a failed run alone once a later run of the same CronJob completed', () => {
    const findings = analyze('workload-rollout', [
      cron,
      job('nightly-export-29012345', 190, 'Failed'),
      job('nightly-export-29013785', 60, 'Complete'),
    ]);
    expect(findings).toEqual([]);
  });

  it('still reports a failed run when only an earlier run completed, and a failure more than a day old not at all', () => {
    const earlier = analyze('workload-rollout', [
      cron,
      job('nightly-export-29012345', 190, 'Failed'),
      job('nightly-export-29010905', 1630, 'Complete'),
    ]);
    expect(earlier.map((f) => f.code)).toEqual(['JOB_FAILED']);
    expect(analyze('workload-rollout', [cron, job('nightly-export-29001000', 28 * 60, 'Failed')])).toEqual([]);
  });

  const pdb: KubeObject = {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'ledger-pdb', namespace: NS, creationTimestamp: CREATED },
    spec: { minAvailable: 2, selector: { matchLabels: { app: 'ledger' } } },
    status: { currentHealthy: 2, desiredHealthy: 2, disruptionsAllowed: 0, expectedPods: 2, observedGeneration: 1 },
  };
  const node = (name: string, cordoned: boolean): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, creationTimestamp: CREATED, labels: { 'kubernetes.io/hostname': name } },
    spec: cordoned
      ? {
          unschedulable: true,
          taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: ago(15) }],
        }
      : {},
    status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] },
  });
  const ledgerPods = [
    pod('ledger-0', { app: 'ledger' }, { owner: { kind: 'StatefulSet', name: 'ledger' }, node: 'worker-2' }),
    pod('ledger-1', { app: 'ledger' }, { owner: { kind: 'StatefulSet', name: 'ledger' }, node: 'worker-3' }),
  ];

  it('reports a disruption budget that allows no eviction while a node of its pods is cordoned', () => {
    const f = only(
      analyze('workload-rollout', [pdb, ...ledgerPods, node('worker-2', true), node('worker-3', false)]),
      'PDB_BLOCKS_DISRUPTION',
    );
    expect(f.message).toBe(
      'PodDisruptionBudget ledger-pdb allows no disruption (2 healthy, 2 required), so draining worker-2 cannot evict its pods.',
    );
    expect(f.evidence).toEqual([
      'minAvailable 2',
      'node worker-2 is cordoned (SchedulingDisabled)',
      'pods the drain cannot evict: ledger-0 on worker-2',
    ]);
    expect(f.related).toEqual([{ kind: 'Node', name: 'worker-2' }]);
    expect(f.severity).toBe('low');
  });

  it('says nothing of a disruption budget when no node is being drained', () => {
    expect(analyze('workload-rollout', [pdb, ...ledgerPods, node('worker-2', false)])).toEqual([]);
    const allowing = { ...pdb, status: { ...pdb.status, disruptionsAllowed: 1, currentHealthy: 3 } };
    expect(analyze('workload-rollout', [allowing, ...ledgerPods, node('worker-2', true)])).toEqual([]);
  });

  it('does not blame a disruption budget for a cordoned node none of its pods run on', () => {
    expect(analyze('workload-rollout', [pdb, ...ledgerPods, node('worker-9', true)])).toEqual([]);
  });
});

// ================================================================================================================
// dependencies
// ================================================================================================================

describe('parseDependencyFailure', () => {
  it.each([
    // Go net/http, database/sql, gRPC
    ['dial tcp 10.96.0.20:5432: connect: connection refused', { host: '10.96.0.20', port: 5432, kind: 'connect' }],
    [
      'failed to connect to `host=postgres user=app database=orders`: dial error (dial tcp 10.96.0.20:5432: connect: connection refused)',
      { host: '10.96.0.20', port: 5432, kind: 'connect' },
    ],
    [
      'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 10.96.0.31:50051: i/o timeout"',
      { host: '10.96.0.31', port: 50051, kind: 'connect' },
    ],
    [
      'dial tcp: lookup postgres.db.svc.cluster.local on 10.96.0.10:53: no such host',
      { host: 'postgres.db.svc.cluster.local', kind: 'dns' },
    ],
    ['dial tcp: lookup inventory: i/o timeout', { host: 'inventory', kind: 'dns' }],
    // Node.js
    ['Error: connect ECONNREFUSED 10.96.0.20:5432', { host: '10.96.0.20', port: 5432, kind: 'connect' }],
    ['Error: getaddrinfo ENOTFOUND redis.cache.svc', { host: 'redis.cache.svc', kind: 'dns' }],
    ['Error: getaddrinfo EAI_AGAIN orders', { host: 'orders', kind: 'dns' }],
    // Python
    [
      'psycopg2.OperationalError: could not translate host name "postgres" to address: Name or service not known',
      { host: 'postgres', kind: 'dns' },
    ],
    [
      'redis.exceptions.ConnectionError: Error 111 connecting to redis:6379. Connection refused.',
      { host: 'redis', port: 6379, kind: 'connect' },
    ],
    // Java
    [
      'java.net.UnknownHostException: orders.shop.svc: Name or service not known',
      { host: 'orders.shop.svc', kind: 'dns' },
    ],
    [
      'org.postgresql.util.PSQLException: Connection to postgres.db.svc:5432 refused. Check that the hostname and port are correct and that the postmaster is accepting TCP/IP connections.',
      { host: 'postgres.db.svc', port: 5432, kind: 'connect' },
    ],
    // PostgreSQL's libpq (psql, psycopg, pg_isready) from version 14 on
    [
      'psql: error: connection to server at "postgres.db.svc" (10.96.0.20), port 5432 failed: Connection refused',
      { host: 'postgres.db.svc', port: 5432, kind: 'connect' },
    ],
  ])('reads %j', (line, expected) => {
    expect(parseDependencyFailure(line)).toEqual({ ...expected, line });
  });

  it('reads the host Python requests could not reach', () => {
    const refused =
      "requests.exceptions.ConnectionError: HTTPConnectionPool(host='inventory', port=8080): Max retries exceeded with url: /api/stock (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f3a2c1d0b50>: Failed to establish a new connection: [Errno 111] Connection refused'))";
    expect(parseDependencyFailure(refused)).toMatchObject({ host: 'inventory', port: 8080, kind: 'connect' });
    const unresolved =
      "requests.exceptions.ConnectionError: HTTPConnectionPool(host='inventroy', port=8080): Max retries exceeded with url: /api/stock (Caused by NameResolutionError(\"<urllib3.connection.HTTPConnection object at 0x7f3a2c1d0b50>: Failed to resolve 'inventroy' ([Errno -2] Name or service not known)\"))";
    expect(parseDependencyFailure(unresolved)).toMatchObject({ host: 'inventroy', port: 8080, kind: 'dns' });
  });

  it('treats a name that does not resolve as DNS whatever the client calls it', () => {
    expect(parseDependencyFailure('Error -2 connecting to redis:6379. Name or service not known.')?.kind).toBe('dns');
    expect(
      parseDependencyFailure('Error -3 connecting to redis:6379. Temporary failure in name resolution.')?.kind,
    ).toBe('dns');
  });

  it('finds no host in lines that name none', () => {
    expect(
      parseDependencyFailure('HikariPool-1 - Connection is not available, request timed out after 30000ms.'),
    ).toBeUndefined();
    expect(parseDependencyFailure('Caused by: java.net.ConnectException: Connection refused')).toBeUndefined();
    expect(parseDependencyFailure('level=info msg="listening on :8080"')).toBeUndefined();
  });
});

describe('configuredHosts', () => {
  const config: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'orders-config', namespace: NS },
    data: {
      DATABASE_URL: 'postgres://app@postgres.db.svc.cluster.local:5432/orders?sslmode=disable',
      REDIS_ADDR: 'redis:6379',
      LOG_LEVEL: 'info',
    },
  };
  const other: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'orders-config', namespace: 'staging' },
    data: { DATABASE_URL: 'postgres://app@postgres-staging:5432/orders' },
  };
  const flags: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'flags', namespace: NS },
    data: { INVENTORY_URL: 'http://inventory.shop.svc:8080/api', unused: 'x' },
  };

  it('reads host:port values from env, ConfigMap keys and whole ConfigMaps, in the pod\u2019s namespace', () => {
    const client = pod(
      'orders-7c9f8b6d5-x2x7k',
      { app: 'orders' },
      {
        env: [
          { name: 'PAYMENTS_URL', value: 'http://payments:8080/v1' },
          { name: 'EXTERNAL_API', value: 'https://api.stripe.com/v1' },
          { name: 'INVENTORY_URL', valueFrom: { configMapKeyRef: { name: 'flags', key: 'INVENTORY_URL' } } },
          { name: 'LISTEN', value: '0.0.0.0:8080' },
        ],
        envFrom: [{ configMapRef: { name: 'orders-config' } }],
      },
    );
    const ctx = contextFromObjects({ namespace: NS, now: NOW, objects: [config, other, flags, client] });
    const hosts = configuredHosts(ctx, client);
    expect(hosts).toEqual(
      expect.arrayContaining([
        { host: 'payments', port: 8080 },
        { host: 'inventory.shop.svc', port: 8080 },
        { host: 'postgres.db.svc.cluster.local', port: 5432 },
        { host: 'redis', port: 6379 },
      ]),
    );
    expect(hosts).toHaveLength(4);
    expect(hosts.map((h) => h.host)).not.toContain('postgres-staging');
  });
});

describe('dependencies analyzer', () => {
  const client = pod(
    'orders-7c9f8b6d5-x2x7k',
    { app: 'orders', 'pod-template-hash': '7c9f8b6d5' },
    {
      owner: { kind: 'ReplicaSet', name: 'orders-7c9f8b6d5' },
      ip: '10.244.1.17',
    },
  );
  const clientObjects = [
    namespace(NS, { team: 'shop' }),
    deployment('orders'),
    replicaSet('orders', '7c9f8b6d5'),
    client,
  ];
  const clientLogs = (line: string) => ({
    [logKey(NS, client.metadata.name, 'app')]:
      `2026-03-04T11:58:01Z INFO starting orders\n2026-03-04T11:59:30Z ERROR ${line}\n`,
  });
  const refused = clientLogs('dial tcp 10.96.0.20:5432: connect: connection refused');

  const service = (name: string, ns: string, ip: string, port: number): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: ns, creationTimestamp: CREATED },
    spec: {
      type: 'ClusterIP',
      clusterIP: ip,
      clusterIPs: [ip],
      selector: { app: name },
      ports: [{ name: 'tcp', port, protocol: 'TCP', targetPort: port }],
    },
  });
  const endpoints = (name: string, ns: string, ready: boolean, port: number): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name, namespace: ns },
    subsets: [
      {
        [ready ? 'addresses' : 'notReadyAddresses']: [
          { ip: '10.244.2.9', nodeName: 'worker-2', targetRef: { kind: 'Pod', name: `${name}-0`, namespace: ns } },
        ],
        ports: [{ name: 'tcp', port, protocol: 'TCP' }],
      },
    ],
  });
  const postgres = (ns: string, ready: boolean) => [
    service('postgres', ns, '10.96.0.20', 5432),
    endpoints('postgres', ns, ready, 5432),
    statefulSet('postgres', ns),
    pod(
      'postgres-0',
      { app: 'postgres' },
      { ns, owner: { kind: 'StatefulSet', name: 'postgres' }, ip: '10.244.2.9', ready },
    ),
  ];
  const ingressPolicy = (ns: string, from: unknown[]): KubeObject => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'postgres-ingress', namespace: ns, creationTimestamp: CREATED },
    spec: {
      podSelector: { matchLabels: { app: 'postgres' } },
      policyTypes: ['Ingress'],
      ingress: [{ from, ports: [{ protocol: 'TCP', port: 5432 }] }],
    },
  });

  it('blames a Service with no ready endpoints, and names the workload behind it', () => {
    const f = only(
      analyze('dependencies', [...clientObjects, ...postgres(NS, false)], refused),
      'DEPENDENCY_UNAVAILABLE',
    );
    expect(f.resource).toEqual({ kind: 'Pod', name: client.metadata.name, namespace: NS });
    expect(f.owner).toEqual({ kind: 'Deployment', name: 'orders', namespace: NS });
    expect(f.related).toEqual([
      { kind: 'Service', name: 'postgres', namespace: NS },
      { kind: 'StatefulSet', name: 'postgres', namespace: NS },
    ]);
    expect(f.message).toBe(
      'Deployment orders fails because Service postgres has no ready endpoints (its pods belong to StatefulSet postgres).',
    );
    expect(f.evidence).toEqual([
      `${client.metadata.name}: 2026-03-04T11:59:30Z ERROR dial tcp 10.96.0.20:5432: connect: connection refused`,
    ]);
  });

  it('blames the ingress NetworkPolicy that does not admit the client', () => {
    const policy = ingressPolicy(NS, [{ podSelector: { matchLabels: { app: 'billing' } } }]);
    const f = only(
      analyze('dependencies', [...clientObjects, ...postgres(NS, true), policy], refused),
      'NETWORK_POLICY_BLOCKS',
    );
    expect(f.resource).toEqual({ kind: 'NetworkPolicy', name: 'postgres-ingress', namespace: NS });
    expect(f.related).toEqual([
      { kind: 'Service', name: 'postgres', namespace: NS },
      { kind: 'Deployment', name: 'orders', namespace: NS },
      { kind: 'StatefulSet', name: 'postgres', namespace: NS },
    ]);
    expect(f.message).toContain('admits no traffic from Deployment orders (namespace shop)');
    expect(f.evidence[1]).toContain('NetworkPolicy postgres-ingress: podSelector {"matchLabels":{"app":"postgres"}}');
  });

  it('does not blame an ingress NetworkPolicy that admits the client', () => {
    const policy = ingressPolicy(NS, [{ podSelector: { matchLabels: { app: 'orders' } } }]);
    const findings = analyze('dependencies', [...clientObjects, ...postgres(NS, true), policy], refused);
    expect(findings.map((f) => f.code)).toEqual(['DEPENDENCY_ERRORS']);
  });

  it('follows a Service in another namespace to its pods and the policy there', () => {
    const policy = ingressPolicy('db', [{ namespaceSelector: { matchLabels: { team: 'db' } } }]);
    const connect = clientLogs('dial tcp 10.96.0.20:5432: i/o timeout');
    const objects = [...clientObjects, namespace('db', { team: 'db' }), ...postgres('db', true), policy];
    const f = only(analyze('dependencies', objects, connect), 'NETWORK_POLICY_BLOCKS');
    expect(f.resource).toEqual({ kind: 'NetworkPolicy', name: 'postgres-ingress', namespace: 'db' });
    expect(f.related).toContainEqual({ kind: 'StatefulSet', name: 'postgres', namespace: 'db' });
    expect(f.message).toContain(
      'NetworkPolicy postgres-ingress in db admits no traffic from Deployment orders (namespace shop)',
    );
    // Admitted from the client's namespace: no blame.
    const open = ingressPolicy('db', [{ namespaceSelector: { matchLabels: { team: 'shop' } } }]);
    const fine = analyze(
      'dependencies',
      [...clientObjects, namespace('db', { team: 'db' }), ...postgres('db', true), open],
      connect,
    );
    expect(fine.map((x) => x.code)).toEqual(['DEPENDENCY_ERRORS']);
    expect(fine[0]?.related).toEqual([
      { kind: 'Service', name: 'postgres', namespace: 'db' },
      { kind: 'StatefulSet', name: 'postgres', namespace: 'db' },
    ]);
  });

  const dnsLookup = clientLogs('dial tcp: lookup postgres.shop.svc.cluster.local on 10.96.0.10:53: no such host');
  const egressPolicy = (extra: unknown[] = []): KubeObject => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'orders-egress', namespace: NS, creationTimestamp: CREATED },
    spec: {
      podSelector: { matchLabels: { app: 'orders' } },
      policyTypes: ['Egress'],
      egress: [
        { to: [{ podSelector: { matchLabels: { app: 'postgres' } } }], ports: [{ protocol: 'TCP', port: 5432 }] },
        ...extra,
      ],
    },
  });
  const coredns = pod(
    'coredns-5d78c9869d-4kq2x',
    { 'k8s-app': 'kube-dns' },
    { ns: 'kube-system', owner: { kind: 'ReplicaSet', name: 'coredns-5d78c9869d' } },
  );

  it('blames an egress policy without port 53 when a Service that exists does not resolve', () => {
    const objects = [...clientObjects, ...postgres(NS, true), egressPolicy(), coredns, namespace('kube-system')];
    const f = only(analyze('dependencies', objects, dnsLookup), 'NETWORK_POLICY_BLOCKS_DNS');
    expect(f.resource).toEqual({ kind: 'NetworkPolicy', name: 'orders-egress', namespace: NS });
    expect(f.related).toEqual([{ kind: 'Deployment', name: 'orders', namespace: NS }]);
    expect(f.message).toBe(
      'NetworkPolicy orders-egress allows Deployment orders no egress to cluster DNS (port 53), so every name lookup fails.',
    );
  });

  it('does not blame an egress policy that lets DNS through', () => {
    const dns = {
      to: [
        {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
          podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
        },
      ],
      ports: [
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ],
    };
    const objects = [...clientObjects, ...postgres(NS, true), egressPolicy([dns]), coredns, namespace('kube-system')];
    const findings = analyze('dependencies', objects, dnsLookup);
    expect(findings.map((f) => f.code)).not.toContain('NETWORK_POLICY_BLOCKS_DNS');
  });

  it('names the ConfigMap that holds a host no Service answers to', () => {
    const config: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'orders-config', namespace: NS },
      data: { LEDGER_URL: 'http://ledger:8080/v1', REDIS_ADDR: 'redis:6379' },
    };
    // Holds the right name, which contains the wrong one: not where the wrong name comes from.
    const gateway: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'gateway-routes', namespace: NS },
      data: { 'routes.yaml': 'upstreams:\n  - http://ledger-api:8080\n' },
    };
    const logs = clientLogs('dial tcp: lookup ledger on 10.96.0.10:53: no such host');
    const objects = [
      ...clientObjects,
      ...postgres(NS, true),
      service('ledger-api', NS, '10.96.0.44', 8080),
      gateway,
      config,
    ];
    const f = only(analyze('dependencies', objects, logs), 'DEPENDENCY_HOST_NOT_FOUND');
    expect(f.owner).toEqual({ kind: 'ConfigMap', name: 'orders-config', namespace: NS });
    expect(f.related).toEqual([{ kind: 'Deployment', name: 'orders', namespace: NS }]);
    expect(f.message).toBe(
      'Deployment orders calls ledger, but no Service ledger exists in namespace shop; the host name comes from ConfigMap orders-config.',
    );
    expect(f.evidence).toContain('Services in shop: ledger-api, postgres');
  });

  it('makes the client the owner of a missing host that no ConfigMap holds', () => {
    const logs = clientLogs('dial tcp: lookup ledger on 10.96.0.10:53: no such host');
    const f = only(
      analyze('dependencies', [...clientObjects, ...postgres(NS, true)], logs),
      'DEPENDENCY_HOST_NOT_FOUND',
    );
    expect(f.owner).toEqual({ kind: 'Deployment', name: 'orders', namespace: NS });
    expect(f.related).toEqual([]);
  });

  it('names the link to a Service in a namespace that was not read, for the engine to follow', () => {
    const logs = clientLogs(
      'org.postgresql.util.PSQLException: Connection to postgres.db.svc:5432 refused. Check that the hostname and port are correct and that the postmaster is accepting TCP/IP connections.',
    );
    const findings = analyze('dependencies', [...clientObjects, ...postgres(NS, true)], logs);
    const f = only(findings, 'DEPENDENCY_UNREACHABLE');
    expect(f.owner).toEqual({ kind: 'Deployment', name: 'orders', namespace: NS });
    expect(f.related).toEqual([{ kind: 'Service', name: 'postgres', namespace: 'db' }]);
    expect(f.message).toBe('Deployment orders cannot reach postgres.db.svc:5432 (Service postgres in namespace db).');
    expect(foreignNamespaces(findings, NS, new Set([NS]))).toEqual(['db']);
  });

  it('reports one finding per client workload and dependency, however many replicas log it', () => {
    const second = pod(
      'orders-7c9f8b6d5-p4q8r',
      { app: 'orders', 'pod-template-hash': '7c9f8b6d5' },
      {
        owner: { kind: 'ReplicaSet', name: 'orders-7c9f8b6d5' },
        ip: '10.244.1.18',
      },
    );
    const logs = {
      ...refused,
      [logKey(NS, second.metadata.name, 'app')]: 'dial tcp 10.96.0.20:5432: connect: connection refused',
    };
    const findings = analyze('dependencies', [...clientObjects, second, ...postgres(NS, false)], logs);
    expect(findings.map((f) => f.code)).toEqual(['DEPENDENCY_UNAVAILABLE']);
  });

  it('says nothing when no client logs a failure', () => {
    const logs = clientLogs('GET /healthz 200 1.2ms');
    expect(analyze('dependencies', [...clientObjects, ...postgres(NS, false)], logs)).toEqual([]);
  });
});
