import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { classifyFailedCreate } from '../../../../src/triage/analyze/workload-rollout.js';
import {
  ago,
  analyze,
  CREATED,
  deployment,
  event,
  NS,
  only,
  pod,
  replicaSet,
  statefulSet,
} from '../../../support/analyzers/workload-dependencies.js';

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
