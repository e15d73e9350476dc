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
