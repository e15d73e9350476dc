import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import {
  deployment,
  endpoints,
  haproxy,
  NS,
  one,
  pod,
  ROUTER,
  replicaSet,
  route,
  routerPod,
  run,
  service,
} from '../../../support/analyzers/networking.js';

const app = { app: 'claims-api' };
const namespaces = [
  { name: NS, labels: { 'kubernetes.io/metadata.name': NS } },
  {
    name: 'openshift-ingress',
    labels: {
      'kubernetes.io/metadata.name': 'openshift-ingress',
      'policy-group.network.openshift.io/ingress': '',
    },
  },
].map((n) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: n }) as KubeObject);

function policy(name: string, ingress: unknown[], created = '2026-02-17T14:00:00Z'): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name, namespace: NS, creationTimestamp: created },
    spec: { podSelector: {}, policyTypes: ['Ingress'], ingress },
  } as KubeObject;
}

// The ingress operator also labels router pods with a hash of their template, which changes on every rollout.
const router = routerPod();
router.metadata.labels = { ...router.metadata.labels, 'ingresscontroller.operator.openshift.io/hash': 'dbfm5ftk76' };
const backend = [
  route('claims', 'claims-api'),
  service('claims-api', app, [{ port: 8080, targetPort: 8080, name: 'http' }]),
  endpoints('claims-api', ['10.128.2.143']),
  deployment('claims-api', app, 1),
  replicaSet('claims-api-5d8', 'claims-api'),
  pod('claims-api-5d8-t2kcb', app, { owner: 'claims-api-5d8', ip: '10.128.2.143', ports: [{ containerPort: 8080 }] }),
  router,
  ...namespaces,
];
const server = 'be_edge_http:web:claims/pod:claims-api-5d8-t2kcb:claims-api:http:10.128.2.143:8080';
const logs = {
  [`openshift-ingress/${ROUTER}/logs`]: [
    haproxy(
      '2026-02-17T14:20:11.069Z',
      `${server} 0/0/-1/-1/20004 503 3398 - - sC-- 18/12/1/0/3 0/0 "POST /claims HTTP/2.0"`,
    ),
    haproxy('2026-02-17T14:22:47.356Z', `${server} 0/0/-1/-1/20003 503 3398 - - sC-- 18/12/1/0/3 0/0 "GET / HTTP/2.0"`),
  ].join('\n'),
};
// One peer with both selectors admits only pods matching both: the router's pods carry no `app: router` label.
const andPeer = policy(
  'allow-from-openshift-ingress',
  [
    {
      from: [
        {
          namespaceSelector: { matchLabels: { 'policy-group.network.openshift.io/ingress': '' } },
          podSelector: { matchLabels: { app: 'router' } },
        },
      ],
    },
  ],
  '2026-02-17T14:10:00Z',
);

describe('route: a NetworkPolicy that drops the router’s connections to ready pods', () => {
  it('names the newest policy with rules, with the router’s timed-out connections as evidence', () => {
    const findings = run('route', [...backend, policy('default-deny', []), andPeer], logs);
    const f = one(findings, 'NETWORK_POLICY_BLOCKS');
    expect(f.resource).toEqual({ kind: 'NetworkPolicy', name: 'allow-from-openshift-ingress', namespace: NS });
    expect(f.related).toContainEqual({ kind: 'Route', name: 'claims', namespace: NS });
    expect(f.change).toContain('namespace openshift-ingress');
    expect(f.alternatives?.[0]?.resource).toEqual({ kind: 'NetworkPolicy', name: 'default-deny', namespace: NS });
    expect(f.evidence.join('\n')).toContain('503 sC--');
    expect(f.change).toContain('ingresscontroller.operator.openshift.io/deployment-ingresscontroller=default');
    expect(f.change).not.toContain('hash');
    const symptom = one(findings, 'ROUTE_BACKEND_ERRORS');
    expect(symptom.resource).toEqual({ kind: 'Route', name: 'claims', namespace: NS });
    expect(symptom.related).toContainEqual(f.resource);
  });

  it('says nothing when a rule admits the router’s namespace', () => {
    const admits = policy('allow-from-openshift-ingress', [
      { from: [{ namespaceSelector: { matchLabels: { 'policy-group.network.openshift.io/ingress': '' } } }] },
    ]);
    const codes = run('route', [...backend, admits], logs).map((f) => f.code);
    expect(codes).not.toContain('NETWORK_POLICY_BLOCKS');
  });

  it('does not judge a router on the host network, nor connections that did not time out', () => {
    const hostRouter = { ...routerPod(), spec: { ...routerPod().spec, hostNetwork: true } } as KubeObject;
    const onHost = [...backend.filter((o) => o.metadata.name !== ROUTER), hostRouter, andPeer];
    expect(run('route', onHost, logs).map((f) => f.code)).not.toContain('NETWORK_POLICY_BLOCKS');
    const served = {
      [`openshift-ingress/${ROUTER}/logs`]: haproxy(
        '2026-02-17T14:20:11.069Z',
        `${server} 0/0/1/20/21 200 10857 - - --VN 40/19/8/1/0 0/0 "GET / HTTP/2.0"`,
      ),
    };
    expect(run('route', [...backend, andPeer], served).map((f) => f.code)).not.toContain('NETWORK_POLICY_BLOCKS');
  });
});
