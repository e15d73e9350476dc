import { expect } from 'vitest';
import type { KubeObject } from '../../../src/cluster/types.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../src/triage/analyze/index.js';
import type { Finding } from '../../../src/triage/envelope/findings.js';

/** The objects and helpers the analyzer tests of this family build their cases from. */

export const NOW = new Date('2026-03-04T12:00:00Z');
export const NS = 'shop';
export const CREATED = '2026-02-20T09:00:00Z';

export function ago(minutes: number): string {
  return new Date(NOW.getTime() - minutes * 60_000).toISOString();
}

export function analyze(
  name: 'workload-rollout' | 'dependencies',
  objects: KubeObject[],
  logs: Record<string, string> = {},
): Finding[] {
  const ctx = contextFromObjects({ namespace: NS, now: NOW, objects, logs });
  return runAnalyzers([getAnalyzer(name)], ctx);
}

export function only(findings: Finding[], code: string): Finding {
  const matching = findings.filter((f) => f.code === code);
  expect(
    matching.map((f) => f.code),
    `codes: ${findings.map((f) => f.code).join(', ')}`,
  ).toEqual([code]);
  return matching[0] as Finding;
}

// --- objects as `kubectl get -o yaml` prints them -------------------------------------------------------------------

export function namespace(name: string, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, creationTimestamp: CREATED, labels: { 'kubernetes.io/metadata.name': name, ...labels } },
    status: { phase: 'Active' },
  };
}

export function deployment(
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

export function replicaSet(deploymentName: string, hash: string, ns = NS): KubeObject {
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

export function statefulSet(name: string, ns = NS): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: ns, uid: `uid-${name}`, creationTimestamp: CREATED },
    spec: { replicas: 1, serviceName: name, selector: { matchLabels: { app: name } } },
    status: { replicas: 1, readyReplicas: 1, availableReplicas: 1 },
  };
}

export function event(
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

export function pod(
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
