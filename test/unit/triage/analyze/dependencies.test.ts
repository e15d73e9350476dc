import { describe, expect, it } from 'vitest';
import { logKey } from '../../../../src/cluster/snapshot.js';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { configuredHosts } from '../../../../src/triage/analyze/dependencies.js';
import { contextFromObjects } from '../../../../src/triage/analyze/index.js';
import { foreignNamespaces } from '../../../../src/triage/route/follow.js';
import {
  analyze,
  CREATED,
  deployment,
  NOW,
  NS,
  namespace,
  only,
  pod,
  replicaSet,
  statefulSet,
} from '../../../support/analyzers/workload-dependencies.js';

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
    expect(f.evidence).toContain('pods behind Service postgres that the policies isolate: postgres-0');
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
