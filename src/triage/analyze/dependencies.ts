import type { KubeObject } from '../../cluster/types.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { type DependencyFailure, parseDependencyFailure, TARGET_PATTERNS } from '../kube/dependency-failures.js';
import { findEvents, isRecent, namesWithReason } from '../kube/events.js';
import { nameList } from '../kube/evidence-list.js';
import { logLineKind } from '../kube/log-verdicts.js';
import { policyTypes } from '../kube/network-policy.js';
import { ownerOf } from '../kube/pod-owners.js';
import { type ContainerView, containers, namespacePods, podRef, ref } from '../kube/pods.js';
import { egressVerdict, ingressVerdict, selectableLabels } from '../kube/policy-verdicts.js';
import { matchesSelector } from '../kube/selectors.js';
import { endpointState } from '../kube/services.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

/**
 * One service's fault shows in another: the client's logs and probe failures say it cannot reach a host. This
 * analyzer follows that host to its Service, the Service's endpoints and pods, and the NetworkPolicies in between,
 * and reports the link so that ranking names what must change (the policy, the Service, the backing workload, the
 * ConfigMap holding a wrong host name) rather than the client where the symptom shows.
 */

const NAME = 'dependencies';
const MAX_CLIENTS = 12;

interface ServiceTarget {
  service?: KubeObject;
  /** Namespace the host names, when it names one. */
  namespace: string;
  name: string;
}

/** `payments`, `payments.shop`, `payments.shop.svc.cluster.local` or a ClusterIP → the Service it means. */
function resolveHost(ctx: AnalyzerContext, host: string, clientNamespace: string): ServiceTarget | undefined {
  const services = ctx.objects('services');
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) {
    const byIp = services.find((s) => s.spec?.clusterIP === host);
    if (byIp) return { service: byIp, namespace: byIp.metadata.namespace ?? clientNamespace, name: byIp.metadata.name };
    const pod = ctx.objects('pods').find((p) => p.status?.podIP === host);
    if (!pod) return undefined;
    const owning = services.find(
      (s) =>
        (s.metadata.namespace ?? clientNamespace) === (pod.metadata.namespace ?? clientNamespace) &&
        s.spec?.selector &&
        matchesSelector({ matchLabels: s.spec.selector }, pod.metadata.labels),
    );
    return owning
      ? { service: owning, namespace: owning.metadata.namespace ?? clientNamespace, name: owning.metadata.name }
      : undefined;
  }
  const labels = host.split('.');
  const inCluster = labels.length <= 2 || labels[2] === 'svc';
  if (!inCluster) return undefined;
  const name = labels[0] as string;
  const namespace = labels.length >= 2 && labels[1] !== 'svc' ? (labels[1] as string) : clientNamespace;
  const service = services.find(
    (s) => s.metadata.name === name && (s.metadata.namespace ?? clientNamespace) === namespace,
  );
  return { ...(service ? { service } : {}), namespace, name };
}

/** Hosts a pod is configured to call: URLs and `host:port` values in its env and the ConfigMaps it reads. */
export function configuredHosts(ctx: AnalyzerContext, pod: KubeObject): Array<{ host: string; port?: number }> {
  const values: string[] = [];
  const namespace = pod.metadata.namespace ?? ctx.namespace;
  const maps = ctx.objects('configmaps').filter((c) => (c.metadata.namespace ?? ctx.namespace) === namespace);
  const mapData = (name: string) =>
    (maps.find((m) => m.metadata.name === name)?.['data'] ?? {}) as Record<string, string>;
  for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])] as Array<{
    env?: Array<{ value?: string; valueFrom?: { configMapKeyRef?: { name?: string; key?: string } } }>;
    envFrom?: Array<{ configMapRef?: { name?: string } }>;
  }>) {
    for (const e of c.env ?? []) {
      if (typeof e.value === 'string') values.push(e.value);
      const ref = e.valueFrom?.configMapKeyRef;
      if (ref?.name && ref.key) values.push(mapData(ref.name)[ref.key] ?? '');
    }
    for (const from of c.envFrom ?? [])
      if (from.configMapRef?.name) values.push(...Object.values(mapData(from.configMapRef.name)));
  }
  const hosts = new Map<string, { host: string; port?: number }>();
  for (const value of values) {
    for (const m of value.matchAll(
      /(?:\/\/|@|^|[\s=,;])([a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.svc(?:\.cluster\.local)?|[a-z0-9][a-z0-9-]*)(?::(\d{2,5}))(?=[/\s,;?]|$)/gi,
    )) {
      const host = (m[1] as string).toLowerCase();
      if (/^\d+$/.test(host)) continue;
      hosts.set(host, { host, ...(m[2] ? { port: Number(m[2]) } : {}) });
    }
  }
  return [...hosts.values()];
}

/** A failure line that names no host ("Connection is not available, request timed out after 30000ms"). */
const HOSTLESS =
  /\b(connection (?:is not available|refused|reset|timed out)|communications link failure|connect timed out|timed out|timeout|could not connect|unable to (?:connect|acquire)|I\/O error)\b/i;

/** The line that says most about a failed connection: a timeout or refusal beats a generic I/O error; later wins ties. */
function telling(current: string | undefined, line: string): string {
  const weight = (l: string) => (/timed out|refused|not available|link failure|unreachable/i.test(l) ? 2 : 1);
  return current === undefined || weight(line) >= weight(current) ? line : current;
}

const UNHEALTHY: readonly string[] = ['Unhealthy'];

/** Room for a quoted line once the pod's name leads it. */
const QUOTE_CHARS = 260;

/**
 * A long log line cut around what decides it: structured logs put the message first and the error (`dial tcp …:
 * connection refused`) far into the line, where clipping the end would cut it off. The head is kept, then a window
 * that starts shortly before the host.
 */
function around(line: string, host: string): string {
  if (line.length <= QUOTE_CHARS) return line;
  const at = line.indexOf(host);
  const head = 110;
  if (at < 0 || at < head) return line;
  const size = QUOTE_CHARS - head;
  const start = Math.max(head, Math.min(at - 50, line.length - size));
  return `${line.slice(0, head)} … ${line.slice(start, start + size)}${start + size < line.length ? '…' : ''}`;
}

/** Lines where a client says it cannot reach something: its logs, and its readiness/liveness probe failures. */
function failuresOf(ctx: AnalyzerContext, pod: KubeObject, probed: ReadonlySet<string>): DependencyFailure[] {
  const out: DependencyFailure[] = [];
  let hostless: string | undefined;
  const views = containers(pod);
  for (let i = 0; i < views.length; i++) {
    const c = views[i] as ContainerView;
    for (let p = 0; p < 2; p++) {
      const text = ctx.log(pod.metadata.name, c.name, p === 0, pod.metadata.namespace);
      if (!text) continue;
      for (const raw of text.split(/\r?\n/).slice(-200)) {
        if (HOSTLESS.test(raw) && !TARGET_PATTERNS.some((p) => p.test(raw))) hostless = telling(hostless, raw.trim());
        const kind = logLineKind(raw);
        // "Connection to db:5432 refused" (JDBC) reads as a plain error line, yet names what it cannot reach.
        if (
          kind !== 'dependency' &&
          kind !== 'dns' &&
          !/\b50[234]\b|unavailable|\brefused\b|unable ?to ?connect|not possible to connect/i.test(raw)
        )
          continue;
        const failure = parseDependencyFailure(raw.trim());
        if (failure) out.push(failure);
        else if (HOSTLESS.test(raw)) hostless = telling(hostless, raw.trim());
      }
    }
  }
  if (out.length === 0 && hostless) {
    // The log says a connection fails but not to what: the pod's own configuration says what it calls.
    for (const target of configuredHosts(ctx, pod)) out.push({ ...target, line: hostless, kind: 'connect' });
  }
  // Most pods have no failing probe: their events are not looked at.
  if (!probed.has(pod.metadata.name)) return out;
  for (const e of findEvents(ctx, { kind: 'Pod', name: pod.metadata.name, reasons: UNHEALTHY })) {
    if (!isRecent(ctx.now, e.last)) continue;
    const failure = parseDependencyFailure(e.message);
    // A probe against the pod's own address is the pod's health, not a dependency.
    if (failure && failure.host !== pod.status?.podIP) out.push(failure);
  }
  return out;
}

/**
 * A ConfigMap in the client's namespace that spells out the host: where a wrong name usually lives. The host must
 * stand as a name of its own: `ledger` is not in `http://ledger-api:8080`.
 */
function configHolding(ctx: AnalyzerContext, host: string, namespace: string): KubeObject | undefined {
  const named = new RegExp(
    `(?:^|[^a-z0-9.-])${host.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![a-z0-9-]|\\.[a-z0-9])`,
    'i',
  );
  return ctx
    .objects('configmaps')
    .filter((c) => (c.metadata.namespace ?? ctx.namespace) === namespace)
    .find((c) =>
      Object.values((c['data'] ?? {}) as Record<string, string>).some((v) => typeof v === 'string' && named.test(v)),
    );
}

export const dependenciesAnalyzer: Analyzer = {
  name: NAME,
  domain: 'networking',
  description:
    'Clients that cannot reach a dependency: follows the host to its Service, endpoints and pods, and the NetworkPolicies between.',
  needs: ['pods', 'services', 'endpoints', 'networkpolicies', 'configmaps', 'events'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    // One finding per client workload and target; the other replicas that fail the same way are named in it.
    const seen = new Map<string, { finding?: FindingInput; pods: string[] }>();
    let clients = 0;
    const pods = namespacePods(ctx);
    const probed = namesWithReason(ctx, 'Pod', 'Unhealthy');
    for (let i = 0; i < pods.length; i++) {
      const pod = pods[i] as KubeObject;
      const failures = failuresOf(ctx, pod, probed);
      if (failures.length === 0) continue;
      if (++clients > MAX_CLIENTS) break;
      const client = ownerOf(ctx, pod) ?? podRef(pod);
      for (const failure of failures) {
        const target = resolveHost(ctx, failure.host, pod.metadata.namespace ?? ctx.namespace);
        if (!target) continue;
        const key = `${client.kind}/${client.name}→${target.namespace}/${target.name}`;
        const known = seen.get(key);
        if (known) {
          if (!known.pods.includes(pod.metadata.name)) known.pods.push(pod.metadata.name);
          continue;
        }
        const finding = explain(ctx, pod, client, failure, target);
        seen.set(key, { ...(finding ? { finding } : {}), pods: [pod.metadata.name] });
        if (finding) findings.push(finding);
      }
    }
    for (const { finding, pods: failing } of seen.values()) {
      if (!finding || failing.length < 2) continue;
      const line = `${failing.length} pods fail the same way: ${nameList(failing)}`;
      finding.evidence = [...finding.evidence.slice(0, 1), line, ...finding.evidence.slice(1)];
    }
    return findings;
  },
};

/** One failing call from a client pod to a Service, and what every finding about it starts from. */
interface Call {
  pod: KubeObject;
  client: ResourceRef;
  failure: DependencyFailure;
  target: ServiceTarget;
  serviceRef: ResourceRef;
  base: { analyzer: string; domain: 'networking'; resource: ResourceRef; evidence: string[] };
}

/** The host names a Service that does not exist (or sits in a namespace that was not read). */
function missingService(ctx: AnalyzerContext, call: Call): FindingInput {
  const { pod, client, failure, target, serviceRef, base } = call;
  const read = ctx.objects('services').some((s) => (s.metadata.namespace ?? ctx.namespace) === target.namespace);
  if (!read) {
    // The host lives in a namespace that was not read: name the link; the engine may read it next.
    return {
      ...base,
      code: 'DEPENDENCY_UNREACHABLE',
      severity: 'medium',
      owner: client,
      message: `${client.kind} ${client.name} cannot reach ${failure.host}${failure.port ? `:${failure.port}` : ''} (Service ${target.name} in namespace ${target.namespace}).`,
      confidence: 0.55,
      related: [serviceRef],
      remediation: [],
    };
  }
  const config = configHolding(ctx, failure.host, pod.metadata.namespace ?? ctx.namespace);
  const fix = config ? ref('ConfigMap', config.metadata.name, config.metadata.namespace ?? ctx.namespace) : client;
  return {
    ...base,
    code: 'DEPENDENCY_HOST_NOT_FOUND',
    severity: 'high',
    owner: fix,
    message: `${client.kind} ${client.name} calls ${failure.host}, but no Service ${target.name} exists in namespace ${target.namespace}${config ? `; the host name comes from ConfigMap ${config.metadata.name}` : ''}.`,
    evidence: [
      ...base.evidence,
      `Services in ${target.namespace}: ${ctx
        .objects('services')
        .filter((s) => (s.metadata.namespace ?? ctx.namespace) === target.namespace)
        .map((s) => s.metadata.name)
        .slice(0, 12)
        .join(', ')}`,
    ],
    confidence: 0.8,
    related: config ? [client] : [],
    remediation: ['fix-dependency-host'],
  };
}

/** The Service exists, yet its name does not resolve: a NetworkPolicy that leaves the client no way to DNS. */
function dnsBlocked(ctx: AnalyzerContext, call: Call): FindingInput | undefined {
  const { pod, client, base } = call;
  const dns = egressVerdict(ctx, pod, undefined, 53);
  if (!dns.allowed) {
    const policy = dns.policies[0] as KubeObject;
    return {
      ...base,
      code: 'NETWORK_POLICY_BLOCKS_DNS',
      severity: 'high',
      resource: ref('NetworkPolicy', policy.metadata.name, policy.metadata.namespace ?? ctx.namespace),
      message: `NetworkPolicy ${policy.metadata.name} allows ${client.kind} ${client.name} no egress to cluster DNS (port 53), so every name lookup fails.`,
      evidence: [
        ...base.evidence,
        `NetworkPolicy ${policy.metadata.name}: policyTypes ${policyTypes(policy).join(',')}, egress ${JSON.stringify(policy.spec?.egress ?? [])}`.slice(
          0,
          280,
        ),
      ],
      confidence: 0.85,
      related: [client],
      remediation: ['fix-network-policy'],
    };
  }
  return undefined;
}

/** A NetworkPolicy on the Service's pods that admits no traffic from the client. */
function ingressBlocked(
  call: Call,
  svc: KubeObject,
  blockedIn: ReturnType<typeof ingressVerdict>,
  owners: readonly ResourceRef[],
  backing: readonly KubeObject[],
): FindingInput {
  const { pod, client, failure, target, serviceRef, base } = call;
  const port = failure.port;
  // A deny-all is deliberate; a policy with rules meant to admit someone is where the client was left out.
  const policy = (blockedIn.policies.find((p) => ((p.spec?.ingress ?? []) as unknown[]).length > 0) ??
    blockedIn.policies[0]) as KubeObject;
  const others = blockedIn.policies.filter((p) => p !== policy);
  return {
    ...base,
    code: 'NETWORK_POLICY_BLOCKS',
    severity: 'high',
    resource: ref('NetworkPolicy', policy.metadata.name, policy.metadata.namespace ?? target.namespace),
    message: `NetworkPolicy ${policy.metadata.name} in ${policy.metadata.namespace ?? target.namespace} admits no traffic from ${client.kind} ${client.name} (namespace ${pod.metadata.namespace}) to Service ${target.name}'s pods, so its connections ${failure.kind === 'connect' ? 'time out or are refused' : 'fail'}.`,
    evidence: [
      ...base.evidence,
      ...[policy, ...others]
        .slice(0, 2)
        .map((p) =>
          `NetworkPolicy ${p.metadata.name}: podSelector ${JSON.stringify(p.spec?.podSelector ?? {})}, ingress ${JSON.stringify(p.spec?.ingress ?? [])}`.slice(
            0,
            280,
          ),
        ),
      `pods behind Service ${target.name} that the policies isolate: ${nameList(backing.map((p) => p.metadata.name))}`,
    ],
    confidence: 0.85,
    related: [serviceRef, client, ...owners],
    remediation: ['fix-network-policy'],
    change: `let NetworkPolicy ${policy.metadata.name} admit the pods of ${client.kind} ${client.name} (labels ${labelsLine(pod)}${pod.metadata.namespace !== (policy.metadata.namespace ?? target.namespace) ? `, namespace ${pod.metadata.namespace}` : ''})${port ? ` on port ${targetPort(svc, port) ?? port}` : ''}`,
    ...(others.length > 0
      ? {
          alternatives: others.slice(0, 2).map((p) => ({
            resource: ref('NetworkPolicy', p.metadata.name, p.metadata.namespace ?? target.namespace),
            change: `add an ingress rule for ${client.kind} ${client.name} to NetworkPolicy ${p.metadata.name}`,
          })),
        }
      : {}),
  };
}

function explain(
  ctx: AnalyzerContext,
  pod: KubeObject,
  client: ResourceRef,
  failure: DependencyFailure,
  target: ServiceTarget,
): FindingInput | undefined {
  const base = {
    analyzer: NAME,
    domain: 'networking' as const,
    resource: podRef(pod),
    evidence: [`${pod.metadata.name}: ${around(failure.line, failure.host)}`],
  };
  const serviceRef = ref('Service', target.name, target.namespace);
  const call: Call = { pod, client, failure, target, serviceRef, base };
  const svc = target.service;
  if (!svc) return missingService(ctx, call);
  if (failure.kind === 'dns') {
    // The Service exists, yet its name does not resolve: name resolution itself is failing for this client.
    const blocked = dnsBlocked(ctx, call);
    if (blocked) return blocked;
  }
  const backing = backingPods(ctx, svc);
  const owners = [
    ...new Map(backing.map((p) => ownerOf(ctx, p) ?? podRef(p)).map((r) => [`${r.kind}/${r.name}`, r])).values(),
  ];
  const state = endpointState(ctx, svc);
  if (state.known && state.ready === 0) {
    return {
      ...base,
      code: 'DEPENDENCY_UNAVAILABLE',
      severity: 'medium',
      owner: client,
      message: `${client.kind} ${client.name} fails because Service ${target.name} has no ready endpoints${owners.length > 0 ? ` (its pods belong to ${owners.map((o) => `${o.kind} ${o.name}`).join(', ')})` : ': its selector matches no pod'}.`,
      confidence: 0.6,
      related: [serviceRef, ...owners],
      remediation: [],
    };
  }
  const port = failure.port;
  const blockedIn =
    backing.length > 0 ? ingressVerdict(ctx, backing[0] as KubeObject, pod, targetPort(svc, port)) : undefined;
  if (blockedIn && !blockedIn.allowed) return ingressBlocked(call, svc, blockedIn, owners, backing);
  // Without a backing pod there is no peer to judge the client's egress against (`undefined` means DNS there).
  const blockedOut = backing[0] ? egressVerdict(ctx, pod, backing[0], targetPort(svc, port)) : undefined;
  if (blockedOut && !blockedOut.allowed) {
    const policy = blockedOut.policies[0] as KubeObject;
    return {
      ...base,
      code: 'NETWORK_POLICY_BLOCKS',
      severity: 'high',
      resource: ref('NetworkPolicy', policy.metadata.name, policy.metadata.namespace ?? ctx.namespace),
      message: `NetworkPolicy ${policy.metadata.name} lets ${client.kind} ${client.name} send nothing to Service ${target.name}'s pods.`,
      confidence: 0.8,
      related: [serviceRef, client],
      remediation: ['fix-network-policy'],
    };
  }
  return {
    ...base,
    code: 'DEPENDENCY_ERRORS',
    severity: 'low',
    owner: client,
    message: `${client.kind} ${client.name} reports errors reaching Service ${target.name}${owners.length > 0 ? ` (${owners.map((o) => `${o.kind} ${o.name}`).join(', ')})` : ''}.`,
    confidence: 0.5,
    related: [serviceRef, ...owners],
    remediation: [],
  };
}

function labelsLine(pod: KubeObject): string {
  return selectableLabels(pod) || 'none';
}

/** The running pods a Service selects, in the Service's own namespace (which need not be the analysed one). */
function backingPods(ctx: AnalyzerContext, svc: KubeObject): KubeObject[] {
  const selector = svc.spec?.selector as Record<string, string> | undefined;
  if (!selector || Object.keys(selector).length === 0) return [];
  const namespace = svc.metadata.namespace ?? ctx.namespace;
  return ctx
    .objects('pods')
    .filter(
      (p) =>
        (p.metadata.namespace ?? ctx.namespace) === namespace &&
        matchesSelector({ matchLabels: selector }, p.metadata.labels) &&
        p.status?.phase !== 'Failed' &&
        p.status?.phase !== 'Succeeded',
    );
}

function targetPort(svc: KubeObject, port: number | undefined): number | undefined {
  const ports = (svc.spec?.ports ?? []) as Array<{ port?: number; targetPort?: number | string }>;
  const match = ports.find((p) => p.port === port) ?? (ports.length === 1 ? ports[0] : undefined);
  return typeof match?.targetPort === 'number' ? match.targetPort : (match?.port ?? port);
}
