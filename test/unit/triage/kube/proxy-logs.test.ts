import { describe, expect, it } from 'vitest';
import {
  describeTermination,
  parseHaproxyLine,
  parseKlogDate,
  parseNginxLine,
  parseTimeSpec,
  routeOfBackend,
} from '../../../../src/triage/kube/proxy-logs.js';
import { haproxy } from '../../../support/analyzers/networking.js';

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
