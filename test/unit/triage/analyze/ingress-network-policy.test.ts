import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../../src/triage/analyze/index.js';
import type { Finding } from '../../../../src/triage/envelope/findings.js';
import { parseNginxLine } from '../../../../src/triage/kube/proxy-logs.js';

const NOW = new Date('2026-10-08T14:30:00Z');

const namespaces = ['ingress-nginx', 'shop-web'].map(
  (name) =>
    ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
    }) as KubeObject,
);
const controller = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'ingress-nginx-controller-1',
    namespace: 'ingress-nginx',
    labels: { 'app.kubernetes.io/name': 'ingress-nginx' },
  },
  spec: { containers: [{ name: 'controller', image: 'registry.k8s.io/ingress-nginx/controller:v1.12.1' }] },
  status: { phase: 'Running', podIP: '10.244.2.8', conditions: [{ type: 'Ready', status: 'True' }] },
} as KubeObject;
const backend = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'next-frontend-1', namespace: 'shop-web', labels: { app: 'next-frontend' } },
  spec: { containers: [{ name: 'next-frontend', ports: [{ name: 'http', containerPort: 3000 }] }] },
  status: { phase: 'Running', podIP: '10.244.1.19', conditions: [{ type: 'Ready', status: 'True' }] },
} as KubeObject;
const service = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'next-frontend', namespace: 'shop-web' },
  spec: { selector: { app: 'next-frontend' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
} as KubeObject;
const endpoints = {
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name: 'next-frontend', namespace: 'shop-web' },
  subsets: [{ addresses: [{ ip: '10.244.1.19' }], ports: [{ name: 'http', port: 3000 }] }],
} as KubeObject;
const ingress = {
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name: 'next-frontend', namespace: 'shop-web', creationTimestamp: '2026-05-11T14:30:00Z' },
  spec: {
    ingressClassName: 'nginx',
    rules: [
      {
        host: 'www.acme-shop.com',
        http: { paths: [{ path: '/', backend: { service: { name: 'next-frontend', port: { name: 'http' } } } }] },
      },
    ],
  },
  status: { loadBalancer: { ingress: [{ ip: '203.0.113.10' }] } },
} as KubeObject;
const ingressClass = {
  apiVersion: 'networking.k8s.io/v1',
  kind: 'IngressClass',
  metadata: { name: 'nginx' },
  spec: { controller: 'k8s.io/ingress-nginx' },
} as KubeObject;

function policy(ingressRules: unknown[]): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'deny-from-other-namespaces', namespace: 'shop-web', creationTimestamp: '2026-10-08T13:57:00Z' },
    spec: { podSelector: {}, policyTypes: ['Ingress'], ingress: ingressRules },
  } as KubeObject;
}

const timeout =
  '2026/10/08 14:24:00 [error] 31#31: *884188 upstream timed out (110: Operation timed out) while connecting to upstream, client: 198.51.100.27, server: www.acme-shop.com, request: "GET / HTTP/2.0", upstream: "http://10.244.1.19:3000/", host: "www.acme-shop.com"';
const access =
  '198.51.100.27 - - [08/Oct/2026:14:24:00 +0000] "GET / HTTP/2.0" 504 160 "-" "Mozilla/5.0" 39 15.001 [shop-web-next-frontend-http] [] 10.244.1.19:3000 0 5.001 504 57ee5ba7f4265b70fa4a2dbd401326c2';
const logs = { 'ingress-nginx/ingress-nginx-controller-1/controller': `${timeout}\n${access}\n` };

function run(objects: KubeObject[], withLogs: Record<string, string> = logs): Finding[] {
  const ctx = contextFromObjects({ namespace: 'shop-web', now: NOW, objects, logs: withLogs });
  return runAnalyzers([getAnalyzer('ingress')], ctx);
}

const base = [...namespaces, controller, backend, service, endpoints, ingress, ingressClass];

describe('ingress: a NetworkPolicy that drops the controller’s connections to ready pods', () => {
  it('reads nginx’s connect timeout with the upstream it tried', () => {
    expect(parseNginxLine(timeout, NOW)).toMatchObject({ kind: 'connect-timeout', address: '10.244.1.19', port: 3000 });
  });

  it('names the policy that admits only its own namespace, with the Ingress as what fails', () => {
    const findings = run([...base, policy([{ from: [{ podSelector: {} }] }])]);
    const cause = findings.find((f) => f.code === 'NETWORK_POLICY_BLOCKS');
    expect(cause?.resource).toEqual({
      kind: 'NetworkPolicy',
      name: 'deny-from-other-namespaces',
      namespace: 'shop-web',
    });
    expect(cause?.change).toContain('namespace ingress-nginx');
    expect(cause?.evidence.join('\n')).toContain(
      'upstream timed out (110: Operation timed out) while connecting to upstream',
    );
    const symptom = findings.find((f) => f.code === 'INGRESS_UPSTREAM_TIMEOUT');
    expect(symptom?.resource).toEqual({ kind: 'Ingress', name: 'next-frontend', namespace: 'shop-web' });
    expect(symptom?.related).toContainEqual(cause?.resource);
  });

  it('says nothing when a rule admits the controller’s namespace, or when no connection timed out', () => {
    const admits = policy([
      { from: [{ podSelector: {} }] },
      { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }] },
    ]);
    expect(run([...base, admits]).map((f) => f.code)).toEqual([]);
    expect(run([...base, policy([{ from: [{ podSelector: {} }] }])], {}).map((f) => f.code)).toEqual([]);
  });

  it('says nothing when no policy isolates the pods: the timeout has another cause', () => {
    expect(run(base).map((f) => f.code)).toEqual([]);
  });

  it('follows the access log’s upstream to the Service when the pods it timed out on were replaced since', () => {
    // A restart gave the backend a new address; the controller's lines still name the old one.
    const replaced = { ...backend, status: { ...backend.status, podIP: '10.244.3.44' } } as KubeObject;
    const moved = {
      ...endpoints,
      subsets: [{ addresses: [{ ip: '10.244.3.44' }], ports: [{ name: 'http', port: 3000 }] }],
    } as KubeObject;
    const objects = [...namespaces, controller, replaced, service, moved, ingress, ingressClass];
    const blocking = policy([{ from: [{ namespaceSelector: { matchLabels: { name: 'ingress-nginx' } } }] }]);
    const cause = run([...objects, blocking]).find((f) => f.code === 'NETWORK_POLICY_BLOCKS');
    expect(cause?.resource).toMatchObject({ kind: 'NetworkPolicy', name: 'deny-from-other-namespaces' });
    expect(cause?.evidence.join('\n')).toContain(
      'upstream timed out (110: Operation timed out) while connecting to upstream',
    );
    expect(cause?.evidence.join('\n')).toContain('pods replaced since');
    // The same timeout without the access line naming the upstream is not tied to this Service.
    expect(
      run([...objects, blocking], { 'ingress-nginx/ingress-nginx-controller-1/controller': `${timeout}\n` }),
    ).toEqual([]);
    // A policy that admits the controller's namespace clears the replaced pods as it clears the old ones.
    const admits = policy([
      { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }] },
    ]);
    expect(run([...objects, admits]).map((f) => f.code)).toEqual([]);
  });
});
