import { expect } from 'vitest';
import type { KubeObject } from '../../../src/cluster/types.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../src/triage/analyze/index.js';
import { type Finding, FindingSchema } from '../../../src/triage/envelope/findings.js';

/** The objects and helpers the analyzer tests of this family build their cases from. */

const NOW = new Date('2026-02-17T14:32:00Z');
export const NS = 'web';
const LONG_AGO = '2025-01-01T00:00:00Z';

// --- tiny object builders ---------------------------------------------------------------------------------------

export function meta(name: string, namespace: string | undefined, extra: Record<string, unknown> = {}) {
  return { name, ...(namespace ? { namespace } : {}), creationTimestamp: LONG_AGO, ...extra };
}

export function pod(
  name: string,
  labels: Record<string, string>,
  opts: {
    namespace?: string;
    owner?: string;
    ready?: boolean;
    ports?: { containerPort: number; name?: string; protocol?: string }[];
    probePort?: number;
    waiting?: string;
    ip?: string;
    node?: string;
    containerName?: string;
    image?: string;
    args?: string[];
  } = {},
): KubeObject {
  const ready = opts.ready ?? true;
  const container = opts.containerName ?? 'app';
  return {
    kind: 'Pod',
    metadata: meta(name, opts.namespace ?? NS, {
      labels,
      ...(opts.owner ? { ownerReferences: [{ kind: 'ReplicaSet', name: opts.owner, controller: true }] } : {}),
    }),
    spec: {
      ...(opts.node ? { nodeName: opts.node } : {}),
      containers: [
        {
          name: container,
          image: opts.image ?? 'registry.example.com/app:1',
          ...(opts.args ? { args: opts.args } : {}),
          ...(opts.ports ? { ports: opts.ports } : {}),
          ...(opts.probePort ? { readinessProbe: { httpGet: { path: '/healthz', port: opts.probePort } } } : {}),
        },
      ],
    },
    status: {
      phase: 'Running',
      ...(opts.ip ? { podIP: opts.ip } : {}),
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: LONG_AGO }],
      containerStatuses: [
        {
          name: container,
          ready,
          restartCount: opts.waiting ? 7 : 0,
          state: opts.waiting ? { waiting: { reason: opts.waiting } } : { running: { startedAt: LONG_AGO } },
        },
      ],
    },
  };
}

export function replicaSet(name: string, deployment: string, namespace = NS): KubeObject {
  return {
    kind: 'ReplicaSet',
    metadata: meta(name, namespace, { ownerReferences: [{ kind: 'Deployment', name: deployment, controller: true }] }),
    spec: { replicas: 1 },
  };
}

export function deployment(
  name: string,
  labels: Record<string, string>,
  replicas: number,
  opts: { namespace?: string; annotations?: Record<string, string>; args?: string[]; image?: string } = {},
): KubeObject {
  return {
    kind: 'Deployment',
    metadata: meta(name, opts.namespace ?? NS, {
      labels,
      ...(opts.annotations ? { annotations: opts.annotations } : {}),
    }),
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'main', image: opts.image ?? 'img', ...(opts.args ? { args: opts.args } : {}) }] },
      },
    },
    status: {},
  };
}

export function service(
  name: string,
  selector: Record<string, string>,
  ports: { port: number; targetPort?: number | string; name?: string }[] = [{ port: 80, targetPort: 8080 }],
  namespace = NS,
): KubeObject {
  return { kind: 'Service', metadata: meta(name, namespace), spec: { selector, ports, clusterIP: '172.30.0.10' } };
}

export function endpoints(name: string, ready: string[], namespace = NS): KubeObject {
  return {
    kind: 'Endpoints',
    metadata: meta(name, namespace),
    subsets: ready.length > 0 ? [{ addresses: ready.map((ip) => ({ ip })), ports: [{ port: 8080 }] }] : [],
  };
}

export function route(
  name: string,
  to: string,
  opts: { annotations?: Record<string, string>; tls?: Record<string, unknown>; targetPort?: string } = {},
): KubeObject {
  return {
    kind: 'Route',
    metadata: meta(name, NS, opts.annotations ? { annotations: opts.annotations } : {}),
    spec: {
      host: `${name}.example.com`,
      to: { kind: 'Service', name: to, weight: 100 },
      ...(opts.targetPort ? { port: { targetPort: opts.targetPort } } : {}),
      ...(opts.tls ? { tls: opts.tls } : {}),
    },
    status: { ingress: [{ routerName: 'default', conditions: [{ type: 'Admitted', status: 'True' }] }] },
  };
}

export const ROUTER = 'router-default-6d8b5c9f7b-2xkqz';

export function routerPod(ip = '10.131.0.23'): KubeObject {
  return pod(
    ROUTER,
    { 'ingresscontroller.operator.openshift.io/deployment-ingresscontroller': 'default' },
    {
      namespace: 'openshift-ingress',
      containerName: 'logs',
      ip,
    },
  );
}

export function event(
  involved: { kind: string; name: string },
  reason: string,
  message: string,
  at: string,
  type = 'Normal',
  namespace = NS,
): KubeObject {
  return {
    kind: 'Event',
    metadata: meta(`${involved.name}.${reason}.${at}`, namespace),
    involvedObject: { ...involved, namespace },
    reason,
    message,
    type,
    count: 1,
    firstTimestamp: at,
    lastTimestamp: at,
  };
}

/** HAProxy httplog lines as the router's log sidecar writes them. */
export function haproxy(at: string, rest: string): string {
  const t = new Date(at);
  const clf = `${String(t.getUTCDate()).padStart(2, '0')}/Feb/2026:${t.toISOString().slice(11, 23)}`;
  return `${at.replace('Z', '000+00:00')} ${ROUTER} ${ROUTER} haproxy[2841]: 192.0.2.148:51537 [${clf}] fe_sni~ ${rest}`;
}

export function run(name: string, objects: KubeObject[], logs: Record<string, string> = {}, namespace = NS): Finding[] {
  const ctx = contextFromObjects({ namespace, now: NOW, objects, logs });
  const findings = runAnalyzers([getAnalyzer(name)], ctx);
  for (const f of findings) expect(FindingSchema.safeParse(f).success).toBe(true);
  return findings;
}

export function one(findings: Finding[], code: string): Finding {
  const found = findings.filter((f) => f.code === code);
  expect(
    found.map((f) => f.code),
    JSON.stringify(findings.map((f) => f.code)),
  ).toEqual([code]);
  return found[0] as Finding;
}

// --- parsers ----------------------------------------------------------------------------------------------------
