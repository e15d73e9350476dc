import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import {
  deployment,
  endpoints,
  meta,
  NS,
  one,
  pod,
  replicaSet,
  run,
  service,
} from '../../../support/analyzers/networking.js';

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
