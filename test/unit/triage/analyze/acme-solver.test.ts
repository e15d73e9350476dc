import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../../src/triage/analyze/index.js';

const NOW = new Date('2026-10-01T09:00:00Z');
const NS = 'docs';

const ingressClass: KubeObject = {
  kind: 'IngressClass',
  metadata: { name: 'traefik' },
  spec: { controller: 'traefik.io/ingress-controller' },
} as KubeObject;

const solverIngress: KubeObject = {
  kind: 'Ingress',
  metadata: {
    name: 'cm-acme-http-solver-abcde',
    namespace: NS,
    creationTimestamp: '2026-10-01T08:00:00Z',
    labels: { 'acme.cert-manager.io/http01-solver': 'true' },
    ownerReferences: [{ kind: 'Challenge', name: 'docs-tls-1-111-222', controller: true }],
  },
  spec: {
    ingressClassName: 'nginx',
    rules: [
      {
        host: 'docs.example.org',
        http: {
          paths: [
            {
              path: '/.well-known/acme-challenge/tok',
              backend: { service: { name: 'cm-acme-http-solver-xyz', port: { number: 8089 } } },
            },
          ],
        },
      },
    ],
  },
  status: { loadBalancer: {} },
} as KubeObject;

const challenge: KubeObject = {
  kind: 'Challenge',
  metadata: { name: 'docs-tls-1-111-222', namespace: NS },
  spec: {
    dnsName: 'docs.example.org',
    issuerRef: { kind: 'ClusterIssuer', name: 'acme-prod' },
    solver: { http01: { ingress: { ingressClassName: 'nginx' } } },
  },
  status: {
    state: 'pending',
    reason: "Waiting for HTTP-01 challenge propagation: wrong status code '404', expected '200'",
  },
} as KubeObject;

const issuer = (cls: string): KubeObject =>
  ({
    kind: 'ClusterIssuer',
    metadata: { name: 'acme-prod' },
    spec: { acme: { solvers: [{ http01: { ingress: { ingressClassName: cls } } }] } },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  }) as KubeObject;

const certificate: KubeObject = {
  kind: 'Certificate',
  metadata: { name: 'docs-tls', namespace: NS },
  spec: {
    dnsNames: ['docs.example.org'],
    issuerRef: { kind: 'ClusterIssuer', name: 'acme-prod' },
    secretName: 'docs-tls',
  },
} as KubeObject;

function analyze(objects: KubeObject[]) {
  return runAnalyzers([getAnalyzer('ingress')], contextFromObjects({ namespace: NS, now: NOW, objects })).filter(
    (f) => f.code === 'INGRESS_CLASS_NOT_FOUND',
  );
}

describe("a cert-manager solver Ingress's class", () => {
  it('is changed in the issuer whose HTTP-01 solver sets it; the Certificate and Challenge suffer', () => {
    const [f] = analyze([ingressClass, solverIngress, challenge, issuer('nginx'), certificate]);
    expect(f).toMatchObject({
      code: 'INGRESS_CLASS_NOT_FOUND',
      resource: { kind: 'Ingress', name: 'cm-acme-http-solver-abcde' },
      owner: { kind: 'ClusterIssuer', name: 'acme-prod' },
    });
    expect(f?.related).toContainEqual({ kind: 'Certificate', name: 'docs-tls', namespace: NS });
    expect(f?.related).toContainEqual({ kind: 'Challenge', name: 'docs-tls-1-111-222', namespace: NS });
    expect(f?.evidence.join('\n')).toContain("wrong status code '404'");
    expect(f?.change).toContain('IngressClasses: traefik');
  });

  it('stays on the Ingress when the issuer no longer sets that class (a leftover) or was not read', () => {
    expect(analyze([ingressClass, solverIngress, challenge, issuer('traefik'), certificate])[0]?.owner).toBeUndefined();
    expect(analyze([ingressClass, solverIngress, challenge, certificate])[0]?.owner).toBeUndefined();
  });
});
