import type { KubeObject } from '../../../src/cluster/types.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../src/triage/analyze/index.js';

/** The objects and helpers the analyzer tests of this family build their cases from. */

export const NAMES = [
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

export const NOW = new Date('2025-11-21T12:00:00Z');
export const iso = (minAgo: number) => new Date(NOW.getTime() - minAgo * 60_000).toISOString();

export function pod(
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

export function event(object: string, reason: string, message: string, minAgo: number, count = 5): KubeObject {
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

export const runningReady = {
  phase: 'Running',
  conditions: [
    { type: 'Ready', status: 'True' },
    { type: 'PodScheduled', status: 'True' },
  ],
  containerStatuses: [{ name: 'app', ready: true, restartCount: 0, state: { running: { startedAt: iso(500) } } }],
};

/** Minimal hand-built objects for the evidence-reading cases below: each test states exactly what the cluster shows. */
export const NS = 'demo';
export const at = (minAgo: number) => new Date(NOW.getTime() - minAgo * 60_000).toISOString();

export function run(names: string[], objects: KubeObject[], logs: Record<string, string> = {}) {
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

export interface PodSpec {
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

export function makePod(name: string, p: PodSpec = {}): KubeObject {
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

export const crashing = (name: string, exitCode = 1, restarts = 6, extra: Record<string, unknown> = {}) => ({
  name,
  ready: false,
  restartCount: restarts,
  state: { waiting: { reason: 'CrashLoopBackOff', message: `back-off 5m0s restarting failed container=${name}` } },
  lastState: { terminated: { reason: 'Error', exitCode, finishedAt: at(2), startedAt: at(3) } },
  ...extra,
});

export const runningOk = (name: string, restarts = 0) => ({
  name,
  ready: true,
  restartCount: restarts,
  state: { running: { startedAt: at(90) } },
});

export function podEvent(
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
export function seriesEvent(
  kind: string,
  name: string,
  reason: string,
  note: string,
  minAgo: number,
  count = 3,
): KubeObject {
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

export function replicaSet(
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

export function deployment(name: string, revision: number, replicas: number, available: number): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS, annotations: { 'deployment.kubernetes.io/revision': String(revision) } },
    spec: { replicas },
    status: { replicas, availableReplicas: available, readyReplicas: available },
  };
}

export function node(
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
