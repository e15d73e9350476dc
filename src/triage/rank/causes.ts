import { clip, EVIDENCE_TEXT_MAX } from '../../limits.js';
import type { AlternativeFix, Impact } from '../envelope/envelope.js';
import type { Finding, ResourceRef } from '../envelope/findings.js';
import { refKey } from '../envelope/findings.js';

/**
 * Cause and impact. Findings that share an object (a pod's owner, the Service a client cannot reach, the claim a pod
 * waits on, the node a pod ran on) describe one incident seen from several places: the best-supported of them is the
 * cause, named by the object a person must change, and the others are what fails because of it. Only causes of
 * comparable weight that share nothing are independent causes; a weak, unrelated finding stays a finding.
 */

export interface Scored {
  finding: Finding;
  score: number;
}

export interface CauseGroup<T extends Scored> {
  lead: T;
  impact: Impact[];
}

/** An independent cause must weigh at least this share of the leading one to be named beside it. */
const INDEPENDENT_CAUSE_RATIO = 0.5;
const MAX_IMPACT = 8;
const CONSTRAINT_RATIO = 0.6;
/** Kinds that run nothing: they constrain, admit, provision or configure what runs. */
const CONSTRAINT_KINDS: ReadonlySet<string> = new Set([
  'LimitRange',
  'ResourceQuota',
  'ClusterResourceQuota',
  'Namespace',
  'NetworkPolicy',
  'RoleBinding',
  'ClusterRoleBinding',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'ExternalSecret',
  'SecretStore',
  'ClusterSecretStore',
  'Issuer',
  'ClusterIssuer',
  'NodePool',
  'IPAddressPool',
  'StorageClass',
  'PodDisruptionBudget',
  'PeerAuthentication',
  'DestinationRule',
  'AuthorizationPolicy',
  'EgressFirewall',
]);
const WORKLOADS: ReadonlySet<string> = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'CronJob', 'Job']);

/** The entity a person changes for a finding. */
const entityOf = (f: Finding): ResourceRef => f.owner ?? f.resource;

/** Every object a finding touches: its resource, its owner and what it points at. */
function touched(f: Finding): string[] {
  return [f.resource, ...(f.owner ? [f.owner] : []), ...f.related].map(refKey);
}

/**
 * Groups scored findings (best first) into incidents, and returns each incident's lead with its casualties, leads
 * best first, keeping only those of comparable weight.
 */
export function groupCauses<T extends Scored>(scored: readonly T[], limit = 5): CauseGroup<T>[] {
  const parent = scored.map((_, i) => i);
  const find = (i: number): number => {
    let r = i;
    while (parent[r] !== r) r = parent[r] as number;
    parent[i] = r;
    return r;
  };
  const byObject = new Map<string, number>();
  scored.forEach((s, i) => {
    for (const key of touched(s.finding)) {
      const seen = byObject.get(key);
      if (seen === undefined) byObject.set(key, i);
      else {
        // The better-scored finding stays the representative: the lead of a group is its best finding.
        const a = find(seen);
        const b = find(i);
        if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
      }
    }
  });
  const groups = new Map<number, { lead: T; members: T[] }>();
  scored.forEach((s, i) => {
    const root = find(i);
    const group = groups.get(root);
    if (group === undefined) groups.set(root, { lead: s, members: [] });
    else group.members.push(s);
  });
  // An object that constrains or serves the others (a LimitRange, a binding, a NodePool, a secret store) leads its
  // incident over the workloads that suffer from it, when the evidence for it is nearly as strong.
  for (const group of groups.values()) {
    const constraint = group.members.find(
      (m) => CONSTRAINT_KINDS.has(entityOf(m.finding).kind) && m.score >= group.lead.score * CONSTRAINT_RATIO,
    );
    if (constraint && !CONSTRAINT_KINDS.has(entityOf(group.lead.finding).kind)) {
      group.members = [group.lead, ...group.members.filter((m) => m !== constraint)];
      group.lead = constraint;
    }
  }
  const ordered = [...groups.values()].sort((a, b) => b.lead.score - a.lead.score);
  const top = ordered[0]?.lead.score ?? 0;
  return ordered
    .filter((g, i) => i === 0 || g.lead.score >= top * INDEPENDENT_CAUSE_RATIO)
    .slice(0, limit)
    .map((g) => ({ lead: g.lead, impact: impactOf(g.lead.finding, g.members) }));
}

/** The casualties of a cause: one entry per affected object other than the cause's own. */
function impactOf(lead: Finding, members: readonly Scored[]): Impact[] {
  const own = new Set([refKey(entityOf(lead)), refKey(lead.resource)]);
  const out: Impact[] = [];
  const seen = new Set<string>();
  // The workloads the cause's own finding shows in, when the cause is elsewhere (the victim of a neighbour's OOM).
  for (const r of lead.related) {
    const key = refKey(r);
    if (!WORKLOADS.has(r.kind) || own.has(key) || seen.has(key)) continue;
    seen.add(key);
    out.push({
      resource: r,
      code: lead.code,
      summary: clip(lead.message, 240),
      evidence: lead.evidence.slice(0, 1).map((e) => clip(e, 240)),
    });
  }
  for (const { finding } of members) {
    const entity = entityOf(finding);
    const key = refKey(entity);
    if (own.has(key) || seen.has(key)) continue;
    seen.add(key);
    out.push({
      resource: entity,
      code: finding.code,
      summary: clip(finding.message, 240),
      evidence: finding.evidence.slice(0, 2).map((e) => clip(e, 240)),
    });
    if (out.length >= MAX_IMPACT) break;
  }
  return out;
}

/** Other places a fault could be fixed, as the analyzer named them. */
export function alternativesOf(f: Finding): AlternativeFix[] {
  return (f.alternatives ?? []).filter((a) => refKey(a.resource) !== refKey(entityOf(f))).slice(0, 3);
}

/**
 * What to change in the entity, in a sentence. The analyzer's own words when it knows the exact change (raise the
 * LimitRange's max to 1Gi); otherwise what a finding of this code asks of that kind of object.
 */
export function changeOf(f: Finding): string {
  if (f.change) return clip(f.change, EVIDENCE_TEXT_MAX);
  const e = entityOf(f);
  const name = `${e.kind} ${e.name}`;
  const rule = CHANGES.find(([pattern]) => pattern.test(f.code));
  return rule ? `${rule[1](name)}` : `${name}: ${clip(f.message, 200)}`;
}

const CHANGES: ReadonlyArray<[RegExp, (name: string) => string]> = [
  [
    /^CONTAINER_CRASHLOOP_CONFIG_ERROR$|^CONTAINER_CONFIG_ERROR$/,
    (n) => `fix the configuration ${n} gives its container (the setting its log or the kubelet names), or roll it back`,
  ],
  [
    /^CONTAINER_CRASHLOOP$/,
    (n) =>
      `fix what makes the container of ${n} exit (its previous log), or roll ${n} back to the last working revision`,
  ],
  [
    /^CONTAINER_LIVENESS_FAILING$/,
    (n) => `correct the liveness probe of ${n} (port, path, delay) or what makes it fail`,
  ],
  [
    /^CONTAINER_OOMKILLED$/,
    (n) => `raise the memory limit of ${n} above what it uses (or lower its heap/cache to fit)`,
  ],
  [/^IMAGE_NOT_FOUND$/, (n) => `point ${n} at an image tag that exists`],
  [/^IMAGE_PULL_UNAUTHORIZED$/, (n) => `give ${n} an imagePullSecret the registry accepts`],
  [
    /^IMAGE_PLATFORM_MISMATCH$/,
    (n) => `build or select an image for the nodes' platform in ${n}, or schedule it onto matching nodes`,
  ],
  [/^IMAGE_PULL_BACKOFF$/, (n) => `make the image of ${n} pullable (registry host, network, credentials)`],
  [/^POD_INSUFFICIENT_(CPU|MEMORY)$/, (n) => `lower the requests of ${n} or add node capacity`],
  [/^POD_UNTOLERATED_TAINT$/, (n) => `add the missing toleration to ${n}, or remove the taint from the nodes`],
  [
    /^POD_(NODE_SELECTOR|AFFINITY)_MISMATCH$/,
    (n) => `correct the nodeSelector/affinity of ${n}, or label nodes to match`,
  ],
  [/^NODE_NOT_READY$/, (n) => `bring ${n} back (kubelet, runtime, network) or drain and replace it`],
  [/^NODE_PRESSURE$/, (n) => `relieve the pressure on ${n} (free disk or memory) or move its heaviest pods`],
  [
    /^PVC_NO_DEFAULT_STORAGECLASS$|^PVC_NO_STORAGECLASS$/,
    (n) => `mark a StorageClass as the default, or set storageClassName (${n})`,
  ],
  [/^PVC_STORAGECLASS_NOT_FOUND$/, (n) => `set storageClassName of ${n} to a class that exists (or create the class)`],
  [/^PVC_PROVISIONER_MISSING$/, (n) => `get the provisioner ${n} running again`],
  [/^PVC_PV_/, (n) => `make ${n} match the claim (size, access modes, labels), or change the claim`],
  [/^PVC_TOPOLOGY_MISMATCH$/, (n) => `allow the zones that have nodes in ${n}`],
  [/^VOLUME_ATTACH_FAILED$/, (n) => `release or reattach ${n} where the pod runs`],
  [
    /^VOLUME_CONFIGMAP_MISSING$|^VOLUME_SECRET_MISSING$/,
    (n) => `create the missing object, or correct the volume reference in ${n}`,
  ],
  [/^VOLUME_PERMISSION_DENIED$/, (n) => `set fsGroup/runAsUser in ${n} so it can write the volume`],
  [/^SERVICE_NO_ENDPOINTS$/, (n) => `make ${n} select ready pods (selector, replicas, readiness)`],
  [
    /^SERVICE_TARGET_PORT_MISMATCH$|^ROUTE_TARGET_PORT_MISMATCH$/,
    (n) => `set the targetPort of ${n} to the port its pods listen on`,
  ],
  [/^ROUTE_/, (n) => `correct the backend of ${n} (Service, port, TLS) so it has ready endpoints`],
  [/^INGRESS_NO_CLASS$|^INGRESS_CLASS_NOT_FOUND$/, (n) => `set an ingressClassName on ${n} that exists`],
  [/^INGRESS_/, (n) => `correct ${n} (class, backend Service, controller) so it gets an address`],
  [/^NETWORK_POLICY_BLOCKS/, (n) => `allow the blocked traffic in ${n} (its podSelector/ingress/egress rules)`],
  [/^DNS_COREDNS/, (n) => `fix the cluster DNS configuration in ${n}`],
  [/^DNS_LOOKUP_FAILURES$|^DEPENDENCY_HOST_NOT_FOUND$/, (n) => `correct the host name ${n} configures`],
  [/^DEPENDENCY_/, (n) => `fix the dependency ${n} relies on`],
  [/^WORKLOAD_QUOTA_EXCEEDED$/, (n) => `raise ${n}, or lower the requests of what it blocks`],
  [/^WORKLOAD_LIMITRANGE_REJECTED$/, (n) => `raise the limits of ${n}, or lower the containers' resources to fit`],
  [/^WORKLOAD_ADMISSION_DENIED$/, (n) => `change ${n} so admission accepts its pods`],
  [/^WORKLOAD_/, (n) => `fix ${n} so its rollout can create ready pods`],
  [/^HPA_AT_MAX_REPLICAS$/, (n) => `raise maxReplicas of ${n}, or make each replica serve more`],
  [/^PDB_BLOCKS_DISRUPTION$/, (n) => `let ${n} allow at least one disruption (minAvailable below the replicas)`],
  [/^JOB_FAILED$/, (n) => `fix what makes ${n} fail and let it run again`],
];
