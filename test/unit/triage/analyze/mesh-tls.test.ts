import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../../src/triage/analyze/index.js';
import type { Finding } from '../../../../src/triage/envelope/findings.js';

const NOW = new Date('2026-04-21T16:40:00Z');
const HOST = 'profile-svc.accounts.svc.cluster.local';

function pod(
  name: string,
  namespace: string,
  labels: Record<string, string>,
  containers: string[],
  ip: string,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels },
    spec: { containers: containers.map((c) => ({ name: c })) },
    status: { phase: 'Running', podIP: ip, conditions: [{ type: 'Ready', status: 'True' }] },
  } as KubeObject;
}

function service(name: string, namespace: string, selector: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: { selector, ports: [{ port: 80, targetPort: 8080 }] },
  } as KubeObject;
}

function peerAuthentication(name: string, namespace: string, mode: string, selector?: unknown): KubeObject {
  return {
    apiVersion: 'security.istio.io/v1',
    kind: 'PeerAuthentication',
    metadata: { name, namespace },
    spec: { mtls: { mode }, ...(selector ? { selector } : {}) },
  } as KubeObject;
}

function destinationRule(mode: string): KubeObject {
  return {
    apiVersion: 'networking.istio.io/v1',
    kind: 'DestinationRule',
    metadata: { name: 'profile-svc', namespace: 'accounts', creationTimestamp: '2026-04-21T16:05:00Z' },
    spec: { host: HOST, trafficPolicy: { tls: { mode } } },
  } as KubeObject;
}

const server = pod('profile-svc-abc-1', 'accounts', { app: 'profile' }, ['profile-svc', 'istio-proxy'], '10.244.1.27');
const gateway = pod(
  'istio-ingressgateway-x-1',
  'istio-ingress',
  { istio: 'ingressgateway' },
  ['istio-proxy'],
  '10.244.1.17',
);
const profile = service('profile-svc', 'accounts', { app: 'profile' });

const resetLine = `[2026-04-21T16:31:00.412Z] "GET /api/v2/profile/me HTTP/1.1" 503 UF,URX upstream_reset_before_response_started{connection_termination} - "-" 0 95 1 - "203.0.113.43" "curl/8.5.0" "01ef1f67" "profile.acme.app" "10.244.1.27:8080" outbound|80||${HOST} - 10.244.1.17:8080 203.0.113.43:51234 - -`;
const gatewayLogs = { 'istio-ingress/istio-ingressgateway-x-1/istio-proxy': `${resetLine}\n` };

function run(namespace: string, objects: KubeObject[], logs: Record<string, string>): Finding[] {
  return runAnalyzers([getAnalyzer('mesh-tls')], contextFromObjects({ namespace, now: NOW, objects, logs }));
}

describe('mesh-tls: a DestinationRule whose TLS mode a STRICT PeerAuthentication refuses', () => {
  it('names the DestinationRule from the mesh-wide STRICT policy and the gateway’s reset lines', () => {
    const objects = [
      server,
      gateway,
      profile,
      peerAuthentication('default', 'istio-system', 'STRICT'),
      destinationRule('DISABLE'),
    ];
    const [f] = run('accounts', objects, gatewayLogs);
    expect(f?.code).toBe('MESH_TLS_MODE_CONFLICT');
    expect(f?.resource).toEqual({ kind: 'DestinationRule', name: 'profile-svc', namespace: 'accounts' });
    expect(f?.change).toContain('ISTIO_MUTUAL');
    expect(f?.evidence.join('\n')).toContain('upstream_reset_before_response_started{connection_termination}');
    expect(f?.evidence.join('\n')).toContain('mesh-wide');
    expect(f?.alternatives?.[0]?.resource.kind).toBe('PeerAuthentication');
  });

  it('says nothing when the namespace’s own policy is PERMISSIVE, the rule asks for ISTIO_MUTUAL, or no proxy logged a reset', () => {
    const base = [server, gateway, profile, peerAuthentication('default', 'istio-system', 'STRICT')];
    expect(
      run(
        'accounts',
        [...base, peerAuthentication('default', 'accounts', 'PERMISSIVE'), destinationRule('DISABLE')],
        gatewayLogs,
      ),
    ).toEqual([]);
    expect(run('accounts', [...base, destinationRule('ISTIO_MUTUAL')], gatewayLogs)).toEqual([]);
    expect(run('accounts', [...base, destinationRule('DISABLE')], {})).toEqual([]);
  });

  it('follows a workload-selector policy over the namespace’s', () => {
    const objects = [
      server,
      gateway,
      profile,
      peerAuthentication('default', 'accounts', 'PERMISSIVE'),
      peerAuthentication('profile-strict', 'accounts', 'STRICT', { matchLabels: { app: 'profile' } }),
      destinationRule('SIMPLE'),
    ];
    const [f] = run('accounts', objects, gatewayLogs);
    expect(f?.alternatives?.[0]?.resource.name).toBe('profile-strict');
  });
});

describe('mesh-tls: clients without a sidecar refused by a STRICT PeerAuthentication', () => {
  const api = pod(
    'settlement-api-1',
    'payments',
    { app: 'settlement-api' },
    ['settlement-api', 'istio-proxy'],
    '10.40.12.5',
  );
  const settlement = service('settlement-api', 'payments', { app: 'settlement-api' });
  const client = {
    ...pod(
      'settlement-export-29271360-lhss4',
      'finance-batch',
      { 'job-name': 'settlement-export-29271360' },
      ['export'],
      '10.40.37.69',
    ),
    status: { phase: 'Failed', podIP: '10.40.37.69' },
  } as KubeObject;
  const strict = peerAuthentication('default', 'payments', 'STRICT');
  const proxyLine =
    '2026-08-28T00:03:00.205Z\twarning\tenvoy connection external/envoy/source/common/tls/ssl_socket.cc:280\tremote address:10.40.37.69:47122,TLS_error:|268435612:SSL routines:OPENSSL_internal:HTTP_REQUEST:TLS_error_end\tthread=24';
  const clientLine =
    "2026-08-28T00:03:00.173Z ERROR fetch batch 1/38 failed: HTTPConnectionPool(host='settlement-api.payments.svc.cluster.local', port=80): Max retries exceeded (Caused by ProtocolError('Connection aborted.', ConnectionResetError(104, 'Connection reset by peer')))";
  const at = (p: KubeObject, c: string) => `${p.metadata.namespace}/${p.metadata.name}/${c}`;

  it('names the PeerAuthentication from the server proxy’s plaintext refusal and the client it came from', () => {
    const [f] = run('payments', [api, settlement, client, strict], { [at(api, 'istio-proxy')]: proxyLine });
    expect(f?.code).toBe('MESH_MTLS_PLAINTEXT_REFUSED');
    expect(f?.resource).toEqual({ kind: 'PeerAuthentication', name: 'default', namespace: 'payments' });
    expect(f?.evidence.join('\n')).toContain('has no istio-proxy container');
    expect(f?.change).toContain('PERMISSIVE');
  });

  it('names it from the client’s own reset line when the server’s proxy was not read', () => {
    const [f] = run('payments', [api, settlement, client, strict], { [at(client, 'export')]: clientLine });
    expect(f?.code).toBe('MESH_MTLS_PLAINTEXT_REFUSED');
    expect(f?.evidence.join('\n')).toContain('Connection reset by peer');
  });

  it('says the plaintext peer was not read when it is in another namespace', () => {
    const [f] = run('payments', [api, settlement, strict], { [at(api, 'istio-proxy')]: proxyLine });
    expect(f?.evidence.join('\n')).toContain('10.40.37.69 is no pod read');
  });

  it('says nothing when the policy is PERMISSIVE or the resetting client has a sidecar', () => {
    expect(
      run('payments', [api, settlement, client, peerAuthentication('default', 'payments', 'PERMISSIVE')], {
        [at(api, 'istio-proxy')]: proxyLine,
        [at(client, 'export')]: clientLine,
      }),
    ).toEqual([]);
    const meshed = pod('exporter-1', 'finance-batch', {}, ['export', 'istio-proxy'], '10.40.37.70');
    expect(run('payments', [api, settlement, meshed, strict], { [at(meshed, 'export')]: clientLine })).toEqual([]);
  });
});
