import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { corefileForwards } from '../../../../src/triage/analyze/dns.js';
import { meta, one, pod, run, service } from '../../../support/analyzers/networking.js';

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
