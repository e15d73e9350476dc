import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { corefileForwards } from '../../../../src/triage/analyzers/dns.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../../src/triage/analyzers/index.js';
import {
  describeTermination,
  parseHaproxyLine,
  parseKlogDate,
  parseNginxLine,
  parseTimeSpec,
  routeOfBackend,
} from '../../../../src/triage/analyzers/proxy-logs.js';
import { type Finding, FindingSchema } from '../../../../src/triage/findings.js';

const NOW = new Date('2026-02-17T14:32:00Z');
const NS = 'web';
const LONG_AGO = '2025-01-01T00:00:00Z';

// --- tiny object builders ---------------------------------------------------------------------------------------

function meta(name: string, namespace: string | undefined, extra: Record<string, unknown> = {}) {
  return { name, ...(namespace ? { namespace } : {}), creationTimestamp: LONG_AGO, ...extra };
}

function pod(
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

function replicaSet(name: string, deployment: string, namespace = NS): KubeObject {
  return {
    kind: 'ReplicaSet',
    metadata: meta(name, namespace, { ownerReferences: [{ kind: 'Deployment', name: deployment, controller: true }] }),
    spec: { replicas: 1 },
  };
}

function deployment(
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

function service(
  name: string,
  selector: Record<string, string>,
  ports: { port: number; targetPort?: number | string; name?: string }[] = [{ port: 80, targetPort: 8080 }],
  namespace = NS,
): KubeObject {
  return { kind: 'Service', metadata: meta(name, namespace), spec: { selector, ports, clusterIP: '172.30.0.10' } };
}

function endpoints(name: string, ready: string[], namespace = NS): KubeObject {
  return {
    kind: 'Endpoints',
    metadata: meta(name, namespace),
    subsets: ready.length > 0 ? [{ addresses: ready.map((ip) => ({ ip })), ports: [{ port: 8080 }] }] : [],
  };
}

function route(
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

const ROUTER = 'router-default-6d8b5c9f7b-2xkqz';

function routerPod(ip = '10.131.0.23'): KubeObject {
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

function event(
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
function haproxy(at: string, rest: string): string {
  const t = new Date(at);
  const clf = `${String(t.getUTCDate()).padStart(2, '0')}/Feb/2026:${t.toISOString().slice(11, 23)}`;
  return `${at.replace('Z', '000+00:00')} ${ROUTER} ${ROUTER} haproxy[2841]: 192.0.2.148:51537 [${clf}] fe_sni~ ${rest}`;
}

function run(name: string, objects: KubeObject[], logs: Record<string, string> = {}, namespace = NS): Finding[] {
  const ctx = contextFromObjects({ namespace, now: NOW, objects, logs });
  const findings = runAnalyzers([getAnalyzer(name)], ctx);
  for (const f of findings) expect(FindingSchema.safeParse(f).success).toBe(true);
  return findings;
}

function one(findings: Finding[], code: string): Finding {
  const found = findings.filter((f) => f.code === code);
  expect(
    found.map((f) => f.code),
    JSON.stringify(findings.map((f) => f.code)),
  ).toEqual([code]);
  return found[0] as Finding;
}

// --- parsers ----------------------------------------------------------------------------------------------------

describe('data-plane log parsers', () => {
  it('reads an OpenShift router httplog line with no server available', () => {
    const entry = parseHaproxyLine(
      haproxy(
        '2026-02-17T14:22:47.356Z',
        'be_edge_http:web:storefront/<NOSRV> 0/-1/-1/-1/0 503 3324 - - SC-- 47/21/0/0/0 0/0 "GET / HTTP/2.0"',
      ),
    );
    expect(entry).toMatchObject({
      kind: 'access',
      backend: 'be_edge_http:web:storefront',
      status: 503,
      termination: 'SC--',
      request: 'GET / HTTP/2.0',
      timers: { connect: -1, total: 0 },
    });
    expect(entry?.kind === 'access' && entry.server).toBeFalsy();
    expect(entry?.at?.toISOString()).toBe('2026-02-17T14:22:47.356Z');
    // Client addresses are left out of what is quoted.
    expect(entry?.kind === 'access' && entry.quote.startsWith('[17/Feb/2026:14:22:47.356] fe_sni~')).toBe(true);
    expect(describeTermination('SC--', true)).toBe('no server was available');
    expect(describeTermination('sH--', false)).toMatch(/no response headers before the timeout/);
    expect(describeTermination('--VN', false)).toBeUndefined();
  });

  it('reads health-check state changes and the backend naming scheme', () => {
    const down = parseHaproxyLine(
      'haproxy[1296]: Server be_secure:billing:portal/pod:portal-1:portal:https:10.129.2.242:8443 is DOWN, reason: Layer6 invalid response, info: "SSL handshake failure", check duration: 3ms.',
    );
    expect(down).toMatchObject({
      kind: 'server-down',
      reason: 'Layer6 invalid response',
      info: 'SSL handshake failure',
    });
    expect(parseHaproxyLine('backend be_secure:billing:portal has no server available!')).toMatchObject({
      kind: 'no-server',
      backend: 'be_secure:billing:portal',
    });
    expect(routeOfBackend('be_secure:billing:portal')).toEqual({
      namespace: 'billing',
      name: 'portal',
      termination: 'reencrypt',
    });
    expect(routeOfBackend('be_tcp:a:b')?.termination).toBe('passthrough');
    expect(routeOfBackend('openshift_default')).toBeUndefined();
    expect(parseHaproxyLine('I0217 12:26:48.665223 1 router.go:669] template "msg"="router reloaded"')).toBeUndefined();
  });

  it('reads ingress-nginx access lines, missing-endpoint warnings and ignored ingresses', () => {
    const now = new Date('2026-03-12T09:52:00Z');
    expect(
      parseNginxLine(
        '77.172.40.166 - - [12/Mar/2026:09:48:44 +0000] "GET /api/me HTTP/2.0" 503 190 "-" "Mozilla/5.0 (X11)" 258 0.000 [invoicing-invoice-api-80] [] - - - - fe33ad6f',
        now,
      ),
    ).toMatchObject({ kind: 'access', status: 503, upstream: 'invoicing-invoice-api-80', upstreamAddr: '-' });
    expect(
      parseNginxLine(
        'W0312 09:49:24.220953       7 controller.go:1216] Service "invoicing/invoice-api" does not have any active Endpoint.',
        now,
      ),
    ).toMatchObject({ kind: 'no-endpoints', namespace: 'invoicing', service: 'invoice-api' });
    const ignored = parseNginxLine(
      'I0221 10:55:59.379997       7 store.go:440] "Ignoring ingress because of error while validating ingress class" ingress="admin/admin-console" error="no object matching key \\"nginx-internal\\" in local store"',
      now,
    );
    expect(ignored).toMatchObject({ kind: 'ignored', namespace: 'admin', ingress: 'admin-console' });
    expect(ignored?.kind === 'ignored' && ignored.error).toBe('no object matching key "nginx-internal" in local store');
  });

  it('dates klog lines in the year of "now" and parses HAProxy time specs', () => {
    expect(parseKlogDate('W1231 23:59:00.1 7 x.go:1] y', new Date('2026-01-01T00:10:00Z'))?.toISOString()).toBe(
      '2025-12-31T23:59:00.000Z',
    );
    expect(parseTimeSpec('30s')).toBe(30_000);
    expect(parseTimeSpec('5m')).toBe(300_000);
    expect(parseTimeSpec('1500')).toBe(1500);
    expect(parseTimeSpec('soon')).toBeUndefined();
  });
});

// --- route ------------------------------------------------------------------------------------------------------

describe('route analyzer', () => {
  const storefront = { app: 'storefront' };

  it('names the Deployment scaled to zero, its scaling event and the router line, not the Route', () => {
    const objects = [
      route('storefront', 'storefront', { targetPort: 'http' }),
      service('storefront', storefront, [{ port: 8080, targetPort: 'http', name: 'http' }]),
      endpoints('storefront', []),
      deployment('storefront', storefront, 0, { annotations: { 'downscaler/original-replicas': '3' } }),
      event(
        { kind: 'Deployment', name: 'storefront' },
        'ScalingReplicaSet',
        'Scaled down replica set storefront-5d8f7c9b6 to 0 from 3',
        '2026-02-17T14:22:39Z',
      ),
      routerPod(),
    ];
    const logs = {
      [`openshift-ingress/${ROUTER}/logs`]: [
        haproxy(
          '2026-02-17T14:20:11.069Z',
          'be_edge_http:web:storefront/pod:storefront-5d8f7c9b6-t2kcb:storefront:http:10.128.2.143:8080 0/0/1/20/21 200 10857 - - --VN 40/19/8/1/0 0/0 "GET / HTTP/2.0"',
        ),
        haproxy(
          '2026-02-17T14:22:47.356Z',
          'be_edge_http:web:storefront/<NOSRV> 0/-1/-1/-1/0 503 3324 - - SC-- 47/21/0/0/0 0/0 "GET / HTTP/2.0"',
        ),
        haproxy(
          '2026-02-17T14:23:05.100Z',
          'be_edge_http:web:storefront/<NOSRV> 0/-1/-1/-1/0 503 3324 - - SC-- 70/16/0/0/0 0/0 "GET /cart HTTP/2.0"',
        ),
      ].join('\n'),
    };
    const f = one(run('route', objects, logs), 'ROUTE_BACKEND_SCALED_TO_ZERO');
    expect(f.resource).toEqual({ kind: 'Route', name: 'storefront', namespace: NS });
    expect(f.owner).toEqual({ kind: 'Deployment', name: 'storefront', namespace: NS });
    const text = f.evidence.join('\n');
    expect(text).toContain('Scaled down replica set storefront-5d8f7c9b6 to 0 from 3');
    expect(text).toContain('kube-downscaler');
    expect(text).toContain(ROUTER);
    expect(text).toContain('be_edge_http:web:storefront/<NOSRV>');
    expect(text).toContain('2/3 requests since 14:22:47Z: 503 SC--');
    expect(f.evidence.length).toBeLessThanOrEqual(5);
  });

  it('blames the Service selector, and names the pods it should select', () => {
    const objects = [
      route('shop', 'shipping'),
      service('shipping', { 'app.kubernetes.io/name': 'shipping-service' }),
      endpoints('shipping', []),
      replicaSet('cart-7d9', 'cart'),
      replicaSet('shipping-5c8', 'shipping'),
      pod('cart-7d9-aaaaa', { 'app.kubernetes.io/name': 'cart' }, { owner: 'cart-7d9' }),
      pod('shipping-5c8-bbbbb', { 'app.kubernetes.io/name': 'shipping' }, { owner: 'shipping-5c8' }),
    ];
    const f = one(run('route', objects), 'ROUTE_SERVICE_SELECTS_NO_PODS');
    expect(f.owner).toEqual({ kind: 'Service', name: 'shipping', namespace: NS });
    expect(f.related).toEqual([]);
    expect(f.evidence.join('\n')).toContain(
      'pods it should select: Deployment shipping (shipping-5c8-bbbbb) labelled app.kubernetes.io/name=shipping',
    );
  });

  it('reports TLS to a reencrypt backend failing, with the backend pod blaming the router by IP', () => {
    const labels = { app: 'portal' };
    const objects = [
      route('portal', 'portal', {
        tls: { termination: 'reencrypt', destinationCACertificate: '-----BEGIN CERTIFICATE-----…' },
      }),
      service('portal', labels, [{ port: 8443, targetPort: 8443 }]),
      endpoints('portal', ['10.129.2.242']),
      pod('portal-1', labels, { ports: [{ containerPort: 8443 }] }),
      routerPod('10.131.0.23'),
    ];
    const logs = {
      [`openshift-ingress/${ROUTER}/logs`]: [
        '2026-02-17T14:20:53.284Z r r haproxy[1296]: Server be_secure:web:portal/pod:portal-1:portal:https:10.129.2.242:8443 is DOWN, reason: Layer6 invalid response, info: "SSL handshake failure", check duration: 3ms. 0 active and 0 backup servers left.',
        '2026-02-17T14:20:54.341Z r r haproxy[1296]: backend be_secure:web:portal has no server available!',
        haproxy(
          '2026-02-17T14:25:05.851Z',
          'be_secure:web:portal/<NOSRV> 0/-1/-1/-1/0 503 3324 - - SC-- 29/17/0/0/0 0/0 "GET / HTTP/2.0"',
        ),
      ].join('\n'),
      [`${NS}/portal-1/app`]:
        '2026/02/17 14:25:29 http: TLS handshake error from 10.131.0.23:64564: remote error: tls: unknown certificate authority',
    };
    const f = one(run('route', objects, logs), 'ROUTE_BACKEND_TLS_FAILED');
    expect(f.severity).toBe('high');
    expect(f.message).toContain('destinationCACertificate');
    const text = f.evidence.join('\n');
    expect(text).toContain('SSL handshake failure');
    expect(text).toContain('tls: unknown certificate authority');
    expect(text).toContain(`from router ${ROUTER}`);
  });

  it('does not report TLS failing once the router marked the server UP again', () => {
    const labels = { app: 'portal' };
    const objects = [
      route('portal', 'portal', { tls: { termination: 'reencrypt' } }),
      service('portal', labels, [{ port: 8443, targetPort: 8443 }]),
      endpoints('portal', ['10.129.2.242']),
      pod('portal-1', labels),
      routerPod(),
    ];
    const logs = {
      [`openshift-ingress/${ROUTER}/logs`]: [
        'haproxy[1]: Server be_secure:web:portal/pod:portal-1:portal:https:10.129.2.242:8443 is DOWN, reason: Layer6 invalid response, info: "SSL handshake failure", check duration: 3ms.',
        'haproxy[1]: Server be_secure:web:portal/pod:portal-1:portal:https:10.129.2.242:8443 is UP, reason: Layer6 check passed, check duration: 2ms.',
      ].join('\n'),
    };
    expect(run('route', objects, logs)).toEqual([]);
  });

  it('explains 504s cut off at the Route timeout annotation, and only those', () => {
    const labels = { app: 'reports' };
    const base = [
      service('report-builder', labels),
      endpoints('report-builder', ['10.128.2.133']),
      pod('report-builder-1', labels),
      routerPod(),
    ];
    const line = (at: string, total: number) =>
      haproxy(
        at,
        `be_edge_http:web:reports/pod:report-builder-1:report-builder:http:10.128.2.133:8000 0/0/1/-1/${total} 504 194 - - sH-- 24/11/2/1/0 0/0 "GET /api/v1/reports/export?format=xlsx HTTP/2.0"`,
      );
    const logs = {
      [`openshift-ingress/${ROUTER}/logs`]: [
        line('2026-02-17T14:20:00.000Z', 30001),
        line('2026-02-17T14:25:00.000Z', 30002),
        line('2026-02-17T14:28:00.000Z', 30001),
      ].join('\n'),
    };
    const timed = route('reports', 'report-builder', { annotations: { 'haproxy.router.openshift.io/timeout': '30s' } });
    const f = one(run('route', [timed, ...base], logs), 'ROUTE_BACKEND_TIMEOUT');
    expect(f.severity).toBe('high');
    expect(f.evidence.join('\n')).toContain('haproxy.router.openshift.io/timeout=30s');
    expect(f.evidence.join('\n')).toContain('sH--');
    expect(f.evidence.join('\n')).toContain('GET /api/v1/reports/export');
    // The same 504s after 30 s do not match a Route that allows two minutes: something else cut them off.
    const longer = route('reports', 'report-builder', { annotations: { 'haproxy.router.openshift.io/timeout': '2m' } });
    expect(run('route', [longer, ...base], logs).map((x) => x.code)).not.toContain('ROUTE_BACKEND_TIMEOUT');
  });

  it('keeps a Route whose pods crash-loop as a symptom pointing at the Deployment', () => {
    const labels = { app: 'inventory' };
    const objects = [
      route('inventory', 'inventory'),
      service('inventory', labels),
      endpoints('inventory', []),
      replicaSet('inventory-6d5', 'inventory'),
      pod('inventory-6d5-aaaaa', labels, { owner: 'inventory-6d5', ready: false, waiting: 'CrashLoopBackOff' }),
    ];
    const f = one(run('route', objects), 'ROUTE_PODS_NOT_READY');
    expect(f.severity).toBe('medium');
    expect(f.related).toContainEqual({ kind: 'Deployment', name: 'inventory', namespace: NS });
    // Unready pods with no cause of their own leave the Route finding as the best explanation.
    const unexplained = objects.map((o) =>
      o.kind === 'Pod' ? pod('inventory-6d5-aaaaa', labels, { owner: 'inventory-6d5', ready: false }) : o,
    );
    expect(one(run('route', unexplained), 'ROUTE_PODS_NOT_READY').severity).toBe('high');
  });
});

// --- ingress ----------------------------------------------------------------------------------------------------

describe('ingress analyzer', () => {
  const CONTROLLER = 'ingress-nginx-controller-xlj7l65925-6fbbn';
  const nginx = (name: string, cls: string, namespace = 'ingress-nginx') =>
    pod(
      name,
      { 'app.kubernetes.io/component': 'controller' },
      {
        namespace,
        containerName: 'controller',
        image: 'registry.k8s.io/ingress-nginx/controller:v1.11.3',
        args: ['/nginx-ingress-controller', `--controller-class=k8s.io/${cls}`, `--ingress-class=${cls}`],
      },
    );
  const ingressClass = (name: string, controller: string): KubeObject => ({
    kind: 'IngressClass',
    metadata: meta(name, undefined),
    spec: { controller },
  });
  const ingress = (name: string, cls: string, backend: string, address?: string): KubeObject => ({
    kind: 'Ingress',
    metadata: meta(name, NS),
    spec: {
      ingressClassName: cls,
      rules: [
        {
          host: `${name}.example.com`,
          http: { paths: [{ path: '/api', backend: { service: { name: backend, port: { number: 80 } } } }] },
        },
      ],
    },
    status: { loadBalancer: address ? { ingress: [{ hostname: address }] } : {} },
  });

  it('names the Service as what to change and quotes the controller', () => {
    const objects = [
      ingressClass('nginx', 'k8s.io/ingress-nginx'),
      ingress('invoices-web', 'nginx', 'invoice-api', 'lb.example.com'),
      service('invoice-api', { app: 'invoice-api', version: 'v1' }),
      endpoints('invoice-api', []),
      replicaSet('invoice-api-47t', 'invoice-api'),
      pod('invoice-api-47t-8cqgz', { app: 'invoice-api', version: 'v2' }, { owner: 'invoice-api-47t' }),
      nginx(CONTROLLER, 'ingress-nginx'),
    ];
    const logs = {
      [`ingress-nginx/${CONTROLLER}/controller`]:
        'W0217 14:29:24.220953       7 controller.go:1216] Service "web/invoice-api" does not have any active Endpoint.',
    };
    const f = one(run('ingress', objects, logs), 'INGRESS_BACKEND_NO_ENDPOINTS');
    expect(f.owner).toEqual({ kind: 'Service', name: 'invoice-api', namespace: NS });
    expect(f.severity).toBe('high');
    expect(f.evidence.join('\n')).toContain(`controller ${CONTROLLER}: W0217`);
    expect(f.evidence.join('\n')).toContain('Service "web/invoice-api" does not have any active Endpoint');
  });

  it('blames the controller Deployment scaled to zero, although an old Ingress of the class keeps its address', () => {
    const objects = [
      ingressClass('nginx', 'k8s.io/ingress-nginx'),
      ingressClass('nginx-internal', 'k8s.io/ingress-nginx-internal'),
      ingress('admin-console', 'nginx-internal', 'admin-console'),
      ingress('admin-api', 'nginx-internal', 'admin-api', 'old-lb.example.com'),
      service('admin-console', { app: 'admin-console' }),
      endpoints('admin-console', ['10.0.0.9']),
      nginx(CONTROLLER, 'ingress-nginx'),
      deployment('ingress-nginx-internal-controller', { 'app.kubernetes.io/component': 'controller' }, 0, {
        namespace: 'ingress-nginx-internal',
        image: 'registry.k8s.io/ingress-nginx/controller:v1.11.3',
        args: [
          '/nginx-ingress-controller',
          '--controller-class=k8s.io/ingress-nginx-internal',
          '--ingress-class=nginx-internal',
        ],
      }),
    ];
    const logs = {
      [`ingress-nginx/${CONTROLLER}/controller`]:
        'I0217 14:10:59.379997       7 store.go:440] "Ignoring ingress because of error while validating ingress class" ingress="web/admin-console" error="no object matching key \\"nginx-internal\\" in local store"',
    };
    const f = one(run('ingress', objects, logs), 'INGRESS_CLASS_NO_CONTROLLER');
    expect(f.resource).toEqual({ kind: 'Ingress', name: 'admin-console', namespace: NS });
    expect(f.owner).toEqual({
      kind: 'Deployment',
      name: 'ingress-nginx-internal-controller',
      namespace: 'ingress-nginx-internal',
    });
    const text = f.evidence.join('\n');
    expect(text).toContain('Ignoring ingress because of error while validating ingress class');
    expect(text).toContain('still shows address old-lb.example.com');
    // A running controller for the class settles it: the class is served.
    const served = [
      ...objects,
      nginx('ingress-nginx-internal-controller-1', 'ingress-nginx-internal', 'ingress-nginx-internal'),
    ];
    expect(run('ingress', served).map((x) => x.code)).not.toContain('INGRESS_CLASS_NO_CONTROLLER');
  });

  it('blames the running controller told to serve a class by name whose --controller-class the class does not name', () => {
    const running = pod(
      'edge-controller-6f9-abcde',
      { 'app.kubernetes.io/component': 'controller' },
      {
        namespace: 'ingress-edge',
        containerName: 'controller',
        image: 'registry.k8s.io/ingress-nginx/controller:v1.11.3',
        args: ['/nginx-ingress-controller', '--controller-class=k8s.io/ingress-nginx', '--ingress-class=edge'],
        owner: 'edge-controller-6f9',
      },
    );
    const objects = [
      ingressClass('edge', 'example.com/edge'),
      ingress('catalog', 'edge', 'catalog'),
      service('catalog', { app: 'catalog' }),
      endpoints('catalog', ['10.0.0.9']),
      replicaSet('edge-controller-6f9', 'edge-controller', 'ingress-edge'),
      running,
    ];
    const f = one(run('ingress', objects), 'INGRESS_CLASS_NO_CONTROLLER');
    expect(f.owner).toEqual({ kind: 'Deployment', name: 'edge-controller', namespace: 'ingress-edge' });
    expect(f.change).toContain('--controller-class=example.com/edge');
    expect(f.alternatives?.[0]?.resource).toEqual({ kind: 'IngressClass', name: 'edge' });
    expect(f.evidence.join('\n')).toContain('runs with --controller-class=k8s.io/ingress-nginx --ingress-class=edge');
    // The same controller answering to the class's controller serves it: nothing to say.
    const matching = objects.map((o) => (o.kind === 'IngressClass' ? ingressClass('edge', 'k8s.io/ingress-nginx') : o));
    expect(run('ingress', matching).map((x) => x.code)).not.toContain('INGRESS_CLASS_NO_CONTROLLER');
  });
});

// --- services ---------------------------------------------------------------------------------------------------

describe('service-endpoints analyzer', () => {
  const pricing = { app: 'pricing' };

  it('flags a targetPort no container listens on when the pods pass their probe on another port', () => {
    const objects = [
      service('pricing', pricing, [{ port: 80, targetPort: 8080, name: 'http' }]),
      endpoints('pricing', ['10.52.0.103']),
      pod('pricing-2mgm4-4j276', pricing, { ports: [{ containerPort: 9090, name: 'http' }], probePort: 9090 }),
    ];
    const f = one(run('service-endpoints', objects), 'SERVICE_TARGET_PORT_MISMATCH');
    expect(f.severity).toBe('high');
    expect(f.evidence.join('\n')).toContain('targetPort 8080, which no container of its pods declares');
    expect(f.evidence.join('\n')).toContain(
      'pricing-2mgm4-4j276 declare containerPort 9090 (http); 1/1 pass their probe on 9090',
    );
  });

  it('keeps an uncorroborated port mismatch low, and says nothing when the pods declare no ports', () => {
    const declared = [
      service('pricing', pricing, [{ port: 80, targetPort: 8080 }]),
      endpoints('pricing', ['10.52.0.103']),
      pod('pricing-1', pricing, { ports: [{ containerPort: 9090 }] }),
    ];
    expect(one(run('service-endpoints', declared), 'SERVICE_TARGET_PORT_MISMATCH').severity).toBe('low');
    const undeclared = [...declared.slice(0, 2), pod('pricing-1', pricing)];
    expect(run('service-endpoints', undeclared)).toEqual([]);
    const matching = [...declared.slice(0, 2), pod('pricing-1', pricing, { ports: [{ containerPort: 8080 }] })];
    expect(run('service-endpoints', matching)).toEqual([]);
  });

  it('flags a named targetPort that no container defines', () => {
    const objects = [
      service('pricing', pricing, [{ port: 80, targetPort: 'web' }]),
      endpoints('pricing', []),
      pod('pricing-1', pricing, { ports: [{ containerPort: 9090, name: 'http' }] }),
    ];
    const f = run('service-endpoints', objects).find((x) => x.code === 'SERVICE_TARGET_PORT_MISMATCH');
    expect(f?.severity).toBe('high');
    expect(f?.evidence[0]).toContain('targetPort "web", a port name no container of its pods defines');
  });

  it('names the workload scaled to zero as the owner of an empty Service', () => {
    const objects = [
      service('storefront', { app: 'storefront' }),
      endpoints('storefront', []),
      deployment('storefront', { app: 'storefront' }, 0),
    ];
    const f = one(run('service-endpoints', objects), 'SERVICE_NO_ENDPOINTS');
    expect(f.owner).toEqual({ kind: 'Deployment', name: 'storefront', namespace: NS });
    expect(f.message).toContain('scaled to 0 replicas');
  });

  it('points an empty Service whose pods sit on a dead node at the node, below the node fault', () => {
    const labels = { app: 'currency' };
    const node: KubeObject = {
      kind: 'Node',
      metadata: meta('worker-2', undefined),
      status: { conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }] },
    };
    const objects = [
      node,
      service('currency', labels),
      endpoints('currency', []),
      replicaSet('currency-5g', 'currency'),
      pod('currency-5g-5296c', labels, { owner: 'currency-5g', ready: false, node: 'worker-2' }),
    ];
    const f = one(run('service-endpoints', objects), 'SERVICE_NO_ENDPOINTS');
    expect(f.related).toContainEqual({ kind: 'Node', name: 'worker-2' });
    expect(f.related).toContainEqual({ kind: 'Deployment', name: 'currency', namespace: NS });
    expect(f.confidence).toBeLessThanOrEqual(0.6);
    expect(f.evidence.join('\n')).toContain('node worker-2 is NotReady');
  });
});

// --- dns --------------------------------------------------------------------------------------------------------

describe('dns analyzer', () => {
  const dnsPod = (name: string, opts: { ready?: boolean; waiting?: string; ip?: string } = {}): KubeObject => {
    const p = pod(
      name,
      { 'k8s-app': 'kube-dns' },
      {
        namespace: 'kube-system',
        containerName: 'coredns',
        ready: opts.ready ?? true,
        ...(opts.waiting ? { waiting: opts.waiting } : {}),
        ip: opts.ip ?? '10.0.81.178',
        ports: [
          { containerPort: 53, name: 'dns', protocol: 'UDP' },
          { containerPort: 53, name: 'dns-tcp', protocol: 'TCP' },
        ],
      },
    );
    p.spec.volumes = [
      { name: 'config-volume', configMap: { name: 'coredns', items: [{ key: 'Corefile', path: 'Corefile' }] } },
      { name: 'custom-config-volume', configMap: { name: 'coredns-custom', optional: true } },
    ];
    return p;
  };
  const configMap = (name: string, data: Record<string, string>, namespace = 'kube-system'): KubeObject => ({
    kind: 'ConfigMap',
    metadata: meta(name, namespace),
    data,
  });
  const COREFILE = `.:53 {\n    errors\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n       pods insecure\n    }\n    forward . /etc/resolv.conf {\n       max_concurrent 1000\n    }\n    cache 30\n    loop\n}\n`;

  it('parses the forward of every server block, nested and single-line', () => {
    expect(corefileForwards(COREFILE)).toEqual([
      { zones: ['.'], line: 'forward . /etc/resolv.conf', to: ['/etc/resolv.conf'] },
    ]);
    expect(corefileForwards('corp.contoso.com:53 { errors\n forward . 10.20.0.53 10.20.0.54 }')).toEqual([
      { zones: ['corp.contoso.com'], line: 'forward . 10.20.0.53 10.20.0.54', to: ['10.20.0.53', '10.20.0.54'] },
    ]);
  });

  it('traces a CoreDNS forwarding loop to the Corefile ConfigMap and its forward line', () => {
    const loop =
      '[FATAL] plugin/loop: Loop (127.0.0.1:55953 -> :53) detected for zone ".", see https://coredns.io/plugins/loop#troubleshooting. Query: "HINFO 4547991504243258144.3688648895315093531."';
    const objects = [
      dnsPod('coredns-7db6-5v2lq', { ready: false, waiting: 'CrashLoopBackOff' }),
      dnsPod('coredns-7db6-hz8kd', { ready: false, waiting: 'CrashLoopBackOff' }),
      configMap('coredns', { Corefile: COREFILE }),
    ];
    const logs = { 'kube-system/coredns-7db6-5v2lq/coredns:previous': `.:53\nCoreDNS-1.11.1\n${loop}` };
    const f = one(run('dns', objects, logs, 'orders'), 'DNS_COREDNS_UNAVAILABLE');
    expect(f.owner).toEqual({ kind: 'ConfigMap', name: 'coredns', namespace: 'kube-system' });
    expect(f.severity).toBe('critical');
    const text = f.evidence.join('\n');
    expect(text).toContain('plugin/loop: Loop (127.0.0.1:55953 -> :53) detected for zone "."');
    expect(text).toContain('forward . /etc/resolv.conf');
  });

  it('traces upstream timeouts to the ConfigMap whose server block forwards to the silent resolvers', () => {
    const error = (name: string, ip: string) =>
      `[ERROR] plugin/errors: 2 ${name}. A: read udp 10.244.1.76:34301->${ip}:53: i/o timeout`;
    const objects = [
      dnsPod('coredns-6d4f-bq7xk'),
      dnsPod('coredns-6d4f-m2ngw'),
      configMap('coredns', { Corefile: COREFILE }),
      configMap('coredns-custom', {
        'corp.server': 'corp.contoso.com:53 {\n    errors\n    forward . 10.20.0.53 10.20.0.54\n}\n',
      }),
    ];
    const logs = {
      'kube-system/coredns-6d4f-bq7xk/coredns': [
        error('sqlprod01.corp.contoso.com', '10.20.0.53'),
        error('adfs.corp.contoso.com', '10.20.0.54'),
        error('sqlprod01.corp.contoso.com', '10.20.0.53'),
      ].join('\n'),
    };
    const f = one(run('dns', objects, logs, 'claims'), 'DNS_COREDNS_ERRORS');
    expect(f.owner).toEqual({ kind: 'ConfigMap', name: 'coredns-custom', namespace: 'kube-system' });
    const text = f.evidence.join('\n');
    expect(text).toContain('10.20.0.53:53: i/o timeout');
    expect(text).toContain('sqlprod01.corp.contoso.com');
    expect(text).toContain(
      'ConfigMap kube-system/coredns-custom (corp.server), zone corp.contoso.com: forward . 10.20.0.53 10.20.0.54',
    );
  });

  describe('egress NetworkPolicies', () => {
    const client = pod('email-sender-w97-tzkfk', { app: 'email-sender' }, { namespace: 'notifications' });
    const policy = (name: string, egress: unknown[], created = '2026-02-17T14:20:00Z'): KubeObject => ({
      kind: 'NetworkPolicy',
      metadata: { name, namespace: 'notifications', creationTimestamp: created },
      spec: { podSelector: {}, policyTypes: ['Egress'], egress },
    });
    const https = {
      ports: [{ port: 443, protocol: 'TCP' }],
      to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8'] } }],
    };
    const logs = {
      'notifications/email-sender-w97-tzkfk/app':
        "Error: getaddrinfo EAI_AGAIN api.sendgrid.com\n    at GetAddrInfoReqWrap.onlookup [as oncomplete] (node:dns:120:26) {\n  code: 'EAI_AGAIN',",
    };

    it('blames the policy that leaves pods no egress to DNS, quoting the failing lookup', () => {
      const objects = [client, dnsPod('coredns-5b9-8lx2c'), policy('egress-lockdown', [https])];
      const f = one(run('dns', objects, logs, 'notifications'), 'NETWORK_POLICY_BLOCKS_DNS');
      expect(f.resource).toEqual({ kind: 'NetworkPolicy', name: 'egress-lockdown', namespace: 'notifications' });
      expect(f.confidence).toBeGreaterThanOrEqual(0.9);
      const text = f.evidence.join('\n');
      expect(text).toContain('getaddrinfo EAI_AGAIN');
      expect(text).toContain('coredns-5b9-8lx2c');
      expect(text).toContain('TCP 443 to 0.0.0.0/0 except 10.0.0.0/8');
      const symptom = run('dns', objects, logs, 'notifications').find((x) => x.code === 'DNS_LOOKUP_FAILURES');
      expect(symptom?.severity).toBe('medium');
      expect(symptom?.related).toEqual([f.resource]);
    });

    it('accepts a rule that admits UDP 53 to the DNS pods, and rejects one that admits only TCP 53', () => {
      const toDns = (protocol: string) => ({
        ports: [{ port: 53, protocol }],
        to: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
            podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
          },
        ],
      });
      const open = [client, dnsPod('coredns-5b9-8lx2c'), policy('egress-lockdown', [https, toDns('UDP')])];
      expect(run('dns', open, {}, 'notifications').map((x) => x.code)).not.toContain('NETWORK_POLICY_BLOCKS_DNS');
      const tcpOnly = [client, dnsPod('coredns-5b9-8lx2c'), policy('egress-lockdown', [https, toDns('TCP')])];
      expect(run('dns', tcpOnly, {}, 'notifications').map((x) => x.code)).toContain('NETWORK_POLICY_BLOCKS_DNS');
      // An ipBlock that covers the DNS pod's address admits it too.
      const wide = [
        client,
        dnsPod('coredns-5b9-8lx2c'),
        policy('egress-lockdown', [
          { ports: [{ port: 53, protocol: 'UDP' }], to: [{ ipBlock: { cidr: '10.0.0.0/8' } }] },
        ]),
      ];
      expect(run('dns', wide, {}, 'notifications').map((x) => x.code)).not.toContain('NETWORK_POLICY_BLOCKS_DNS');
    });
  });

  it('says why a name does not exist and which ConfigMap holds it', () => {
    const objects = [
      pod('productcatalog-84c-pcfss', { app: 'productcatalog' }, { namespace: 'mercado' }),
      dnsPod('dns-default-7x2kq'),
      { kind: 'Namespace', metadata: meta('mercado', undefined) },
      service('catalog-db', { app: 'catalog-db' }, undefined, 'mercado'),
      configMap('productcatalog-config', { CATALOG_DB_HOST: 'catalog-db.mercado-prod.svc.cluster.local' }, 'mercado'),
    ];
    const logs = {
      'mercado/productcatalog-84c-pcfss/app':
        '{"level":"error","msg":"catalog query failed","err":"dial tcp: lookup catalog-db.mercado-prod.svc.cluster.local on 172.30.0.10:53: no such host"}',
    };
    const f = one(run('dns', objects, logs, 'mercado'), 'DNS_LOOKUP_FAILURES');
    expect(f.owner).toEqual({ kind: 'ConfigMap', name: 'productcatalog-config', namespace: 'mercado' });
    expect(f.evidence.join('\n')).toContain(
      'namespace mercado-prod does not exist; Service catalog-db exists in namespace mercado',
    );
  });

  it('recognizes a .NET name resolution failure by its System.Net.Dns frame', () => {
    const objects = [pod('claims-api-f9n-lkcz6', { app: 'claims-api' }, { namespace: 'claims' }), dnsPod('coredns-1')];
    const logs = {
      'claims/claims-api-f9n-lkcz6/app':
        'fail: SqlHealthCheck\n ---> System.Net.Sockets.SocketException (00000001, 11): Resource temporarily unavailable\n   at System.Net.Dns.GetHostEntryOrAddressesCore(String hostName)',
    };
    const f = one(run('dns', objects, logs, 'claims'), 'DNS_LOOKUP_FAILURES');
    expect(f.evidence[0]).toContain('SocketException (00000001, 11): Resource temporarily unavailable');
    // The same exception thrown by a socket connect is not a lookup failure.
    const connect = {
      'claims/claims-api-f9n-lkcz6/app': logs['claims/claims-api-f9n-lkcz6/app'].replace(
        'System.Net.Dns.GetHostEntryOrAddressesCore',
        'System.Net.Sockets.Socket.Connect',
      ),
    };
    expect(run('dns', objects, connect, 'claims')).toEqual([]);
  });
});
