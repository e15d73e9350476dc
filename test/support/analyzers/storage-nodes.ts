import { expect } from 'vitest';
import type { KubeObject } from '../../../src/cluster/types.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../src/triage/analyze/index.js';
import type { Finding } from '../../../src/triage/envelope/findings.js';

/**
 * The storage and node analyzers read evidence the way an engineer does: they name the object to change (the
 * provisioner's controller, the StorageClass, the PV, the VolumeAttachment, the node plugin DaemonSet, the workload
 * behind node pressure) and stay quiet, or keep the claim as the culprit, when the evidence says otherwise.
 */

export const NOW = new Date('2026-05-04T12:00:00Z');
export const NS = 'shop';

export function ago(minutes: number): string {
  return new Date(NOW.getTime() - minutes * 60_000).toISOString();
}

export function analyze(objects: KubeObject[], analyzers: string[], unavailable: string[] = []): Finding[] {
  const ctx = contextFromObjects({
    namespace: NS,
    now: NOW,
    objects,
    // biome-ignore lint/suspicious/noExplicitAny: test shorthand for ResourceKind
    unavailable: unavailable as any,
  });
  return runAnalyzers(
    analyzers.map((a) => getAnalyzer(a)),
    ctx,
  );
}

export function only(findings: Finding[], code: string): Finding {
  const matching = findings.filter((f) => f.code === code);
  expect(matching.map((f) => f.code)).toEqual([code]);
  return matching[0]!;
}

export function text(f: Finding): string {
  return [f.message, ...f.evidence].join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// Object builders: just the fields the analyzers read.

export function namespace(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

export function node(name: string, opts: { labels?: Record<string, string>; taints?: unknown[]; ready?: string } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...opts.labels } },
    spec: { ...(opts.taints ? { taints: opts.taints } : {}) },
    status: {
      allocatable: { memory: '16Gi', 'ephemeral-storage': '100Gi' },
      conditions: [
        { type: 'Ready', status: opts.ready ?? 'True', lastTransitionTime: ago(600), reason: 'KubeletReady' },
      ],
    },
  } as KubeObject;
}

export function storageClass(name: string, provisioner: string, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, ...((extra.metadata as object) ?? {}) },
    provisioner,
    volumeBindingMode: 'Immediate',
    ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'metadata')),
  };
}

export function pvc(name: string, spec: Record<string, unknown>, minutes = 20): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: NS, creationTimestamp: ago(minutes) },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } }, ...spec },
    status: { phase: 'Pending' },
  };
}

export function event(
  kind: string,
  name: string,
  reason: string,
  message: string,
  opts: { type?: string; count?: number; minutes?: number; namespace?: string; seriesShape?: boolean } = {},
): KubeObject {
  const last = ago(opts.minutes ?? 1);
  const base = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${name}.${reason}.${Math.abs(hash(message))}`, namespace: opts.namespace ?? NS },
    involvedObject: { kind, name, namespace: opts.namespace ?? NS },
    reason,
    message,
    type: opts.type ?? 'Warning',
  };
  // events.k8s.io-style shape: eventTime and series instead of count and lastTimestamp.
  return opts.seriesShape
    ? { ...base, eventTime: ago(30), series: { count: opts.count ?? 5, lastObservedTime: last } }
    : { ...base, count: opts.count ?? 5, firstTimestamp: ago(30), lastTimestamp: last };
}

function hash(s: string): number {
  let h = 0;
  for (const c of s) h = (h * 31 + c.charCodeAt(0)) | 0;
  return h;
}

export function pod(
  name: string,
  opts: {
    node?: string;
    claim?: string;
    labels?: Record<string, string>;
    owner?: { kind: string; name: string };
    phase?: string;
    ready?: boolean;
    namespace?: string;
    deleting?: string;
    status?: Record<string, unknown>;
    containers?: unknown[];
    conditions?: unknown[];
  } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: opts.namespace ?? NS,
      creationTimestamp: ago(30),
      labels: opts.labels ?? {},
      ...(opts.deleting ? { deletionTimestamp: opts.deleting } : {}),
      ...(opts.owner ? { ownerReferences: [{ ...opts.owner, controller: true }] } : {}),
    },
    spec: {
      ...(opts.node ? { nodeName: opts.node } : {}),
      containers: opts.containers ?? [{ name: 'app', image: 'app:1' }],
      volumes: opts.claim ? [{ name: 'data', persistentVolumeClaim: { claimName: opts.claim } }] : [],
    },
    status: {
      phase: opts.phase ?? 'Running',
      conditions: opts.conditions ?? [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }],
      ...opts.status,
    },
  };
}

export function deployment(
  name: string,
  ns: string,
  spec: Record<string, unknown>,
  labels: Record<string, string> = {},
) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns, labels },
    spec,
    status: {},
  } as KubeObject;
}

export function replicaSet(name: string, deploymentName: string): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name,
      namespace: NS,
      ownerReferences: [{ kind: 'Deployment', name: deploymentName, controller: true }],
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
