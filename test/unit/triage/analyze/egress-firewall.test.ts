import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { decidingRule, failedAddresses, inCidr } from '../../../../src/triage/analyze/egress-firewall.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../../src/triage/analyze/index.js';

const NOW = new Date('2026-03-02T11:00:00Z');

const client: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'quotes-7c9-abcde', namespace: 'pricing', labels: { app: 'quotes' } },
  spec: { containers: [{ name: 'quotes' }] },
  status: { phase: 'Running', podIP: '10.128.2.14', conditions: [{ type: 'Ready', status: 'False' }] },
} as KubeObject;

function firewall(egress: unknown[]): KubeObject {
  return {
    apiVersion: 'k8s.ovn.org/v1',
    kind: 'EgressFirewall',
    metadata: { name: 'default', namespace: 'pricing' },
    spec: { egress },
    status: { status: 'EgressFirewall Rules applied' },
  } as KubeObject;
}

const LOG = 'Caused by: java.net.SocketTimeoutException: Connect timed out (rates.corp.example/192.168.40.7:1521)\n';

function analyze(objects: KubeObject[], log = LOG) {
  const ctx = contextFromObjects({
    namespace: 'pricing',
    now: NOW,
    objects,
    logs: { 'pricing/quotes-7c9-abcde/quotes': log },
  });
  return runAnalyzers([getAnalyzer('egress-firewall')], ctx);
}

describe('egress-firewall analyzer', () => {
  it('reads the address and the name it was dialled as from Java, Go and structured lines', () => {
    expect(failedAddresses('Connect timed out (db.example/10.1.2.3:5432)')).toEqual([
      { ip: '10.1.2.3', port: 5432, host: 'db.example' },
    ]);
    expect(
      failedAddresses(
        '{"msg":"unable to open connection","addr":"k1.example.net:9093","err":"dial tcp 10.9.9.9:9093: i/o timeout"}',
      ),
    ).toEqual([{ ip: '10.9.9.9', port: 9093, host: 'k1.example.net' }]);
    expect(failedAddresses('listening on 10.1.2.3:8080')).toEqual([]);
  });

  it('tries the rules in order: the first match decides, ports narrow a rule, and a DNS name it cannot judge stops it', () => {
    expect(inCidr('10.50.3.20', '10.50.4.0/24')).toBe(false);
    expect(inCidr('10.50.4.20', '10.50.4.0/24')).toBe(true);
    const deny = { type: 'Deny', to: { cidrSelector: '0.0.0.0/0' } };
    const target = { ip: '10.50.3.20', port: 5432 };
    expect(decidingRule([{ type: 'Allow', to: { cidrSelector: '10.50.4.0/24' } }, deny], target)?.index).toBe(1);
    expect(decidingRule([{ type: 'Allow', to: { cidrSelector: '10.50.0.0/16' } }, deny], target)?.rule.type).toBe(
      'Allow',
    );
    expect(
      decidingRule([{ type: 'Allow', to: { cidrSelector: '10.50.0.0/16' }, ports: [{ port: 443 }] }, deny], target)
        ?.index,
    ).toBe(1);
    expect(decidingRule([{ type: 'Allow', to: { dnsName: 'db.example' } }, deny], target)).toBeUndefined();
    expect(
      decidingRule([{ type: 'Allow', to: { dnsName: 'db.example' } }, deny], { ...target, host: 'db.example' })?.index,
    ).toBe(0);
  });

  it('names the EgressFirewall whose first matching rule denies the address a client times out on', () => {
    const findings = analyze([
      client,
      firewall([
        { type: 'Allow', to: { cidrSelector: '192.168.41.0/24' } },
        { type: 'Deny', to: { cidrSelector: '0.0.0.0/0' } },
      ]),
    ]);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      code: 'EGRESS_FIREWALL_BLOCKS',
      resource: { kind: 'EgressFirewall', name: 'default', namespace: 'pricing' },
      related: [{ kind: 'Pod', name: 'quotes-7c9-abcde' }],
    });
    expect(findings[0]?.change).toContain('192.168.40.7/32');
    expect(findings[0]?.evidence.join('\n')).toContain('192.168.41.0/24');
  });

  it('stays quiet when a rule allows the address, when the address is inside the cluster, or without a firewall', () => {
    const allowing = firewall([
      { type: 'Allow', to: { cidrSelector: '192.168.40.0/24' } },
      { type: 'Deny', to: { cidrSelector: '0.0.0.0/0' } },
    ]);
    expect(analyze([client, allowing])).toEqual([]);
    expect(analyze([client])).toEqual([]);
    const deny = firewall([{ type: 'Deny', to: { cidrSelector: '0.0.0.0/0' } }]);
    expect(analyze([client, deny], 'dial tcp 10.128.2.14:8080: i/o timeout\n')).toEqual([]);
  });
});
