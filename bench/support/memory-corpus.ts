import { localClientOptions, startLocalDynamo } from '../../local/dynamodb/index.js';
import { createDocumentClient, createDynamoClient } from '../../src/store/client.js';
import { ensureTable } from '../../src/store/create-table.js';
import type { NewIncident } from '../../src/store/memory.js';
import type { FingerprintSource } from '../../src/store/memory-fingerprint.js';
import { fingerprintEnvelope } from '../../src/store/memory-fingerprint.js';
import type { Domain } from '../../src/triage/envelope/index.js';
import { prng } from './prng.js';

/** dynalite in memory with the calmops table, and a document client for it. */
export async function startMemoryTable(tableName = 'calmops-memory-test', start: { worker?: boolean } = {}) {
  const dynamo = await startLocalDynamo(start.worker ? { worker: true } : {});
  const options = localClientOptions(dynamo.endpoint);
  await ensureTable(createDynamoClient(options), tableName);
  const client = createDocumentClient(options);
  return {
    client,
    tableName,
    endpoint: dynamo.endpoint,
    async close() {
      client.destroy();
      await dynamo.close();
    },
  };
}

interface Family {
  id: string;
  intent: string;
  domain: Domain;
  primary: string;
  /** The code that identifies the family; also its confirmed root cause. */
  cause: string;
  extra?: string[];
  /** Texts that carry the family's key reasons (provisioner, taint, registry, exit code, …). */
  reasons: string[];
  resolution: string;
}

const INTENTS: Record<string, { domain: Domain; kinds: [string, string]; noise: string[] }> = {
  'pvc-binding': {
    domain: 'storage',
    kinds: ['PersistentVolumeClaim', 'Pod'],
    noise: ['POD_PENDING', 'DEPLOYMENT_UNAVAILABLE'],
  },
  'scheduling-failures': { domain: 'compute', kinds: ['Pod', 'Node'], noise: ['POD_PENDING', 'REPLICAS_UNAVAILABLE'] },
  'ingress-pending': {
    domain: 'networking',
    kinds: ['Ingress', 'Service'],
    noise: ['EVENTS_WARNING', 'ENDPOINTS_PARTIAL'],
  },
  'crashloop-analysis': {
    domain: 'compute',
    kinds: ['Pod', 'Deployment'],
    noise: ['RESTARTS_HIGH', 'REPLICAS_UNAVAILABLE'],
  },
  'route-5xx': { domain: 'networking', kinds: ['Route', 'Service'], noise: ['ENDPOINTS_PARTIAL', 'EVENTS_WARNING'] },
  'image-pull': { domain: 'compute', kinds: ['Pod', 'Deployment'], noise: ['POD_PENDING', 'REPLICAS_UNAVAILABLE'] },
  'oom-killed': { domain: 'compute', kinds: ['Pod', 'Node'], noise: ['RESTARTS_HIGH', 'EVENTS_WARNING'] },
  'node-not-ready': { domain: 'compute', kinds: ['Node', 'Pod'], noise: ['PODS_TERMINATING', 'EVENTS_WARNING'] },
  'volume-mount-failures': {
    domain: 'storage',
    kinds: ['Pod', 'PersistentVolumeClaim'],
    noise: ['POD_PENDING', 'EVENTS_WARNING'],
  },
  'dns-failure': { domain: 'networking', kinds: ['Pod', 'Service'], noise: ['RESTARTS_HIGH', 'EVENTS_WARNING'] },
};

const f = (
  intent: string,
  id: string,
  primary: string,
  cause: string,
  reasons: string[],
  resolution: string,
  extra?: string[],
): Family => ({
  id: `${intent}/${id}`,
  intent,
  domain: (INTENTS[intent] as { domain: Domain }).domain,
  primary,
  cause,
  extra,
  reasons,
  resolution,
});

export const FAMILIES: readonly Family[] = [
  f(
    'pvc-binding',
    'sc-missing',
    'PVC_PENDING',
    'STORAGECLASS_NOT_FOUND',
    ['ProvisioningFailed: storageclass.storage.k8s.io "fast" not found'],
    'kubectl apply -f storageclass.yaml',
  ),
  f(
    'pvc-binding',
    'ebs',
    'PVC_PENDING',
    'PROVISIONING_FAILED',
    ['ProvisioningFailed: provisioner ebs.csi.aws.com: context deadline exceeded'],
    'kubectl rollout restart deploy/ebs-csi-controller -n kube-system',
  ),
  f(
    'pvc-binding',
    'ceph',
    'PVC_PENDING',
    'PROVISIONING_FAILED',
    ['ProvisioningFailed: provisioner rbd.csi.ceph.com: connection refused'],
    'ceph health detail; restart the rbd provisioner',
  ),
  f(
    'pvc-binding',
    'wffc',
    'PVC_PENDING',
    'PVC_WAIT_FOR_CONSUMER',
    ['waiting for first consumer to be created before binding'],
    'schedule the consuming pod',
  ),
  f(
    'pvc-binding',
    'quota',
    'PVC_PENDING',
    'STORAGE_QUOTA_EXCEEDED',
    ['forbidden: exceeded quota: storage'],
    'raise the storage quota',
  ),
  f(
    'scheduling-failures',
    'cpu',
    'POD_UNSCHEDULABLE',
    'INSUFFICIENT_RESOURCES',
    ['FailedScheduling: 0/5 nodes are available: 5 Insufficient cpu'],
    'lower cpu requests or add nodes',
  ),
  f(
    'scheduling-failures',
    'memory',
    'POD_UNSCHEDULABLE',
    'INSUFFICIENT_RESOURCES',
    ['FailedScheduling: 0/5 nodes are available: 5 Insufficient memory'],
    'lower memory requests or add nodes',
  ),
  f(
    'scheduling-failures',
    'disk-taint',
    'POD_UNSCHEDULABLE',
    'UNTOLERATED_TAINT',
    ['FailedScheduling: 3 node(s) had untolerated taint {node.kubernetes.io/disk-pressure: }'],
    'free disk on the nodes',
  ),
  f(
    'scheduling-failures',
    'dedicated-taint',
    'POD_UNSCHEDULABLE',
    'UNTOLERATED_TAINT',
    ['FailedScheduling: 3 node(s) had untolerated taint {dedicated: infra}'],
    'add the toleration for dedicated=infra',
  ),
  f(
    'scheduling-failures',
    'affinity',
    'POD_UNSCHEDULABLE',
    'NODE_AFFINITY_MISMATCH',
    ["FailedScheduling: 4 node(s) didn't match Pod's node affinity/selector"],
    'fix the nodeSelector',
  ),
  f(
    'ingress-pending',
    'no-class',
    'INGRESS_NO_ADDRESS',
    'INGRESS_CLASS_MISSING',
    ['ingressClassName nginx has no controller'],
    'install the nginx ingress controller',
  ),
  f(
    'ingress-pending',
    'alb-down',
    'INGRESS_NO_ADDRESS',
    'INGRESS_CONTROLLER_DOWN',
    ['ingressClassName alb controller is crash looping: CrashLoopBackOff'],
    'restart the aws-load-balancer-controller',
  ),
  f(
    'ingress-pending',
    'backend',
    'INGRESS_NO_ADDRESS',
    'INGRESS_BACKEND_MISSING',
    ['service "web" not found'],
    'create the backend service',
    ['SERVICE_NOT_FOUND'],
  ),
  f(
    'ingress-pending',
    'tls',
    'INGRESS_NO_ADDRESS',
    'INGRESS_TLS_INVALID',
    ['x509: certificate has expired'],
    'renew the TLS secret',
  ),
  f(
    'ingress-pending',
    'lb-quota',
    'INGRESS_NO_ADDRESS',
    'LOADBALANCER_PENDING',
    ['forbidden: exceeded quota: services.loadbalancers'],
    'raise the load balancer quota',
  ),
  f(
    'crashloop-analysis',
    'config',
    'CRASH_LOOP',
    'CONFIG_MISSING',
    ['CreateContainerConfigError: configmap "app-config" not found'],
    'create the missing configmap',
  ),
  f(
    'crashloop-analysis',
    'db-refused',
    'CRASH_LOOP',
    'DEPENDENCY_UNREACHABLE',
    ['dial tcp 10.0.0.5:5432: connect: connection refused', 'exit code 1'],
    'bring the database back',
  ),
  f(
    'crashloop-analysis',
    'probe',
    'CRASH_LOOP',
    'LIVENESS_PROBE_FAILING',
    ['Liveness probe failed: HTTP probe failed', 'exit code 137'],
    'raise the probe initialDelaySeconds',
  ),
  f(
    'crashloop-analysis',
    'panic',
    'CRASH_LOOP',
    'APP_ERROR_EXIT',
    ['panic: runtime error: index out of range', 'exit code 2'],
    'roll back to the previous image',
  ),
  f(
    'crashloop-analysis',
    'perm',
    'CRASH_LOOP',
    'PERMISSION_DENIED',
    ['permission denied opening /data', 'exit code 126'],
    'fix the securityContext fsGroup',
  ),
  f(
    'route-5xx',
    'no-endpoints',
    'ROUTE_5XX',
    'SERVICE_NO_ENDPOINTS',
    ['no endpoints available for service', 'HTTP 503'],
    'fix the failing pods behind the service',
  ),
  f(
    'route-5xx',
    'timeout',
    'ROUTE_5XX',
    'ROUTE_TIMEOUT',
    ['i/o timeout', 'HTTP 504'],
    'raise haproxy.router.openshift.io/timeout',
  ),
  f(
    'route-5xx',
    'bad-gateway',
    'ROUTE_5XX',
    'BACKEND_CRASHING',
    ['connection refused', 'HTTP 502'],
    'fix the crashing backend',
  ),
  f(
    'route-5xx',
    'tls',
    'ROUTE_5XX',
    'ROUTE_TLS_MISMATCH',
    ['x509: certificate signed by unknown authority', 'HTTP 503'],
    'fix the route destinationCACertificate',
  ),
  f(
    'route-5xx',
    'selector',
    'ROUTE_5XX',
    'SERVICE_SELECTOR_MISMATCH',
    ['service selector app=web matches 0 pods', 'HTTP 503'],
    'fix the service selector',
    ['SERVICE_NO_ENDPOINTS'],
  ),
  f(
    'image-pull',
    'manifest',
    'IMAGE_PULL_BACKOFF',
    'IMAGE_NOT_FOUND',
    ['ImagePullBackOff: image "quay.io/acme/api:9.9" manifest unknown'],
    'fix the image tag',
  ),
  f(
    'image-pull',
    'auth',
    'IMAGE_PULL_BACKOFF',
    'REGISTRY_AUTH_FAILED',
    ['ErrImagePull: image "docker.io/acme/api:1" pull access denied'],
    'fix the imagePullSecret',
  ),
  f(
    'image-pull',
    'ratelimit',
    'IMAGE_PULL_BACKOFF',
    'REGISTRY_RATE_LIMITED',
    ['ErrImagePull: image "docker.io/library/nginx:1" toomanyrequests: too many requests'],
    'use a pull-through cache',
  ),
  f(
    'image-pull',
    'tls',
    'IMAGE_PULL_BACKOFF',
    'REGISTRY_TLS_ERROR',
    ['ErrImagePull: image "registry.internal:5000/api:1" x509: certificate signed by unknown authority'],
    'trust the registry CA',
  ),
  f(
    'image-pull',
    'dns',
    'IMAGE_PULL_BACKOFF',
    'REGISTRY_UNREACHABLE',
    ['ErrImagePull: image "ghcr.io/acme/api:1" no such host'],
    'fix node DNS',
  ),
  f(
    'oom-killed',
    'limit',
    'OOM_KILLED',
    'MEMORY_LIMIT_LOW',
    ['OOMKilled', 'exit code 137', 'limit 128Mi'],
    'raise the memory limit',
  ),
  f(
    'oom-killed',
    'leak',
    'OOM_KILLED',
    'MEMORY_GROWTH',
    ['OOMKilled', 'exit code 137', 'memory grows steadily'],
    'roll back the leaking release',
  ),
  f(
    'oom-killed',
    'pressure',
    'POD_EVICTED',
    'NODE_MEMORY_PRESSURE',
    ['Evicted: The node was low on resource: memory', 'MemoryPressure'],
    'move workloads off the node',
  ),
  f(
    'oom-killed',
    'jvm',
    'OOM_KILLED',
    'JVM_HEAP_EXCEEDS_LIMIT',
    ['OOMKilled', 'exit code 137', '-Xmx exceeds container limit'],
    'set -XX:MaxRAMPercentage',
  ),
  f(
    'oom-killed',
    'limitrange',
    'OOM_KILLED',
    'LIMITRANGE_DEFAULT',
    ['OOMKilled', 'exit code 137', 'default limit from LimitRange'],
    'set explicit limits',
  ),
  f(
    'node-not-ready',
    'kubelet',
    'NODE_NOT_READY',
    'KUBELET_STOPPED',
    ['NodeNotReady: Kubelet stopped posting node status'],
    'restart kubelet',
  ),
  f(
    'node-not-ready',
    'disk',
    'NODE_NOT_READY',
    'NODE_DISK_PRESSURE',
    ['DiskPressure', 'no space left on device'],
    'clean images on the node',
  ),
  f(
    'node-not-ready',
    'network',
    'NODE_NOT_READY',
    'NODE_NETWORK_UNAVAILABLE',
    ['NetworkUnavailable: CNI not initialized'],
    'restart the CNI daemonset',
  ),
  f(
    'node-not-ready',
    'pleg',
    'NODE_NOT_READY',
    'PLEG_UNHEALTHY',
    ['PLEG is not healthy: pleg was last seen active 5m ago'],
    'restart the container runtime',
  ),
  f(
    'node-not-ready',
    'cert',
    'NODE_NOT_READY',
    'KUBELET_CERT_EXPIRED',
    ['x509: certificate has expired'],
    'approve the kubelet CSRs',
  ),
  f(
    'volume-mount-failures',
    'multi',
    'VOLUME_MOUNT_FAILED',
    'MULTI_ATTACH',
    ['FailedAttachVolume: Multi-Attach error for volume'],
    'delete the stale VolumeAttachment',
  ),
  f(
    'volume-mount-failures',
    'zone',
    'VOLUME_MOUNT_FAILED',
    'VOLUME_NODE_AFFINITY',
    ['1 node(s) had volume node affinity conflict'],
    'schedule in the volume zone',
  ),
  f(
    'volume-mount-failures',
    'cm',
    'VOLUME_MOUNT_FAILED',
    'CONFIGMAP_NOT_FOUND',
    ['FailedMount: configmap "settings" not found'],
    'create the configmap',
  ),
  f(
    'volume-mount-failures',
    'csi',
    'VOLUME_MOUNT_FAILED',
    'CSI_DRIVER_MISSING',
    [
      'FailedMount: driver name ebs.csi.aws.com not found in the list of registered CSI drivers',
      'provisioner ebs.csi.aws.com',
    ],
    'install the CSI node plugin',
  ),
  f(
    'volume-mount-failures',
    'perm',
    'VOLUME_MOUNT_FAILED',
    'FS_PERMISSION',
    ['FailedMount: permission denied', 'exit code 1'],
    'set fsGroup',
  ),
  f(
    'dns-failure',
    'nxdomain',
    'DNS_RESOLUTION_FAILED',
    'DNS_NXDOMAIN',
    ['NXDOMAIN for db.prod.svc'],
    'fix the service name',
  ),
  f(
    'dns-failure',
    'coredns',
    'DNS_RESOLUTION_FAILED',
    'COREDNS_UNAVAILABLE',
    ['read udp: i/o timeout', 'CrashLoopBackOff'],
    'restart coredns',
  ),
  f(
    'dns-failure',
    'servfail',
    'DNS_RESOLUTION_FAILED',
    'DNS_UPSTREAM_FAILED',
    ['SERVFAIL from upstream resolver'],
    'fix the upstream forwarders',
  ),
  f(
    'dns-failure',
    'netpol',
    'DNS_RESOLUTION_FAILED',
    'NETWORK_POLICY_BLOCKS_DNS',
    ['read udp 10.0.0.3:53: i/o timeout', 'connection refused'],
    'allow egress to kube-dns',
  ),
  f(
    'dns-failure',
    'ndots',
    'DNS_RESOLUTION_FAILED',
    'DNS_SEARCH_MISCONFIG',
    ['lookup api: no such host'],
    'fix dnsConfig ndots',
  ),
];

/**
 * One incident of a family with realistic variation: names and namespaces differ, the identifying code is missing
 * now and then, reasons are sometimes not captured, unrelated noise findings show up, and the triage ranking does
 * not always put the real cause first.
 */
export function variant(family: Family, random: () => number, n: number): FingerprintSource & { namespace: string } {
  const meta = INTENTS[family.intent] as (typeof INTENTS)[string];
  const ns = `team-${Math.floor(random() * 40)}`;
  const name = `app-${n}-${Math.floor(random() * 1e6).toString(36)}`;
  const keep = (p: number) => random() < p;
  const reasons = family.reasons.filter(() => keep(0.85));
  const findings = [
    {
      code: family.primary,
      message: `${family.primary} on ${name}`,
      evidence: reasons.slice(0, 1),
      resource: { kind: meta.kinds[0], name, namespace: ns },
    },
  ];
  if (keep(0.8)) {
    findings.push({
      code: family.cause,
      message: `${family.cause} for ${name}`,
      evidence: reasons.slice(1),
      resource: { kind: meta.kinds[1], name: `${name}-x`, namespace: ns },
    });
  } else if (reasons.length > 1) {
    (findings[0] as { evidence: string[] }).evidence = reasons;
  }
  for (const code of family.extra ?? [])
    if (keep(0.7))
      findings.push({ code, message: code, evidence: [], resource: { kind: meta.kinds[1], name, namespace: ns } });
  for (const code of meta.noise)
    if (keep(0.35))
      findings.push({ code, message: code, evidence: [], resource: { kind: meta.kinds[0], name, namespace: ns } });
  const ranked = keep(0.7) ? family.cause : family.primary;
  return {
    namespace: ns,
    routing: { intent: family.intent, domain: family.domain },
    findings,
    rootCause: [{ code: ranked }],
  };
}

function incidentFor(family: Family, random: () => number, n: number, resolvedAt: Date): NewIncident {
  const source = variant(family, random, n);
  return {
    title: `${family.id} #${n}`,
    namespace: source.namespace,
    fingerprint: fingerprintEnvelope(source, { confirmedRootCauseCode: family.cause }),
    symptoms: source.findings.map((x) => `${x.code}: ${x.message}`),
    rootCause: { code: family.cause, summary: family.id },
    resolutionSteps: [{ command: family.resolution, description: `resolution for ${family.id}` }],
    resolvedBy: `U${Math.floor(random() * 90) + 10}`,
    resolvedAt: resolvedAt.toISOString(),
    timeToResolveMs: Math.floor(random() * 3_600_000),
  };
}

/** `perFamily` incidents of every family, resolved over the last months. */
export function corpus(perFamily: number, seed = 42): NewIncident[] {
  const random = prng(seed);
  const start = Date.parse('2025-01-01T00:00:00.000Z');
  const out: NewIncident[] = [];
  let n = 0;
  for (let i = 0; i < perFamily; i++) {
    for (const family of FAMILIES) {
      out.push(incidentFor(family, random, n, new Date(start + n * 60_000)));
      n++;
    }
  }
  return out;
}
