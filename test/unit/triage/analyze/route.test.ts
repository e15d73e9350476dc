import { describe, expect, it } from 'vitest';
import {
  deployment,
  endpoints,
  event,
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
