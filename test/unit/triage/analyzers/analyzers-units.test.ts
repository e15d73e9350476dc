import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { parseConfigError } from '../../../../src/triage/analyzers/container-config.js';
import { findEvents } from '../../../../src/triage/analyzers/events.js';
import { classifyPullError } from '../../../../src/triage/analyzers/image-pull.js';
import {
  ANALYZERS,
  contextFromObjects,
  getAnalyzer,
  runAnalyzers,
  UnknownAnalyzerError,
} from '../../../../src/triage/analyzers/index.js';
import {
  decisiveLogLine,
  EvidenceList,
  parseUnresolvedHost,
  quoteVerdict,
  revisionChanges,
  rolloutLine,
} from '../../../../src/triage/analyzers/pods.js';
import { parseQuantity } from '../../../../src/triage/analyzers/quantity.js';
import { parseSchedulingMessage } from '../../../../src/triage/analyzers/scheduling.js';
import { FindingSchema, SEVERITY_ORDER as SEVERITY_RANK } from '../../../../src/triage/findings.js';
import { analyze, loadFixture } from '../../../support/analyzers-support.js';

const NAMES = [
  'pvc-binding',
  'volume-mount',
  'scheduling',
  'crashloop',
  'container-config',
  'liveness-probe',
  'oom-killed',
  'image-pull',
  'node-health',
  'ingress',
  'route',
  'service-endpoints',
  'dns',
  'workload-rollout',
  'dependencies',
  'access',
  'volume-capacity',
  'add-ons',
  'mesh-tls',
  'egress-firewall',
  'volume-zone',
];

describe('analyzer registry', () => {
  it('holds exactly the named analyzers, each with a domain and its needs', () => {
    expect([...ANALYZERS.keys()].sort()).toEqual([...NAMES].sort());
    for (const name of NAMES) {
      const a = getAnalyzer(name);
      expect(a.name).toBe(name);
      expect(a.needs.length).toBeGreaterThan(0);
    }
  });

  it('refuses an unknown analyzer with the list of known ones', () => {
    expect(() => getAnalyzer('nope')).toThrow(UnknownAnalyzerError);
    expect(() => getAnalyzer('nope')).toThrow(/pvc-binding/);
  });

  it('has service-endpoints explain an empty Service next to the entry-point finding', () => {
    const fx = loadFixture('ingress-pending--backend-without-endpoints.yaml');
    const [svc] = analyze(fx, ['service-endpoints']);
    expect(svc).toMatchObject({
      code: 'SERVICE_NO_ENDPOINTS',
      severity: 'medium',
      resource: { kind: 'Service', name: 'blog-web' },
    });
    expect(svc?.evidence).toContain('Service blog-web selector app=blog-web');
  });

  it('returns findings that satisfy the Finding schema', () => {
    const fx = loadFixture('route-5xx--pods-not-ready.yaml');
    for (const f of analyze(fx)) expect(FindingSchema.safeParse(f).success).toBe(true);
  });
});

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

describe('log and message classifiers', () => {
  it('picks the most decisive log line over generic errors and stack frames', () => {
    const v = decisiveLogLine(
      'INFO start\nERROR something went wrong\nFATAL: config: required key DB_URL missing\n    at x (y.js:1)',
    );
    expect(v?.kind).toBe('config');
    expect(v?.line).toContain('DB_URL');
    expect(
      decisiveLogLine('panic: runtime error: index out of range [3] with length 3\ngoroutine 1 [running]:')?.kind,
    ).toBe('crash');
    expect(decisiveLogLine('dial tcp 10.0.0.5:5432: connect: connection refused')?.kind).toBe('dependency');
    expect(decisiveLogLine('open /etc/app/config.yaml: no such file or directory')?.kind).toBe('config');
    expect(decisiveLogLine('all good\nstill good')).toBeUndefined();
  });

  it('scrubs secrets from the decisive line', () => {
    expect(
      decisiveLogLine('Error: auth failed for postgres://app:hunter2@db:5432/app password=hunter2')?.line,
    ).not.toContain('hunter2');
  });

  it('classifies pull errors as containerd, CRI-O and Docker word them', () => {
    expect(classifyPullError('docker.io/acme/x:1: not found')).toBe('IMAGE_NOT_FOUND');
    expect(classifyPullError('reading manifest 1.0 in quay.io/acme/x: manifest unknown')).toBe('IMAGE_NOT_FOUND');
    expect(
      classifyPullError('pull access denied for acme/x, repository does not exist or may require authorization'),
    ).toBe('IMAGE_PULL_UNAUTHORIZED');
    expect(classifyPullError('no matching manifest for linux/arm64/v8 in the manifest list entries')).toBe(
      'IMAGE_PLATFORM_MISMATCH',
    );
    expect(
      classifyPullError(
        'choosing image instance: no image found in manifest list for architecture arm64, variant "v8", OS linux',
      ),
    ).toBe('IMAGE_PLATFORM_MISMATCH');
    expect(classifyPullError('dial tcp 52.1.1.1:443: i/o timeout')).toBe('IMAGE_PULL_BACKOFF');
  });

  it('names the missing ConfigMap or Secret and key', () => {
    expect(parseConfigError("couldn't find key LOG_LEVEL in ConfigMap billing/billing-config")).toEqual({
      kind: 'ConfigMap',
      name: 'billing-config',
      key: 'LOG_LEVEL',
    });
    expect(parseConfigError('secret "db-creds" not found')).toEqual({ kind: 'Secret', name: 'db-creds' });
  });

  it('parses Kubernetes quantities', () => {
    expect(parseQuantity('500m')).toBe(0.5);
    expect(parseQuantity('128Mi')).toBe(128 * 2 ** 20);
    expect(parseQuantity('1G')).toBe(1e9);
    expect(parseQuantity('1e3')).toBe(1000);
    expect(parseQuantity('lots')).toBeUndefined();
  });
});

const NOW = new Date('2025-11-21T12:00:00Z');
const iso = (minAgo: number) => new Date(NOW.getTime() - minAgo * 60_000).toISOString();

function pod(
  name: string,
  extra: Partial<KubeObject> & { status: KubeObject['status']; spec?: KubeObject['spec'] },
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'demo', creationTimestamp: iso(600) },
    spec: { containers: [{ name: 'app', image: 'registry.example.com/app:1' }], ...extra.spec },
    status: extra.status,
  };
}

function event(object: string, reason: string, message: string, minAgo: number, count = 5): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${object}.${reason}.${minAgo}`, namespace: 'demo' },
    involvedObject: { kind: 'Pod', name: object, namespace: 'demo' },
    reason,
    message,
    type: 'Warning',
    count,
    firstTimestamp: iso(minAgo + 10),
    lastTimestamp: iso(minAgo),
  };
}

const runningReady = {
  phase: 'Running',
  conditions: [
    { type: 'Ready', status: 'True' },
    { type: 'PodScheduled', status: 'True' },
  ],
  containerStatuses: [{ name: 'app', ready: true, restartCount: 0, state: { running: { startedAt: iso(500) } } }],
};

describe('recency', () => {
  it('does not turn old events on healthy pods into findings', () => {
    const objects = [
      pod('web-1', { status: runningReady, spec: { nodeName: 'n1' } }),
      event('web-1', 'FailedMount', 'MountVolume.SetUp failed for volume "cfg" : configmap "cfg" not found', 180),
      event('web-1', 'Unhealthy', 'Liveness probe failed: HTTP probe failed with statuscode: 500', 240),
      event('web-1', 'Failed', 'Failed to pull image "registry.example.com/app:1": not found', 300),
    ];
    const findings = runAnalyzers(
      [...ANALYZERS.values()],
      contextFromObjects({ namespace: 'demo', now: NOW, objects }),
    );
    expect(findings).toEqual([]);
  });

  it('ranks a current fault above leftovers of an old one', () => {
    const objects = [
      pod('old-1', {
        status: {
          ...runningReady,
          containerStatuses: [
            {
              name: 'app',
              ready: true,
              restartCount: 1,
              state: { running: { startedAt: iso(60 * 20) } },
              lastState: { terminated: { reason: 'OOMKilled', exitCode: 137, finishedAt: iso(60 * 20) } },
            },
          ],
        },
        spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'x', resources: { limits: { memory: '256Mi' } } }] },
      }),
      event('old-1', 'Unhealthy', 'Liveness probe failed: connection refused', 60 * 20, 40),
      pod('new-1', {
        status: {
          phase: 'Pending',
          conditions: [{ type: 'PodScheduled', status: 'True' }],
          containerStatuses: [
            {
              name: 'app',
              ready: false,
              restartCount: 0,
              state: { waiting: { reason: 'CreateContainerConfigError', message: 'secret "api-token" not found' } },
            },
          ],
        },
        spec: { nodeName: 'n1' },
      }),
    ];
    const findings = runAnalyzers(
      [...ANALYZERS.values()],
      contextFromObjects({ namespace: 'demo', now: NOW, objects }),
    );
    expect(findings[0]).toMatchObject({
      code: 'CONTAINER_CONFIG_ERROR',
      severity: 'high',
      resource: { name: 'new-1' },
    });
    expect(findings[0]?.message).toContain('Secret api-token');
    const old = findings.find((f) => f.resource.name === 'old-1');
    expect(old?.code).toBe('CONTAINER_OOMKILLED');
    expect(SEVERITY_RANK[old!.severity]).toBeLessThanOrEqual(SEVERITY_RANK.low);
    expect(findings.map((f) => f.code)).not.toContain('CONTAINER_LIVENESS_FAILING');
  });

  it('sums repeated events across replicas', () => {
    const fx = loadFixture('scheduling-failures--insufficient-cpu.yaml');
    const top = analyze(fx, ['scheduling'])[0];
    expect(top?.evidence[0]).toContain('21 FailedScheduling event(s)');
  });

  it('reads events.k8s.io series counts and times', () => {
    const ev: KubeObject = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'x.1', namespace: 'demo', creationTimestamp: iso(50) },
      regarding: { kind: 'Pod', name: 'x', namespace: 'demo' },
      reason: 'BackOff',
      note: 'Back-off restarting failed container',
      type: 'Warning',
      series: { count: 42, lastObservedTime: iso(1) },
    };
    const ctx = contextFromObjects({ namespace: 'demo', now: NOW, objects: [ev] });
    const [summary] = findEvents(ctx, { kind: 'Pod', name: 'x' });
    expect(summary).toMatchObject({ count: 42, reason: 'BackOff', message: 'Back-off restarting failed container' });
    expect(summary?.last?.toISOString()).toBe(iso(1));
  });
});

describe('WaitForFirstConsumer', () => {
  const base = loadFixture('healthy.yaml');

  it('is info while no pod uses the claim', () => {
    const findings = analyze(base, ['pvc-binding']);
    expect(findings.map((f) => [f.code, f.severity])).toEqual([['PVC_WAIT_FOR_FIRST_CONSUMER', 'info']]);
  });

  it('points at the consumer when the consumer cannot be scheduled, and stays below the scheduling cause', () => {
    const consumer: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'export-job-abc12', namespace: 'wiki', creationTimestamp: '2025-11-21T09:40:00Z' },
      spec: {
        containers: [{ name: 'export', image: 'x' }],
        volumes: [{ name: 'scratch', persistentVolumeClaim: { claimName: 'wiki-export-scratch' } }],
      },
      status: {
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: '0/2 nodes are available: 2 Insufficient memory.',
          },
        ],
      },
    };
    const findings = analyze({ ...base, objects: [...base.objects, consumer] }, ['pvc-binding', 'scheduling']);
    expect(findings[0]).toMatchObject({ code: 'POD_INSUFFICIENT_MEMORY', severity: 'high' });
    const wffc = findings.find((f) => f.code === 'PVC_WAIT_FOR_FIRST_CONSUMER');
    expect(wffc?.severity).toBe('low');
    expect(wffc?.related).toContainEqual({ kind: 'Pod', name: 'export-job-abc12', namespace: 'wiki' });
  });
});

describe('missing evidence', () => {
  it('stays quiet about kinds whose reads failed instead of guessing', () => {
    const fx = loadFixture('pvc-binding--no-default-storageclass.yaml');
    const ctx = contextFromObjects({
      namespace: fx.namespace,
      now: fx.now,
      objects: fx.objects.filter((o) => o.kind !== 'StorageClass'),
      unavailable: ['storageclasses'],
    });
    expect(runAnalyzers([getAnalyzer('pvc-binding')], ctx)).toEqual([]);
  });

  it('does not report an ingress class problem when IngressClasses could not be read', () => {
    const fx = loadFixture('ingress-pending--no-class.yaml');
    const ctx = contextFromObjects({
      namespace: fx.namespace,
      now: fx.now,
      objects: fx.objects.filter((o) => o.kind !== 'IngressClass'),
      unavailable: ['ingressclasses'],
    });
    const codes = runAnalyzers([getAnalyzer('ingress')], ctx).map((f) => f.code);
    expect(codes).not.toContain('INGRESS_NO_CLASS');
    expect(codes).toContain('INGRESS_NO_ADDRESS');
  });
});

describe('contextFromObjects', () => {
  it('indexes by kind, drops duplicates and unknown kinds, and reads logs by namespace', () => {
    const objects: KubeObject[] = [
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'b', namespace: 'demo' } },
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 'demo' } },
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 'demo' } },
      { apiVersion: 'v1', kind: 'Widget', metadata: { name: 'w' } },
    ];
    const ctx = contextFromObjects({
      namespace: 'demo',
      now: NOW,
      objects,
      logs: { 'demo/a/app': 'now', 'demo/a/app:previous': 'before', 'kube-system/coredns-1/coredns': 'dns' },
    });
    expect(ctx.objects('pods').map((p) => p.metadata.name)).toEqual(['a', 'b']);
    expect(ctx.objects('services')).toEqual([]);
    expect(ctx.log('a', 'app')).toBe('now');
    expect(ctx.log('a', 'app', true)).toBe('before');
    expect(ctx.log('coredns-1', 'coredns', false, 'kube-system')).toBe('dns');
    expect(ctx.log('zzz', 'app')).toBeUndefined();
  });
});

/** Minimal hand-built objects for the evidence-reading cases below: each test states exactly what the cluster shows. */
const NS = 'demo';
const at = (minAgo: number) => new Date(NOW.getTime() - minAgo * 60_000).toISOString();

function run(names: string[], objects: KubeObject[], logs: Record<string, string> = {}) {
  const ctx = contextFromObjects({ namespace: NS, now: NOW, objects, logs });
  return runAnalyzers(
    names.map((n) => getAnalyzer(n)),
    ctx,
    {
      warn: (message: string) => {
        throw new Error(message);
      },
    },
  );
}

interface PodSpec {
  owner?: { kind: string; name: string };
  containers?: Record<string, unknown>[];
  initContainers?: Record<string, unknown>[];
  statuses?: Record<string, unknown>[];
  initStatuses?: Record<string, unknown>[];
  node?: string;
  ready?: boolean;
  phase?: string;
  volumes?: Record<string, unknown>[];
  namespace?: string;
  conditions?: Record<string, unknown>[];
  nodeSelector?: Record<string, string>;
}

function makePod(name: string, p: PodSpec = {}): KubeObject {
  const ready = p.ready ?? false;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: p.namespace ?? NS,
      creationTimestamp: at(120),
      ...(p.owner ? { ownerReferences: [{ ...p.owner, controller: true }] } : {}),
    },
    spec: {
      containers: p.containers ?? [{ name: 'app', image: 'registry.example.com/app:1' }],
      ...(p.initContainers ? { initContainers: p.initContainers } : {}),
      ...(p.node ? { nodeName: p.node } : {}),
      ...(p.volumes ? { volumes: p.volumes } : {}),
      ...(p.nodeSelector ? { nodeSelector: p.nodeSelector } : {}),
    },
    status: {
      phase: p.phase ?? 'Running',
      conditions: p.conditions ?? [
        { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: at(100) },
        { type: 'PodScheduled', status: p.node ? 'True' : 'False' },
      ],
      containerStatuses: p.statuses ?? [],
      ...(p.initStatuses ? { initContainerStatuses: p.initStatuses } : {}),
    },
  };
}

const crashing = (name: string, exitCode = 1, restarts = 6, extra: Record<string, unknown> = {}) => ({
  name,
  ready: false,
  restartCount: restarts,
  state: { waiting: { reason: 'CrashLoopBackOff', message: `back-off 5m0s restarting failed container=${name}` } },
  lastState: { terminated: { reason: 'Error', exitCode, finishedAt: at(2), startedAt: at(3) } },
  ...extra,
});

const runningOk = (name: string, restarts = 0) => ({
  name,
  ready: true,
  restartCount: restarts,
  state: { running: { startedAt: at(90) } },
});

function podEvent(
  pod: string,
  reason: string,
  message: string,
  minAgo: number,
  opts: { count?: number; type?: string; kind?: string; namespace?: string; fieldPath?: string } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${pod}.${reason}.${minAgo}.${message.length}`, namespace: opts.namespace ?? NS },
    involvedObject: {
      kind: opts.kind ?? 'Pod',
      name: pod,
      ...(opts.kind === 'Node' ? {} : { namespace: opts.namespace ?? NS }),
      ...(opts.fieldPath ? { fieldPath: opts.fieldPath } : {}),
    },
    reason,
    message,
    type: opts.type ?? 'Warning',
    count: opts.count ?? 1,
    firstTimestamp: at(minAgo + 5),
    lastTimestamp: at(minAgo),
  };
}

/** The events.k8s.io/v1 shape: `regarding`, `note`, `eventTime` and `series`. */
function seriesEvent(kind: string, name: string, reason: string, note: string, minAgo: number, count = 3): KubeObject {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: `${name}.${reason}.${minAgo}`, namespace: kind === 'Node' ? 'default' : NS },
    regarding: { kind, name, ...(kind === 'Node' ? {} : { namespace: NS }) },
    reason,
    note,
    type: 'Warning',
    eventTime: at(minAgo + 10),
    series: { count, lastObservedTime: at(minAgo) },
  };
}

function replicaSet(
  name: string,
  deployment: string,
  revision: number,
  replicas: number,
  ready: number,
  template: Record<string, unknown>,
): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name,
      namespace: NS,
      annotations: { 'deployment.kubernetes.io/revision': String(revision) },
      ownerReferences: [{ kind: 'Deployment', name: deployment, controller: true }],
    },
    spec: { replicas, template: { spec: template } },
    status: { replicas, readyReplicas: ready, availableReplicas: ready },
  };
}

function deployment(name: string, revision: number, replicas: number, available: number): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS, annotations: { 'deployment.kubernetes.io/revision': String(revision) } },
    spec: { replicas },
    status: { replicas, availableReplicas: available, readyReplicas: available },
  };
}

function node(
  name: string,
  extra: { labels?: Record<string, string>; taints?: unknown[]; memory?: string; cpu?: string } = {},
) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', ...extra.labels } },
    spec: extra.taints ? { taints: extra.taints } : {},
    status: { allocatable: { cpu: extra.cpu ?? '4', memory: extra.memory ?? '16Gi', pods: '110' } },
  } as KubeObject;
}

describe('decisive log lines', () => {
  it('quotes the exception a traceback ends with, not the Traceback header', () => {
    const v = decisiveLogLine(
      'INFO starting\nTraceback (most recent call last):\n  File "/app/main.py", line 3, in <module>\n    main()\nValueError: SHARD_COUNT must be a number',
    );
    expect(v?.line).toBe('ValueError: SHARD_COUNT must be a number');
  });

  it('reads libpq, glibc and curl lookup failures as DNS', () => {
    expect(
      decisiveLogLine(
        'psycopg2.OperationalError: could not translate host name "db.shop.svc" to address: Name or service not known',
      )?.kind,
    ).toBe('dns');
    expect(decisiveLogLine('curl: (6) Could not resolve host: api.example.com')?.kind).toBe('dns');
  });

  it('keeps the lines that continue the decisive one, and stops at a stack frame or a new record', () => {
    const v = decisiveLogLine(
      'ERROR: Validate failed: Migrations have failed validation\nDetected failed migration to version 42 (add index).\n\nNeed help? See the docs',
    );
    expect(v?.detail).toBe('Detected failed migration to version 42 (add index).');
    expect(quoteVerdict(v!)).toBe(
      'ERROR: Validate failed: Migrations have failed validation — Detected failed migration to version 42 (add index).',
    );
    expect(decisiveLogLine('FATAL: boom\n    at main (x.js:1)\n2025-01-01 INFO next')?.detail).toBeUndefined();
  });

  it('reduces a structured JSON record to its level, message, error and caller', () => {
    const v = decisiveLogLine(
      '{"level":"fatal","ts":"2026-02-11T10:19:47Z","caller":"cmd/main.go:47","msg":"invalid configuration","error":"required key PSP_URL missing value","stacktrace":"main.main"}',
    );
    expect(v?.kind).toBe('config');
    expect(quoteVerdict(v!)).toBe('fatal: invalid configuration: required key PSP_URL missing value (cmd/main.go:47)');
  });
});

describe('parseUnresolvedHost', () => {
  it('finds the host in Go, libpq, Node, Java and curl wording and tells "no such name" from "no answer"', () => {
    expect(parseUnresolvedHost('dial tcp: lookup db.shop.svc.cluster.local on 10.96.0.10:53: no such host')).toEqual({
      host: 'db.shop.svc.cluster.local',
      nameDoesNotExist: true,
    });
    expect(parseUnresolvedHost('could not translate host name "pg" to address: Name or service not known')).toEqual({
      host: 'pg',
      nameDoesNotExist: true,
    });
    expect(parseUnresolvedHost('Error: getaddrinfo ENOTFOUND redis-master')).toEqual({
      host: 'redis-master',
      nameDoesNotExist: true,
    });
    expect(parseUnresolvedHost('getaddrinfo EAI_AGAIN redis-master')?.nameDoesNotExist).toBe(false);
    expect(
      parseUnresolvedHost('could not translate host name "pg" to address: Temporary failure in name resolution')
        ?.nameDoesNotExist,
    ).toBe(false);
    expect(parseUnresolvedHost('lookup api.example.com on 10.0.0.2:53: server misbehaving')?.nameDoesNotExist).toBe(
      false,
    );
    expect(parseUnresolvedHost('java.net.UnknownHostException: kafka-0.kafka: Name or service not known')?.host).toBe(
      'kafka-0.kafka',
    );
    expect(parseUnresolvedHost('connection refused')).toBeUndefined();
  });
});

describe('crashloop reads the evidence', () => {
  const sts = { kind: 'StatefulSet', name: 'sync' };
  const cm: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'sync-config', namespace: NS },
    data: { DB_HOST: 'pg-primary.demo.svc.cluster.local', DB_PORT: '5432' },
  };
  const spec = [{ name: 'sync', image: 'r/sync:1', envFrom: [{ configMapRef: { name: 'sync-config' } }] }];
  const failing = makePod('sync-2', { owner: sts, containers: spec, statuses: [crashing('sync')], node: 'n1' });
  const healthy = ['sync-0', 'sync-1'].map((n) =>
    makePod(n, { owner: sts, containers: spec, statuses: [runningOk('sync')], node: 'n1', ready: true }),
  );
  const log = {
    'demo/sync-2/sync:previous':
      'connecting\nTraceback (most recent call last):\n  File "db.py", line 2\npsycopg2.OperationalError: could not translate host name "pg-primary.demo.svc.cluster.local" to address: Name or service not known',
  };

  it('traces a host that does not exist to the ConfigMap key that names it, and makes the ConfigMap the owner', () => {
    const [f] = run(['crashloop'], [failing, ...healthy, cm], log);
    expect(f).toMatchObject({
      code: 'CONTAINER_CRASHLOOP_CONFIG_ERROR',
      owner: { kind: 'ConfigMap', name: 'sync-config' },
    });
    expect(f?.related).toContainEqual({ kind: 'ConfigMap', name: 'sync-config', namespace: NS });
    expect(f?.message).toContain('set by ConfigMap sync-config key DB_HOST');
    expect(f?.evidence.join('\n')).toContain('could not translate host name');
    expect(f?.evidence.join('\n')).toContain('sync-0, sync-1 of StatefulSet sync are ready');
  });

  it('names the missing Service when Services were read, and leaves an existing Service to the DNS analyzers', () => {
    const svc = (name: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: NS },
    });
    const [missing] = run(['crashloop'], [failing, cm, svc('pg')], log);
    expect(missing?.evidence).toContain('no Service pg-primary in namespace demo (Services there: pg)');
    const [exists] = run(['crashloop'], [failing, cm, svc('pg-primary')], log);
    expect(exists?.code).toBe('CONTAINER_CRASHLOOP');
    expect(exists?.owner).toBeUndefined();
  });

  it('does not blame the configuration when lookups merely time out', () => {
    const timeout = {
      'demo/sync-2/sync:previous':
        'psycopg2.OperationalError: could not translate host name "pg-primary.demo.svc.cluster.local" to address: Temporary failure in name resolution',
    };
    const [f] = run(['crashloop'], [failing, cm], timeout);
    expect(f?.code).toBe('CONTAINER_CRASHLOOP');
    expect(f?.owner).toBeUndefined();
  });

  it('names the init container that fails, and what it blocks', () => {
    const pod = makePod('api-1', {
      initContainers: [{ name: 'migrate', image: 'r/migrate:1' }],
      containers: [{ name: 'api', image: 'r/api:1' }],
      initStatuses: [crashing('migrate')],
      statuses: [{ name: 'api', ready: false, restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } }],
      phase: 'Pending',
      node: 'n1',
    });
    const [f] = run(['crashloop'], [pod], {
      'demo/api-1/migrate:previous': 'ERROR: Validate failed\nDetected failed migration to version 7 (drop column).',
    });
    expect(f?.message).toMatch(/^Init container migrate of pod api-1 keeps failing \(Init:CrashLoopBackOff\)/);
    expect(f?.message).toContain('Detected failed migration to version 7');
    expect(f?.evidence).toContain(
      'pod api-1: Init:CrashLoopBackOff; container(s) api cannot start until init container migrate succeeds',
    );
  });

  it('infers liveness restarts from failing probes and a SIGTERM exit when no kill event was read', () => {
    const probe = { httpGet: { port: 8081, path: '/healthz' } };
    const pod = makePod('auth-1', {
      containers: [{ name: 'auth', image: 'r/auth:1', livenessProbe: probe, ports: [{ containerPort: 8080 }] }],
      statuses: [crashing('auth', 143)],
      node: 'n1',
    });
    const unhealthy = podEvent(
      'auth-1',
      'Unhealthy',
      'Liveness probe failed: dial tcp 10.0.0.1:8081: connect: connection refused',
      1,
      {
        count: 30,
        fieldPath: 'spec.containers{auth}',
      },
    );
    const findings = run(['crashloop', 'liveness-probe'], [pod, unhealthy]);
    const crash = findings.find((f) => f.code === 'CONTAINER_CRASHLOOP');
    expect(crash?.severity).toBe('medium');
    expect(crash?.message).toContain('the restarts follow its failing liveness probe');
    const probeFinding = findings.find((f) => f.code === 'CONTAINER_LIVENESS_FAILING');
    expect(probeFinding?.message).toContain('the kubelet restarts the container');
    expect(probeFinding?.confidence).toBeGreaterThan(crash!.confidence);
  });

  it('names the replica that is failing now, not the first by name', () => {
    const owner = { kind: 'ReplicaSet', name: 'web-5d8f7' };
    const recovering = makePod('web-5d8f7-aaaaa', {
      owner,
      statuses: [
        { ...runningOk('app', 7), lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: at(3) } } },
      ],
      ready: true,
    });
    const backingOff = makePod('web-5d8f7-zzzzz', { owner, statuses: [crashing('app')] });
    const steady = makePod('web-5d8f7-mmmmm', { owner, statuses: [runningOk('app')], ready: true, node: 'n3' });
    const [f] = run(['crashloop'], [recovering, backingOff, steady], {
      'demo/web-5d8f7-zzzzz/app:previous': 'panic: nil map',
    });
    expect(f?.resource.name).toBe('web-5d8f7-zzzzz');
    expect(f?.evidence.join('\n')).toContain('web-5d8f7-zzzzz, web-5d8f7-aaaaa');
    expect(f?.evidence).toContain('ready replicas of ReplicaSet web-5d8f7: web-5d8f7-mmmmm (node n3)');
  });

  it('reports a crash loop of pods that are gone, after a complete rollout, as cleared history', () => {
    const objects = [
      deployment('inv', 12, 2, 2),
      replicaSet('inv-7bd5f8c96', 'inv', 11, 0, 0, {}),
      replicaSet('inv-84f6c9d7b5', 'inv', 12, 2, 2, {}),
      ...['inv-84f6c9d7b5-xtkmz', 'inv-84f6c9d7b5-fc5nc'].map((n) =>
        makePod(n, {
          owner: { kind: 'ReplicaSet', name: 'inv-84f6c9d7b5' },
          statuses: [runningOk('app')],
          ready: true,
        }),
      ),
      podEvent(
        'inv-7bd5f8c96-647fj',
        'BackOff',
        'Back-off restarting failed container app in pod inv-7bd5f8c96-647fj',
        180,
        {
          count: 31,
        },
      ),
    ];
    const [f] = run(['crashloop'], objects);
    expect(f).toMatchObject({ code: 'CONTAINER_CRASHLOOP_RESOLVED', severity: 'info' });
    expect(f?.stale).toContain('no longer exists');
    expect(f?.message).toContain(
      'ReplicaSet inv-84f6c9d7b5 (revision 12) runs 2/2 ready: inv-84f6c9d7b5-fc5nc, inv-84f6c9d7b5-xtkmz',
    );
    // While the new revision is not fully ready, the old warnings are not yet history.
    const short = objects.map((o) => (o.metadata.name === 'inv' ? deployment('inv', 12, 2, 1) : o));
    expect(run(['crashloop'], short)).toEqual([]);
  });
});

describe('container-config names what must change', () => {
  const worker = (name: string) =>
    makePod(name, {
      owner: { kind: 'ReplicaSet', name: 'billing-9c7d5' },
      containers: [
        {
          name: 'worker',
          image: 'r/w:2',
          env: [{ name: 'API_KEY', valueFrom: { secretKeyRef: { name: 'stripe', key: 'API_KEY' } } }],
        },
      ],
      statuses: [
        {
          name: 'worker',
          ready: false,
          restartCount: 0,
          state: {
            waiting: {
              reason: 'CreateContainerConfigError',
              message: "couldn't find key API_KEY in Secret demo/stripe",
            },
          },
        },
      ],
    });

  it('names the controller that writes the Secret missing a key, since the Secret is overwritten on its next sync', () => {
    for (const written of [
      podEvent('stripe', 'Updated', 'Updated Secret', 12, { kind: 'ExternalSecret', type: 'Normal' }),
      seriesEvent('ExternalSecret', 'stripe', 'Updated', 'Updated Secret', 12),
    ]) {
      const [f] = run(['container-config'], [worker('billing-9c7d5-4wsw6'), written]);
      expect(f?.owner).toEqual({ kind: 'ExternalSecret', name: 'stripe', namespace: NS });
      expect(f?.related).toContainEqual({ kind: 'Secret', name: 'stripe', namespace: NS });
      expect(f?.message).toContain('key API_KEY is missing from Secret stripe (written by ExternalSecret stripe)');
    }
  });

  it('makes the ConfigMap missing a key the owner and shows the keys it has', () => {
    const pod = makePod('search-1', {
      containers: [
        {
          name: 'api',
          image: 'r/s:1',
          env: [{ name: 'URL', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'URL' } } }],
        },
      ],
      statuses: [
        {
          name: 'api',
          ready: false,
          restartCount: 0,
          state: {
            waiting: { reason: 'CreateContainerConfigError', message: "couldn't find key URL in ConfigMap demo/cfg" },
          },
        },
      ],
    });
    const cfg: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cfg', namespace: NS },
      data: { ES_URL: 'x' },
    };
    const [f] = run(['container-config'], [pod, cfg]);
    expect(f?.owner).toEqual({ kind: 'ConfigMap', name: 'cfg', namespace: NS });
    expect(f?.evidence).toContain('ConfigMap cfg has keys: ES_URL (no URL)');
  });
});

describe('revisions', () => {
  it('says what the failing revision changed and which earlier revision still serves', () => {
    const probe = (port: number) => ({ httpGet: { port, path: '/healthz' } });
    const objects = [
      replicaSet('auth-59f4d', 'auth', 30, 1, 1, {
        containers: [{ name: 'auth', image: 'r/login:3.1', livenessProbe: probe(8080) }],
      }),
      replicaSet('auth-7d6c9', 'auth', 31, 1, 0, {
        containers: [{ name: 'auth', image: 'r/login:3.2', livenessProbe: probe(8081) }],
      }),
    ];
    const pod = makePod('auth-7d6c9-ts75z', { owner: { kind: 'ReplicaSet', name: 'auth-7d6c9' } });
    const ctx = contextFromObjects({ namespace: NS, now: NOW, objects: [...objects, pod] });
    expect(revisionChanges(ctx, pod)).toBe(
      'revision 31 changed from revision 30 (ReplicaSet auth-59f4d): containers[auth].image "r/login:3.1" → "r/login:3.2"; containers[auth].livenessProbe.httpGet.port 8080 → 8081',
    );
    expect(rolloutLine(ctx, pod)).toBe(
      'pods of ReplicaSet auth-7d6c9 (revision 31); the newest revision of Deployment auth; previous ReplicaSet auth-59f4d (revision 30) still has 1 ready pod(s)',
    );
  });

  it('keeps the decisive evidence when there is more than a finding carries', () => {
    const list = new EvidenceList().add(5, 'e').add(0, 'a').add(2, 'c').add(1, 'b').add(3, 'd').add(4, 'x').add(0, 'a');
    expect(list.lines()).toEqual(['a', 'b', 'c', 'd', 'x']);
  });
});

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

describe('image-pull names pods, nodes and what works elsewhere', () => {
  const image = 'registry.example.com/tax:4.2';
  const owner = { kind: 'ReplicaSet', name: 'tax-6c9f7' };
  const pulling = (name: string, nodeName: string, message: string) =>
    makePod(name, {
      owner,
      node: nodeName,
      containers: [{ name: 'tax', image }],
      statuses: [
        { name: 'tax', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff', message } } },
      ],
    });

  it('names every failing pod with its node and platform, and the replicas that run the image', () => {
    const msg = 'Back-off pulling image: no match for platform in manifest: not found';
    const objects = [
      node('arm-1', { labels: { 'kubernetes.io/arch': 'arm64' } }),
      node('arm-2', { labels: { 'kubernetes.io/arch': 'arm64' } }),
      node('amd-1'),
      pulling('tax-6c9f7-lllwq', 'arm-1', msg),
      pulling('tax-6c9f7-qvg2p', 'arm-2', msg),
      makePod('tax-6c9f7-tnx6q', {
        owner,
        node: 'amd-1',
        containers: [{ name: 'tax', image }],
        statuses: [runningOk('tax')],
        ready: true,
      }),
    ];
    const [f] = run(['image-pull'], objects);
    expect(f?.code).toBe('IMAGE_PLATFORM_MISMATCH');
    expect(f?.message).toContain('no build for linux/arm64 (node arm-1, arm-2); replicas on linux/amd64 nodes run it');
    expect(f?.evidence).toContain(
      '2 pods affected: tax-6c9f7-lllwq (node arm-1, linux/arm64), tax-6c9f7-qvg2p (node arm-2, linux/arm64)',
    );
    expect(f?.evidence).toContain('the same image runs ready on tax-6c9f7-tnx6q (node amd-1, linux/amd64)');
  });

  it('reads "no such host" for the registry as a wrong image reference and shows the reference that works', () => {
    const typo = 'r.ecr.amazoanws.com/ship/label:1.4.2';
    const pod = makePod('label-8b6d5-crrsq', {
      owner: { kind: 'ReplicaSet', name: 'label-8b6d5' },
      node: 'n1',
      containers: [{ name: 'label', image: typo }],
      statuses: [{ name: 'label', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff' } } }],
    });
    const failed = podEvent(
      'label-8b6d5-crrsq',
      'Failed',
      `Failed to pull image "${typo}": failed to do request: Head "https://r.ecr.amazoanws.com/v2/ship/label/manifests/1.4.2": dial tcp: lookup r.ecr.amazoanws.com on 10.0.0.2:53: no such host`,
      1,
    );
    const old = makePod('label-6f9c8-259z8', {
      owner: { kind: 'ReplicaSet', name: 'label-6f9c8' },
      node: 'n2',
      containers: [{ name: 'label', image: 'r.ecr.amazonaws.com/ship/label:1.4.1' }],
      statuses: [runningOk('label')],
      ready: true,
    });
    const [f] = run(['image-pull'], [pod, failed, old]);
    expect(f?.code).toBe('IMAGE_PULL_BACKOFF');
    expect(f?.confidence).toBeGreaterThanOrEqual(0.9);
    expect(f?.message).toContain('its registry host r.ecr.amazoanws.com does not exist (no such host)');
    expect(f?.evidence).toContain(
      'label-6f9c8-259z8 (node n2) runs r.ecr.amazonaws.com/ship/label:1.4.1 from registry r.ecr.amazonaws.com',
    );
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
