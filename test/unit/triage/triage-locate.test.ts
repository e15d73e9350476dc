import { describe, expect, it } from 'vitest';
import type { ClusterReader, KubeObject, ListQuery, ResourceKind } from '../../../src/cluster/types.js';
import { ClusterReadError } from '../../../src/cluster/types.js';
import { AmbiguousNamespaceError } from '../../../src/triage/route/errors.js';
import { candidateWords, LOCATE_MAX_ITEMS, locateNamespace, workloadOfPod } from '../../../src/triage/route/locate.js';

const CREATED = '2026-01-10T08:00:00Z';

// --- objects as `kubectl get -o yaml` prints them -------------------------------------------------------------------

function namespace(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, creationTimestamp: CREATED, labels: { 'kubernetes.io/metadata.name': name } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

function node(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, creationTimestamp: CREATED, labels: { 'kubernetes.io/hostname': name } },
    spec: { providerID: `aws:///eu-west-1a/i-0${name.length}` },
    status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] },
  };
}

function deployment(name: string, ns: string): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns, creationTimestamp: CREATED, labels: { app: name } },
    spec: { replicas: 2, selector: { matchLabels: { app: name } } },
    status: { replicas: 2, readyReplicas: 2, availableReplicas: 2 },
  };
}

function cronJob(name: string, ns: string): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: ns, creationTimestamp: CREATED },
    spec: { schedule: '0 2 * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure' } } } } },
  };
}

function service(name: string, ns: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: ns, creationTimestamp: CREATED },
    spec: {
      type: 'ClusterIP',
      clusterIP: '10.96.0.20',
      selector: { app: name },
      ports: [{ port: 80, targetPort: 8080 }],
    },
  };
}

function claim(name: string, ns: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: ns, creationTimestamp: CREATED },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } }, storageClassName: 'gp3' },
    status: { phase: 'Pending' },
  };
}

function pod(
  name: string,
  ns: string,
  opts: { hash?: string; owner?: { kind: string; name: string }; node?: string; ready?: boolean } = {},
): KubeObject {
  const ready = opts.ready ?? true;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: ns,
      creationTimestamp: CREATED,
      labels: { app: name, ...(opts.hash ? { 'pod-template-hash': opts.hash } : {}) },
      ...(opts.owner
        ? {
            ownerReferences: [
              { apiVersion: 'apps/v1', kind: opts.owner.kind, name: opts.owner.name, controller: true, uid: 'u-1' },
            ],
          }
        : {}),
    },
    spec: {
      containers: [{ name: 'app', image: 'registry.example.com/app:1.4.2' }],
      ...(opts.node ? { nodeName: opts.node } : {}),
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Initialized', status: 'True' },
        { type: 'Ready', status: ready ? 'True' : 'False' },
        { type: 'ContainersReady', status: ready ? 'True' : 'False' },
      ],
    },
  };
}

// --- a read-only cluster that lists what it holds -----------------------------------------------------------------

interface FakeCluster extends ClusterReader {
  listed: ListQuery[];
}

function cluster(
  objects: Partial<Record<ResourceKind, KubeObject[]>>,
  failing: Partial<Record<ResourceKind, Error>> = {},
): FakeCluster {
  const listed: ListQuery[] = [];
  return {
    listed,
    async list(query) {
      listed.push(query);
      const failure = failing[query.kind];
      if (failure) throw failure;
      return objects[query.kind] ?? [];
    },
    async get(query) {
      throw new ClusterReadError(`${query.kind} ${query.name} not found`, 'not-found', 404);
    },
    async logs() {
      throw new ClusterReadError('logs are not read while locating', 'refused-by-policy');
    },
  };
}

const signal = () => AbortSignal.timeout(5_000);

const NAMESPACES = ['default', 'kube-system', 'openshift-ingress', 'shop', 'payments', 'batch'].map(namespace);

// --- candidateWords ----------------------------------------------------------------------------------------------

describe('candidateWords', () => {
  it('lower-cases and drops Slack mentions, emphasis, backticks and punctuation', () => {
    const words = candidateWords('<@U024BE7LH> *Payments-API* is down!! see `checkout-worker`, (again)?');
    expect(words.has('payments-api')).toBe(true);
    expect(words.has('checkout-worker')).toBe(true);
    expect(words.has('again')).toBe(true);
    for (const w of words) expect(w).not.toMatch(/[<>@*`,!?()A-Z]/);
    expect([...words].some((w) => w.includes('u024be7lh'))).toBe(false);
  });

  it('keeps the label of a Slack channel or link and drops a leading slash command', () => {
    const words = candidateWords(
      '/calmops triage <#C0123|shop-team> see <https://grafana.example.com/d/x|orders board>',
    );
    expect(words.has('shop-team')).toBe(true);
    expect(words.has('orders')).toBe(true);
    expect(words.has('calmops')).toBe(false);
    expect([...words].some((w) => w.includes('grafana'))).toBe(false);
  });

  it('splits a dotted service name into the service and its namespace, and keeps the whole', () => {
    const words = candidateWords('calls to orders.shop.svc.cluster.local:8080 time out.');
    expect(words.has('orders')).toBe(true);
    expect(words.has('shop')).toBe(true);
    expect(words.has('orders.shop.svc')).toBe(false);
    const short = candidateWords('orders.shop.svc refuses connections');
    expect(short.has('orders.shop.svc')).toBe(true);
    expect(short.has('orders')).toBe(true);
    expect(short.has('shop')).toBe(true);
  });

  it('strips dots, dashes and slashes at the ends of a word but not inside it', () => {
    const words = candidateWords('is payments. ok? check ./jobs/ and -- nightly-export-');
    expect(words.has('payments')).toBe(true);
    expect(words.has('jobs')).toBe(true);
    expect(words.has('nightly-export')).toBe(true);
    expect(words.has('payments.')).toBe(false);
  });

  it('joins neighbouring words with a dash, as names are spelled', () => {
    const words = candidateWords('the order worker keeps crashing');
    expect(words.has('order-worker')).toBe(true);
    expect(words.has('worker-keeps')).toBe(true);
    expect(words.has('order')).toBe(true);
    expect(words.has('worker')).toBe(true);
    // Only neighbours: words further apart are not joined.
    expect(words.has('order-keeps')).toBe(false);
  });

  it('drops one-letter tokens', () => {
    const words = candidateWords('a b pod x');
    expect(words.has('a')).toBe(false);
    expect(words.has('x')).toBe(false);
    expect(words.has('pod')).toBe(true);
  });
});

// --- workloadOfPod -----------------------------------------------------------------------------------------------

describe('workloadOfPod', () => {
  it('cuts the pod-template-hash and random suffix from a Deployment pod', () => {
    const p = pod('payments-api-7c9f8b6d5-x2x7k', 'payments', {
      hash: '7c9f8b6d5',
      owner: { kind: 'ReplicaSet', name: 'payments-api-7c9f8b6d5' },
    });
    expect(workloadOfPod(p)).toBe('payments-api');
  });

  it('names the StatefulSet and DaemonSet that own a pod', () => {
    expect(workloadOfPod(pod('postgres-0', 'db', { owner: { kind: 'StatefulSet', name: 'postgres' } }))).toBe(
      'postgres',
    );
    expect(
      workloadOfPod(pod('fluent-bit-9xk2q', 'logging', { owner: { kind: 'DaemonSet', name: 'fluent-bit' } })),
    ).toBe('fluent-bit');
  });

  it('names the CronJob behind a Job pod by cutting the scheduled-time suffix', () => {
    const p = pod('nightly-export-29012345-4x8zq', 'batch', {
      owner: { kind: 'Job', name: 'nightly-export-29012345' },
    });
    expect(workloadOfPod(p)).toBe('nightly-export');
  });

  it('keeps the name of a Job that no CronJob made', () => {
    expect(workloadOfPod(pod('db-migrate-7wq2x', 'shop', { owner: { kind: 'Job', name: 'db-migrate' } }))).toBe(
      'db-migrate',
    );
  });

  it('cuts a generated suffix from a pod whose template hash label is missing', () => {
    expect(
      workloadOfPod(pod('web-6f7d9c5b8d-q9z2w', 'shop', { owner: { kind: 'ReplicaSet', name: 'web-6f7d9c5b8d' } })),
    ).toBe('web');
  });

  it('keeps the whole name of a bare pod without a generated suffix', () => {
    expect(workloadOfPod(pod('debug', 'shop'))).toBe('debug');
    expect(workloadOfPod(pod('toolbox-v2', 'shop'))).toBe('toolbox-v2');
  });
});

// --- locateNamespace ---------------------------------------------------------------------------------------------

describe('locateNamespace', () => {
  it('takes a namespace the request names, and counts every list it sent', async () => {
    const reader = cluster({ namespaces: NAMESPACES, deployments: [deployment('api', 'shop')] });
    const located = await locateNamespace('payments are failing since noon', reader, signal());
    expect(located.namespace).toBe('payments');
    expect(located.why).toContain('"payments" is a namespace');
    expect(located.requests).toBe(reader.listed.length);
    expect(reader.listed.map((q) => q.kind)).toEqual(
      expect.arrayContaining(['namespaces', 'nodes', 'deployments', 'pods', 'services', 'routes']),
    );
    // Bounded, cluster-wide lists: no namespace filter, a cap on items.
    for (const q of reader.listed) {
      expect(q.namespace).toBeUndefined();
      expect(q.maxItems).toBe(LOCATE_MAX_ITEMS);
    }
  });

  it('takes a namespace one dash-separated part of whose name the request says', async () => {
    const reader = cluster({ namespaces: [...NAMESPACES, namespace('team-analytics')] });
    const located = await locateNamespace('the analytics dashboards are empty', reader, signal());
    expect(located.namespace).toBe('team-analytics');
    expect(located.why).toContain('"analytics" is part of the namespace');
  });

  it('finds the namespace of a Deployment the request names, spelled with a space', async () => {
    const reader = cluster({
      namespaces: NAMESPACES,
      deployments: [deployment('order-worker', 'shop'), deployment('ledger', 'payments')],
    });
    const located = await locateNamespace('the order worker is stuck', reader, signal());
    expect(located.namespace).toBe('shop');
    expect(located.why).toContain('"order-worker" is a Deployment there');
  });

  it('finds the namespace of a CronJob from one part of its name', async () => {
    const reader = cluster({
      namespaces: NAMESPACES,
      cronjobs: [cronJob('nightly-export', 'batch')],
      deployments: [deployment('storefront', 'shop')],
    });
    const located = await locateNamespace('the exports did not run last night', reader, signal());
    expect(located.namespace).toBe('batch');
    expect(located.why).toContain('"export" is part of CronJob nightly-export');
  });

  it('finds the namespace of a Service named as `svc.ns.svc`', async () => {
    const reader = cluster({
      namespaces: [...NAMESPACES, namespace('data')],
      services: [service('postgres', 'data'), service('orders', 'shop')],
    });
    const located = await locateNamespace('clients time out on postgres.data.svc', reader, signal());
    expect(located.namespace).toBe('data');
    expect(located.why).toContain('"data" is a namespace');
    expect(located.why).toContain('"postgres" is a Service there');
  });

  it('finds the namespace of a PersistentVolumeClaim the request names', async () => {
    const reader = cluster({
      namespaces: NAMESPACES,
      persistentvolumeclaims: [claim('data-ledger-0', 'payments'), claim('uploads', 'shop')],
    });
    const located = await locateNamespace('data-ledger-0 stays Pending', reader, signal());
    expect(located.namespace).toBe('payments');
    expect(located.why).toContain('"data-ledger-0" is a PersistentVolumeClaim there');
  });

  it('finds the namespace of a pod named in full, and of the workload a pod name shortens to', async () => {
    const pods = [
      pod('checkout-5d8f7b9c4-k2m9x', 'shop', {
        hash: '5d8f7b9c4',
        owner: { kind: 'ReplicaSet', name: 'checkout-5d8f7b9c4' },
      }),
      pod('ledger-0', 'payments', { owner: { kind: 'StatefulSet', name: 'ledger' } }),
    ];
    const byName = await locateNamespace(
      'pod checkout-5d8f7b9c4-k2m9x restarts',
      cluster({ namespaces: NAMESPACES, pods }),
      signal(),
    );
    expect(byName.namespace).toBe('shop');
    expect(byName.why).toContain('"checkout-5d8f7b9c4-k2m9x" is a Pod there');
    // No StatefulSet was listed (or could be): the pod's own name still points at its workload.
    const byWorkload = await locateNamespace('ledger is slow', cluster({ namespaces: NAMESPACES, pods }), signal());
    expect(byWorkload.namespace).toBe('payments');
    expect(byWorkload.why).toContain('"ledger" runs pods there');
  });

  it('points a node, named by its short hostname, at the namespaces of its pods, unhealthy pods first', async () => {
    const full = 'ip-10-0-1-2.eu-west-1.compute.internal';
    const reader = cluster({
      namespaces: NAMESPACES,
      nodes: [node(full), node('ip-10-0-3-4.eu-west-1.compute.internal')],
      pods: [
        pod('storefront-6c8d7f9b5-abcde', 'shop', { hash: '6c8d7f9b5', node: full, ready: true }),
        pod('ledger-0', 'payments', { owner: { kind: 'StatefulSet', name: 'ledger' }, node: full, ready: false }),
        // A failing pod on another node says nothing about this one.
        pod('worker-0', 'batch', {
          owner: { kind: 'StatefulSet', name: 'worker' },
          node: 'ip-10-0-3-4.eu-west-1.compute.internal',
          ready: false,
        }),
      ],
    });
    const located = await locateNamespace('node ip-10-0-1-2 went NotReady', reader, signal());
    expect(located.namespace).toBe('payments');
    expect(located.why).toContain('its pods run on node ip-10-0-1-2');
  });

  it('lets the unready pod on a named node decide between the namespaces the node points at', async () => {
    const full = 'ip-10-0-1-2.eu-west-1.compute.internal';
    const reader = cluster({
      namespaces: NAMESPACES,
      nodes: [node(full)],
      pods: [
        pod('storefront-6c8d7f9b5-abcde', 'shop', { hash: '6c8d7f9b5', node: full, ready: true }),
        pod('storefront-6c8d7f9b5-fghij', 'shop', { hash: '6c8d7f9b5', node: full, ready: true }),
        pod('storefront-6c8d7f9b5-klmno', 'shop', { hash: '6c8d7f9b5', node: full, ready: true }),
        pod('ledger-0', 'payments', { owner: { kind: 'StatefulSet', name: 'ledger' }, node: full, ready: false }),
      ],
    });
    // Three ready pods against one unready pod weigh alike by words; the pod in trouble is the evidence.
    const located = await locateNamespace(`${full} is under memory pressure`, reader, signal());
    expect(located.namespace).toBe('payments');
    expect(located.why).toContain('pod ledger-0 is not ready');
  });

  it('weighs platform namespaces less than an application namespace with the same match', async () => {
    const reader = cluster({
      namespaces: NAMESPACES,
      deployments: [deployment('router', 'openshift-ingress'), deployment('router', 'shop')],
    });
    const located = await locateNamespace('router returns 503', reader, signal());
    expect(located.namespace).toBe('shop');
  });

  it('still finds a platform namespace when nothing of an application matches', async () => {
    const reader = cluster({
      namespaces: NAMESPACES,
      deployments: [deployment('coredns', 'kube-system'), deployment('api', 'shop')],
    });
    const located = await locateNamespace('coredns keeps restarting', reader, signal());
    expect(located.namespace).toBe('kube-system');
  });

  it('refuses to guess between namespaces that match equally, and says what matched where', async () => {
    const reader = cluster({
      namespaces: [...NAMESPACES, namespace('shop-staging')],
      deployments: [deployment('checkout', 'shop'), deployment('checkout', 'shop-staging')],
    });
    const error = await locateNamespace('checkout is failing', reader, signal()).catch((e) => e);
    expect(error).toBeInstanceOf(AmbiguousNamespaceError);
    const ambiguous = error as AmbiguousNamespaceError;
    expect(ambiguous.candidates).toEqual([
      { namespace: 'shop', why: '"checkout" is a Deployment there' },
      { namespace: 'shop-staging', why: '"checkout" is a Deployment there' },
    ]);
    expect(ambiguous.message).toContain('shop (');
    expect(ambiguous.message).toContain('shop-staging (');
    expect(ambiguous.message).toContain('"in shop"');
  });

  it('picks the clearly better match rather than calling it ambiguous', async () => {
    const reader = cluster({
      namespaces: [...NAMESPACES, namespace('shop-staging')],
      deployments: [deployment('checkout', 'shop'), deployment('checkout', 'shop-staging')],
      services: [service('checkout', 'shop')],
    });
    // The Service is only in one of them: that tips the balance.
    const located = await locateNamespace('checkout is failing', reader, signal());
    expect(located.namespace).toBe('shop');
    expect(located.why).toContain('"checkout" is a Service there');
  });

  it('sweeps the cluster when nothing matches, and answers with the one namespace in trouble', async () => {
    const reader = cluster({
      namespaces: NAMESPACES,
      pods: [pod('web', 'shop'), pod('ledger', 'payments', { ready: false })],
    });
    const located = await locateNamespace('everything is slow today', reader, signal());
    expect(located.namespace).toBe('payments');
    expect(located.why).toMatch(/no namespace named; the cluster sweep \(6 namespaces, 2 pods/);
    expect(located.why).toContain('pod ledger is not ready');
  });

  it('offers the namespaces in trouble as candidates when several are, and the busiest when none is', async () => {
    const troubled = cluster({
      namespaces: NAMESPACES,
      pods: [pod('web', 'shop', { ready: false }), pod('ledger', 'payments', { ready: false })],
    });
    const error = await locateNamespace('anything wrong?', troubled, signal()).catch((e) => e);
    expect(error).toBeInstanceOf(AmbiguousNamespaceError);
    expect((error as AmbiguousNamespaceError).candidates.map((c) => c.namespace)).toEqual(['payments', 'shop']);
    const healthy = cluster({
      namespaces: NAMESPACES,
      pods: [pod('a', 'kube-system'), pod('b', 'kube-system'), pod('c', 'kube-system'), pod('web', 'shop')],
    });
    const located = await locateNamespace('anything wrong?', healthy, signal());
    expect(located.namespace).toBe('shop');
    expect(located.why).toContain('finds no pod or Deployment in trouble');
  });

  it('carries on when a kind cannot be listed (routes off OpenShift, a forbidden list)', async () => {
    const reader = cluster(
      { namespaces: NAMESPACES, services: [service('storefront', 'shop')] },
      {
        routes: new ClusterReadError('the server could not find the requested resource', 'not-found', 404),
        deployments: new ClusterReadError('deployments.apps is forbidden', 'forbidden', 403),
      },
    );
    const located = await locateNamespace('storefront answers 502', reader, signal());
    expect(located.namespace).toBe('shop');
    expect(reader.listed.map((q) => q.kind)).toContain('routes');
  });

  it('learns which namespaces exist from the objects when namespaces cannot be listed', async () => {
    const reader = cluster(
      { deployments: [deployment('api', 'shop'), deployment('ledger', 'payments')] },
      { namespaces: new ClusterReadError('namespaces is forbidden', 'forbidden', 403) },
    );
    const located = await locateNamespace('nothing in particular', reader, signal());
    expect(located.namespace).toBe('payments');
    expect(located.why).toMatch(/the cluster sweep \(2 namespaces, 0 pods and 2 Deployments read\)/);
  });
});

// --- evidence beyond names: hosts, images, current faults, the subject of a question ---------------------------------

function ingress(name: string, ns: string, host: string): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: ns, creationTimestamp: CREATED },
    spec: {
      ingressClassName: 'nginx',
      rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name } } }] } }],
    },
  };
}

function endpoints(name: string, ns: string, ready: boolean): KubeObject {
  const address = { ip: '10.42.1.7', targetRef: { kind: 'Pod', name: `${name}-0`, namespace: ns } };
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name, namespace: ns, creationTimestamp: CREATED },
    subsets: [{ ...(ready ? { addresses: [address] } : { notReadyAddresses: [address] }), ports: [{ port: 8080 }] }],
  };
}

function failedJob(name: string, ns: string, cron: string): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: ns,
      creationTimestamp: CREATED,
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: cron, controller: true, uid: 'u-2' }],
    },
    status: {
      startTime: CREATED,
      failed: 3,
      conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }],
    },
  };
}

describe('locateNamespace from what the cluster holds besides names', () => {
  const TWO = [...NAMESPACES, namespace('shop-staging')];

  it('finds the namespace whose Ingress serves a host the request names', async () => {
    const reader = cluster({
      namespaces: TWO,
      deployments: [deployment('web', 'shop'), deployment('web', 'shop-staging')],
      ingresses: [ingress('web', 'shop', 'www.acme-shop.com'), ingress('web', 'shop-staging', 'staging.acme-shop.com')],
    });
    const located = await locateNamespace('customers get 504 on https://www.acme-shop.com/cart', reader, signal());
    expect(located.namespace).toBe('shop');
    expect(located.why).toContain('Ingress web serves www.acme-shop.com');
  });

  it('follows a VirtualService host to the namespace of the Service it routes to', async () => {
    const vs: KubeObject = {
      apiVersion: 'networking.istio.io/v1',
      kind: 'VirtualService',
      metadata: { name: 'profile', namespace: 'istio-ingress', creationTimestamp: CREATED },
      spec: {
        hosts: ['profile.acme.app'],
        http: [{ route: [{ destination: { host: 'profile-svc.payments.svc.cluster.local' } }] }],
      },
    };
    const reader = cluster({ namespaces: [...NAMESPACES, namespace('istio-ingress')], virtualservices: [vs] });
    const error = await locateNamespace('profile.acme.app returning 503', reader, signal()).catch((e) => e);
    // The gateway's namespace and the backend's are both named; neither is in trouble, so the person is asked.
    expect(error).toBeInstanceOf(AmbiguousNamespaceError);
    expect((error as AmbiguousNamespaceError).candidates.map((c) => c.namespace).sort()).toEqual([
      'istio-ingress',
      'payments',
    ]);
    expect(reader.listed.map((q) => q.kind)).toEqual(expect.arrayContaining(['virtualservices', 'httproutes']));
  });

  it('finds the namespace of the workload that runs an image the request names', async () => {
    const d = deployment('reconciler', 'payments');
    d.spec = {
      ...d.spec,
      template: { spec: { containers: [{ name: 'app', image: 'ghcr.io/acme/ledger-sync:2.7.1' }] } },
    };
    const reader = cluster({ namespaces: [...NAMESPACES, namespace('ledger')], deployments: [d] });
    const located = await locateNamespace('pods on the new ledger-sync:2.7.1 image will not start', reader, signal());
    expect(located.namespace).toBe('payments');
    expect(located.why).toContain('runs ghcr.io/acme/ledger-sync:2.7.1');
  });

  it('among namespaces the words fit equally, takes the one whose serving path is broken for an HTTP symptom', async () => {
    const reader = cluster({
      namespaces: TWO,
      deployments: [deployment('checkout', 'shop'), deployment('checkout', 'shop-staging')],
      services: [service('checkout', 'shop'), service('checkout', 'shop-staging')],
      endpoints: [endpoints('checkout', 'shop', false), endpoints('checkout', 'shop-staging', true)],
    });
    const located = await locateNamespace('checkout returns 503', reader, signal());
    expect(located.namespace).toBe('shop');
    expect(located.why).toContain('Service checkout has no ready endpoint');
  });

  it('for "never ran", takes the namespace whose CronJob run failed', async () => {
    const reader = cluster({
      namespaces: TWO,
      cronjobs: [cronJob('export', 'shop'), cronJob('export', 'shop-staging')],
      jobs: [failedJob('export-29551800', 'shop-staging', 'export')],
    });
    const located = await locateNamespace('the nightly export never ran', reader, signal());
    expect(located.namespace).toBe('shop-staging');
    expect(located.why).toContain('Job export-29551800 failed (BackoffLimitExceeded)');
  });

  it('still asks when the evidence cannot separate the candidates', async () => {
    const reader = cluster({
      namespaces: TWO,
      deployments: [deployment('checkout', 'shop'), deployment('checkout', 'shop-staging')],
      pods: [pod('checkout', 'shop', { ready: false }), pod('checkout', 'shop-staging', { ready: false })],
    });
    const error = await locateNamespace('checkout returns 503', reader, signal()).catch((e) => e);
    expect(error).toBeInstanceOf(AmbiguousNamespaceError);
  });

  it('takes the subject of a question about health over a tool the question mentions', async () => {
    const reader = cluster({
      namespaces: [...NAMESPACES, namespace('kyverno')],
      deployments: [deployment('kyverno', 'kyverno'), deployment('kyverno-admission-controller', 'kyverno')],
    });
    const located = await locateNamespace('is shop healthy now after the kyverno hiccup?', reader, signal());
    expect(located.namespace).toBe('shop');
    expect(located.why).toContain('the question asks whether shop is fine');
  });

  it('keeps an "in x" the cluster holds when nothing points elsewhere, and treats one it lacks as a word', async () => {
    const reader = cluster({
      namespaces: TWO,
      deployments: [deployment('label-printer', 'shop'), deployment('label-printer', 'shop-staging')],
    });
    const kept = await locateNamespace('label-printer in shop-staging is slow', reader, signal(), {
      spoken: 'shop-staging',
    });
    expect(kept.namespace).toBe('shop-staging');
    const word = await locateNamespace(
      'checkout errors in grafana',
      cluster({ namespaces: NAMESPACES, deployments: [deployment('checkout', 'shop')] }),
      signal(),
      {
        spoken: 'grafana',
      },
    );
    expect(word.namespace).toBe('shop');
  });

  it('weighs a platform namespace in trouble less than an application in trouble when sweeping', async () => {
    const reader = cluster({
      namespaces: NAMESPACES,
      pods: [pod('coredns', 'kube-system', { ready: false }), pod('picker', 'batch', { ready: false })],
    });
    const located = await locateNamespace('anything wrong in the cluster?', reader, signal());
    expect(located.namespace).toBe('batch');
    expect(located.why).toContain('less in kube-system');
  });
});
