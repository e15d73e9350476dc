import { describe, expect, it } from 'vitest';
import { resolveEntry } from '../../../src/triage/route/dictionary.js';
import { loadTemplates } from '../../../src/triage/templates/template-registry.js';

/**
 * The entry dictionary's accuracy table: how operators actually phrase requests (typos, word order, chatter, flags,
 * slash commands). `intent: undefined` rows must not guess; `suggest` lists intents that must be offered instead.
 */
interface Row {
  text: string;
  intent: string | undefined;
  namespace: string | undefined;
  suggest?: string[];
}

const ROWS: Row[] = [
  // pvc-binding
  { text: 'Quick triage PVC binding in student03', intent: 'pvc-binding', namespace: 'student03' },
  { text: 'my pvc is stuck pending in payments', intent: 'pvc-binding', namespace: 'payments' },
  { text: 'persistent volume claim not bound -n data', intent: 'pvc-binding', namespace: 'data' },
  { text: 'why is the claim unbound in namespace analytics', intent: 'pvc-binding', namespace: 'analytics' },
  { text: 'pvc bindng issue in student03', intent: 'pvc-binding', namespace: 'student03' },
  { text: 'binding pvc student03 namespace', intent: 'pvc-binding', namespace: 'student03' },
  { text: '/triage storageclass missing for the claim --namespace=ml', intent: 'pvc-binding', namespace: 'ml' },
  {
    text: 'hey team, our postgres PVC has been Pending for an hour in db, any idea?',
    intent: 'pvc-binding',
    namespace: 'db',
  },
  { text: 'no default storage class so the claim waits, ns: lab', intent: 'pvc-binding', namespace: 'lab' },
  // scheduling-failures
  { text: 'pods stuck pending in payments, can you look?', intent: 'scheduling-failures', namespace: 'payments' },
  { text: 'why are pods unschedulable -n batch', intent: 'scheduling-failures', namespace: 'batch' },
  { text: 'insufficient cpu for new pods in analytics', intent: 'scheduling-failures', namespace: 'analytics' },
  { text: 'FailedScheduling events in namespace web', intent: 'scheduling-failures', namespace: 'web' },
  { text: 'pod pending untolerated taint ns: infra', intent: 'scheduling-failures', namespace: 'infra' },
  { text: 'schedulling failures in namespace web', intent: 'scheduling-failures', namespace: 'web' },
  { text: 'nodeselector mismatch, pods wont schedule in ml', intent: 'scheduling-failures', namespace: 'ml' },
  { text: '0/5 nodes are available: insufficient memory -n jobs', intent: 'scheduling-failures', namespace: 'jobs' },
  // ingress-pending
  { text: 'ingress has no address in shop', intent: 'ingress-pending', namespace: 'shop' },
  { text: 'ingress pending -n web', intent: 'ingress-pending', namespace: 'web' },
  {
    text: 'why does my ingress not get an address in namespace storefront',
    intent: 'ingress-pending',
    namespace: 'storefront',
  },
  { text: 'ingres stuck with no address in shop', intent: 'ingress-pending', namespace: 'shop' },
  { text: 'ingressclass missing for my ingress in web', intent: 'ingress-pending', namespace: 'web' },
  { text: 'no load balancer address on the ingress, namespace: edge', intent: 'ingress-pending', namespace: 'edge' },
  // crashloop-analysis
  { text: '-n payments crashloop', intent: 'crashloop-analysis', namespace: 'payments' },
  { text: 'checkout pods keep restarting in shop', intent: 'crashloop-analysis', namespace: 'shop' },
  { text: 'CrashLoopBackOff in namespace orders', intent: 'crashloop-analysis', namespace: 'orders' },
  { text: 'why does my app crash on startup -n api', intent: 'crashloop-analysis', namespace: 'api' },
  { text: 'crashlopbackoff in payments', intent: 'crashloop-analysis', namespace: 'payments' },
  { text: 'liveness probe failing and the container restarts in api', intent: 'crashloop-analysis', namespace: 'api' },
  { text: 'CreateContainerConfigError on deploy in billing', intent: 'crashloop-analysis', namespace: 'billing' },
  { text: 'crash loop back off in orders', intent: 'crashloop-analysis', namespace: 'orders' },
  { text: '/triage -n payments crashloop', intent: 'crashloop-analysis', namespace: 'payments' },
  // route-5xx
  { text: 'checkout returns 503 through the route in shop', intent: 'route-5xx', namespace: 'shop' },
  { text: 'route gives 502 bad gateway -n storefront', intent: 'route-5xx', namespace: 'storefront' },
  { text: 'application is not available on the route in namespace web', intent: 'route-5xx', namespace: 'web' },
  { text: 'getting 5xx from the openshift route in shop', intent: 'route-5xx', namespace: 'shop' },
  { text: '503 service unavailable on route, ns shop', intent: 'route-5xx', namespace: 'shop' },
  { text: 'rotue returns 504 gateway timeout in web', intent: 'route-5xx', namespace: 'web' },
  // image-pull
  { text: 'ImagePullBackOff in payments', intent: 'image-pull', namespace: 'payments' },
  { text: 'pods cannot pull image -n staging', intent: 'image-pull', namespace: 'staging' },
  { text: 'image not found for the new release in namespace web', intent: 'image-pull', namespace: 'web' },
  { text: 'ErrImagePull unauthorized from registry in ci', intent: 'image-pull', namespace: 'ci' },
  { text: 'imagepulbackoff in payments', intent: 'image-pull', namespace: 'payments' },
  { text: 'pull access denied for my image, project: dev', intent: 'image-pull', namespace: 'dev' },
  // oom-killed
  { text: 'OOMKilled pods in analytics', intent: 'oom-killed', namespace: 'analytics' },
  { text: 'my java app keeps getting oom killed -n payments', intent: 'oom-killed', namespace: 'payments' },
  { text: 'containers exit with code 137 in namespace batch', intent: 'oom-killed', namespace: 'batch' },
  { text: 'out of memory kills in reports', intent: 'oom-killed', namespace: 'reports' },
  { text: 'oomkiled in analytics', intent: 'oom-killed', namespace: 'analytics' },
  { text: 'memory limit too low, container killed -n etl', intent: 'oom-killed', namespace: 'etl' },
  // node-not-ready
  { text: 'node not ready', intent: 'node-not-ready', namespace: undefined },
  {
    text: 'a worker node went NotReady and pods were evicted in payments',
    intent: 'node-not-ready',
    namespace: 'payments',
  },
  { text: 'kubelet stopped posting status on a node', intent: 'node-not-ready', namespace: undefined },
  { text: 'nodes down in the cluster', intent: 'node-not-ready', namespace: undefined },
  { text: 'node notredy', intent: 'node-not-ready', namespace: undefined },
  { text: 'disk pressure on worker nodes', intent: 'node-not-ready', namespace: undefined },
  // volume-mount-failures
  {
    text: 'pods stuck in ContainerCreating with FailedMount in data',
    intent: 'volume-mount-failures',
    namespace: 'data',
  },
  { text: 'volume mount failures -n payments', intent: 'volume-mount-failures', namespace: 'payments' },
  {
    text: 'permission denied on the mounted volume in namespace reports',
    intent: 'volume-mount-failures',
    namespace: 'reports',
  },
  { text: 'Multi-Attach error for volume in db', intent: 'volume-mount-failures', namespace: 'db' },
  { text: 'configmap not found when mounting the volume in web', intent: 'volume-mount-failures', namespace: 'web' },
  { text: 'unable to mount volumes, timed out waiting in data', intent: 'volume-mount-failures', namespace: 'data' },
  // dns-failure
  { text: 'dns failure in payments', intent: 'dns-failure', namespace: 'payments' },
  { text: 'pods cannot resolve service names -n shop', intent: 'dns-failure', namespace: 'shop' },
  { text: 'no such host errors in namespace orders', intent: 'dns-failure', namespace: 'orders' },
  { text: 'coredns is down', intent: 'dns-failure', namespace: undefined },
  { text: 'dsn lookups failing in shop', intent: 'dns-failure', namespace: 'shop' },
  { text: 'name resolution broken in api', intent: 'dns-failure', namespace: 'api' },
  // namespace-sweep: a check-up asked for by name
  { text: 'health check in shop', intent: 'namespace-sweep', namespace: 'shop' },
  { text: 'sweep -n payments', intent: 'namespace-sweep', namespace: 'payments' },
  { text: 'run a namespace sweep in orders', intent: 'namespace-sweep', namespace: 'orders' },
  { text: 'general health check -n billing', intent: 'namespace-sweep', namespace: 'billing' },
  { text: 'healthcheck --namespace=ledger', intent: 'namespace-sweep', namespace: 'ledger' },
  // workload-rollout
  { text: 'exceeded quota, pods are not created in team-a', intent: 'workload-rollout', namespace: 'team-a' },
  { text: 'the rollout is stuck, progress deadline exceeded -n api', intent: 'workload-rollout', namespace: 'api' },
  { text: 'hpa is at max replicas in checkout', intent: 'workload-rollout', namespace: 'checkout' },
  { text: 'FailedCreate on the replicaset in shop', intent: 'workload-rollout', namespace: 'shop' },
  { text: 'the nightly cronjob failed in reporting', intent: 'workload-rollout', namespace: 'reporting' },
  // service-connectivity
  { text: 'orders gets connection refused from payments in shop', intent: 'service-connectivity', namespace: 'shop' },
  { text: 'a network policy blocks the database in data', intent: 'service-connectivity', namespace: 'data' },
  { text: 'checkout cannot reach cart -n shop', intent: 'service-connectivity', namespace: 'shop' },
  { text: 'upstream connect error between services in mesh', intent: 'service-connectivity', namespace: 'mesh' },
  { text: 'ECONNREFUSED from the api to redis in cache', intent: 'service-connectivity', namespace: 'cache' },
  // unknown or ambiguous: no guess, nearest intents offered
  {
    text: 'pending',
    intent: undefined,
    namespace: undefined,
    suggest: ['pvc-binding', 'scheduling-failures', 'ingress-pending'],
  },
  { text: 'something is wrong in payments', intent: undefined, namespace: 'payments' },
  { text: 'hello', intent: undefined, namespace: undefined },
  {
    text: 'pods crashing and oomkilled in api',
    intent: undefined,
    namespace: 'api',
    suggest: ['crashloop-analysis', 'oom-killed'],
  },
  {
    text: 'networking problem in shop',
    intent: undefined,
    namespace: 'shop',
    suggest: ['dns-failure', 'ingress-pending', 'route-5xx'],
  },
  {
    text: 'storage issue in data',
    intent: undefined,
    namespace: 'data',
    suggest: ['pvc-binding', 'volume-mount-failures'],
  },
  { text: 'please help, everything is slow', intent: undefined, namespace: undefined },
  { text: 'stuck', intent: undefined, namespace: undefined },
];

const registry = loadTemplates();

function outcome(row: Row) {
  const r = resolveEntry(row.text, registry);
  const ok =
    r.intent === row.intent &&
    r.namespace === row.namespace &&
    (row.suggest ?? []).every((s) => r.suggestions.some((x) => x.intent === s));
  return { r, ok };
}

describe('entry dictionary accuracy table', () => {
  it('covers every intent with several phrasings and holds at least 60 rows', () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(60);
    for (const id of registry.ids()) {
      expect(ROWS.filter((r) => r.intent === id).length, id).toBeGreaterThanOrEqual(5);
    }
  });

  it.each(ROWS)('$text', (row) => {
    const { r } = outcome(row);
    expect({ intent: r.intent, namespace: r.namespace }).toEqual({ intent: row.intent, namespace: row.namespace });
    if (row.intent === undefined) {
      expect(r.triggerMode).toBe('observe');
      for (const s of row.suggest ?? []) expect(r.suggestions.map((x) => x.intent)).toContain(s);
    } else {
      expect(r.triggerMode).not.toBe('observe');
      expect(r.why).toContain(row.intent);
    }
  });

  it('resolves at least 95% of the table and most clear rows in replace mode', () => {
    const results = ROWS.map(outcome);
    const accuracy = results.filter((x) => x.ok).length / ROWS.length;
    expect(accuracy).toBeGreaterThanOrEqual(0.95);
    const clear = results.filter((_, i) => ROWS[i]?.intent !== undefined);
    const replaced = clear.filter((x) => x.r.triggerMode === 'replace').length / clear.length;
    expect(replaced).toBeGreaterThanOrEqual(0.8);
  });
});
