import type { KubeObject } from '../cluster/types.js';
import { clipLine } from '../limits.js';
import { matchesMap, matchesSelector, parseDependencyFailure } from '../triage/kube/index.js';
import { isReady, names, onlyCheck, plural, refOf, withCheck, workloadOf } from './objects.js';
import type { SpecialistAnalyzer, SpecialistContext, SpecialistFinding } from './types.js';

/**
 * The network and platform specialist: what the unready pods' own logs say they cannot reach, both directions of
 * every NetworkPolicy, DNS, the router's or ingress controller's logs, and the endpoints of every Service port.
 */

const MAX_UNREADY = 4;

async function pods(ctx: SpecialistContext): Promise<KubeObject[]> {
  return ctx.reads.list({ kind: 'pods', namespace: ctx.namespace, maxItems: 200 });
}

/** The word a log line uses for what it depends on ("database check failed" → database). */
function dependencyWord(line: string): string | undefined {
  return /\b(database|db|postgres(?:ql)?|mysql|mariadb|redis|kafka|rabbitmq|amqp|mongo(?:db)?|elasticsearch|broker|cache|upstream|backend)\b/i
    .exec(line)?.[1]
    ?.toLowerCase();
}

export const unreadyPodLogs: SpecialistAnalyzer = {
  id: 'unready-pod-logs',
  domains: ['networking', 'platform', 'compute'],
  async run(ctx) {
    const unready = (await pods(ctx)).filter((p) => p.status?.phase === 'Running' && !isReady(p));
    if (unready.length === 0) {
      return onlyCheck(this.id, 'application logs of unready pods', 'ruled-out', 'every running pod is Ready');
    }
    const failures = new Map<
      string,
      { host: string; port?: number; lines: string[]; pods: KubeObject[]; word?: string }
    >();
    const quiet: string[] = [];
    for (const pod of unready.slice(0, MAX_UNREADY)) {
      const container = ((pod.spec?.containers ?? []) as Array<{ name: string }>)[0]?.name;
      const text = await ctx.reads.logs({
        namespace: ctx.namespace,
        pod: pod.metadata.name,
        ...(container ? { container } : {}),
        tailLines: 100,
      });
      const found = text
        .split(/\r?\n/)
        .map((line) => parseDependencyFailure(line))
        .filter((f): f is NonNullable<typeof f> => f !== undefined);
      if (found.length === 0) {
        quiet.push(pod.metadata.name);
        continue;
      }
      for (const f of found) {
        const key = `${f.host}:${f.port ?? ''}`;
        const entry = failures.get(key) ?? { host: f.host, ...(f.port ? { port: f.port } : {}), lines: [], pods: [] };
        entry.lines.push(f.line);
        if (!entry.pods.includes(pod)) entry.pods.push(pod);
        const word = dependencyWord(f.line);
        if (word) entry.word = word;
        failures.set(key, entry);
      }
    }
    const findings: SpecialistFinding[] = [];
    const services = failures.size > 0 ? await ctx.reads.list({ kind: 'services', maxItems: 1000 }) : [];
    for (const f of failures.values()) {
      const target = `${f.host}${f.port ? `:${f.port}` : ''}`;
      const service = services.find(
        (s) =>
          s.spec?.clusterIP === f.host ||
          (s.metadata.name === f.host.split('.')[0] &&
            (f.host.split('.')[1] ?? s.metadata.namespace) === s.metadata.namespace),
      );
      const what = f.word ? `its ${f.word} at ${target}` : target;
      const where = service
        ? `Service ${service.metadata.namespace}/${service.metadata.name}`
        : /^\d+\.\d+\.\d+\.\d+$/.test(f.host)
          ? 'no Service in the cluster has that address, so what answers there is outside the cluster or gone'
          : 'no Service in the cluster has that name';
      const workload = f.pods[0] ? workloadOf(f.pods[0]) : undefined;
      const how = /refused/i.test(f.lines[0] ?? '')
        ? 'connection refused'
        : /no such host|lookup/i.test(f.lines[0] ?? '')
          ? 'name not found'
          : 'no answer';
      findings.push({
        code: 'APP_DEPENDENCY_UNREACHABLE',
        domain: 'networking',
        severity: 'high',
        resource: workload ?? refOf(f.pods[0] as KubeObject, 'Pod'),
        related: [...f.pods.map((p) => refOf(p, 'Pod')), ...(service ? [refOf(service, 'Service')] : [])],
        message: `${plural(f.pods.length, 'unready pod')} of ${workload ? `${workload.kind} ${workload.name}` : ctx.namespace} cannot reach ${what} (${how}); ${where}.`,
        evidence: [
          `log of ${f.pods.map((p) => p.metadata.name).join(', ')}: ${clipLine(f.lines.at(-1) ?? '', 240)} (${plural(f.lines.length, 'line')} like it)`,
        ],
        confidence: 0.9,
        analyzer: this.id,
        explains: true,
      });
    }
    return withCheck(
      this.id,
      findings,
      `application logs of ${plural(Math.min(unready.length, MAX_UNREADY), 'unready pod')}`,
      findings.length > 0
        ? findings.map((f) => clipLine(f.message, 160)).join('; ')
        : `no failed connection or lookup in the logs of ${names(quiet)}`,
    );
  },
};

function selects(policy: KubeObject, pod: KubeObject): boolean {
  return matchesSelector(policy.spec?.podSelector, pod.metadata.labels);
}

function types(policy: KubeObject): string[] {
  const declared = policy.spec?.policyTypes as string[] | undefined;
  if (declared && declared.length > 0) return declared;
  return policy.spec?.egress ? ['Ingress', 'Egress'] : ['Ingress'];
}

function allowsDns(policy: KubeObject): boolean {
  const rules = (policy.spec?.egress ?? []) as Array<{ ports?: Array<{ port?: number | string }>; to?: unknown[] }>;
  return rules.some(
    (r) => !r.ports || r.ports.length === 0 || r.ports.some((p) => String(p.port) === '53' || p.port === 'dns'),
  );
}

const networkPolicies: SpecialistAnalyzer = {
  id: 'network-policies',
  domains: ['networking', 'platform'],
  async run(ctx) {
    const policies = await ctx.reads.list({ kind: 'networkpolicies', namespace: ctx.namespace, maxItems: 200 });
    const all = await pods(ctx);
    if (policies.length === 0) {
      return onlyCheck(
        this.id,
        'NetworkPolicies, ingress and egress',
        'ruled-out',
        `no NetworkPolicy in ${ctx.namespace}: traffic in both directions is open to its ${plural(all.length, 'pod')}`,
      );
    }
    const findings: SpecialistFinding[] = [];
    const lines: string[] = [];
    for (const policy of policies) {
      const selected = all.filter((p) => selects(policy, p));
      const t = types(policy);
      const ingressRules = (policy.spec?.ingress ?? []) as unknown[];
      const egressDenies = t.includes('Egress') && !allowsDns(policy);
      lines.push(
        `${policy.metadata.name}: selects ${plural(selected.length, 'pod')}; ingress ${t.includes('Ingress') ? (ingressRules.length === 0 ? 'denied' : `${plural(ingressRules.length, 'rule')}`) : 'open'}; egress ${t.includes('Egress') ? (egressDenies ? 'without DNS' : 'allows DNS') : 'open'}`,
      );
      if (egressDenies && selected.length > 0) {
        findings.push({
          code: 'NETWORKPOLICY_EGRESS_WITHOUT_DNS',
          domain: 'networking',
          severity: 'high',
          resource: refOf(policy, 'NetworkPolicy'),
          related: selected.slice(0, 5).map((p) => refOf(p, 'Pod')),
          message: `NetworkPolicy ${policy.metadata.name} restricts egress of ${plural(selected.length, 'pod')} and allows no DNS (port 53): their lookups fail`,
          evidence: [lines.at(-1) ?? ''],
          confidence: 0.85,
          analyzer: this.id,
          explains: true,
        });
      }
    }
    return withCheck(
      this.id,
      findings,
      `both directions of ${plural(policies.length, 'NetworkPolicy')}`,
      lines.slice(0, 4).join('; '),
    );
  },
};

const clusterDns: SpecialistAnalyzer = {
  id: 'dns',
  domains: ['networking', 'platform'],
  async run(ctx) {
    const candidates: Array<{ namespace: string; labelSelector: string }> = [
      { namespace: 'kube-system', labelSelector: 'k8s-app=kube-dns' },
      { namespace: 'openshift-dns', labelSelector: 'dns.operator.openshift.io/daemonset-dns=default' },
    ];
    for (const c of candidates) {
      const dns = await ctx.reads
        .list({ kind: 'pods', namespace: c.namespace, labelSelector: c.labelSelector, maxItems: 50 })
        .catch(() => []);
      if (dns.length === 0) continue;
      const ready = dns.filter(isReady);
      return onlyCheck(
        this.id,
        `cluster DNS pods in ${c.namespace}`,
        ready.length === dns.length ? 'ruled-out' : 'found',
        `${ready.length}/${dns.length} ready`,
      );
    }
    return onlyCheck(
      this.id,
      'cluster DNS pods',
      'not-read',
      'no DNS pods in kube-system or openshift-dns are visible to calmops',
    );
  },
};

const routerLogs: SpecialistAnalyzer = {
  id: 'router-logs',
  domains: ['networking', 'platform'],
  async run(ctx) {
    const routes = await ctx.reads.list({ kind: 'routes', namespace: ctx.namespace, maxItems: 50 }).catch(() => []);
    const ingresses = await ctx.reads
      .list({ kind: 'ingresses', namespace: ctx.namespace, maxItems: 50 })
      .catch(() => []);
    const hosts = [
      ...routes.map((r) => String(r.spec?.host ?? '')),
      ...ingresses.flatMap((i) => ((i.spec?.rules ?? []) as Array<{ host?: string }>).map((r) => r.host ?? '')),
    ].filter(Boolean);
    if (hosts.length === 0 && routes.length === 0 && ingresses.length === 0) {
      return onlyCheck(
        this.id,
        'router and ingress controller logs',
        'ruled-out',
        `nothing in ${ctx.namespace} is exposed through a Route or an Ingress`,
      );
    }
    const sources: Array<{ namespace: string; labelSelector: string }> = [
      {
        namespace: 'openshift-ingress',
        labelSelector: 'ingresscontroller.operator.openshift.io/deployment-ingresscontroller=default',
      },
      { namespace: 'ingress-nginx', labelSelector: 'app.kubernetes.io/component=controller' },
    ];
    for (const s of sources) {
      const routers = await ctx.reads
        .list({ kind: 'pods', namespace: s.namespace, labelSelector: s.labelSelector, maxItems: 10 })
        .catch(() => []);
      const router = routers[0];
      if (!router) continue;
      const text = await ctx.reads
        .logs({ namespace: s.namespace, pod: router.metadata.name, tailLines: 300 })
        .catch(() => '');
      const mine = text
        .split(/\r?\n/)
        .filter(
          (l) => hosts.some((h) => l.includes(h)) || l.includes(`${ctx.namespace}:`) || l.includes(`${ctx.namespace}/`),
        );
      const errors = mine.filter((l) => /\b50[234]\b|no healthy|no endpoints|backend|error/i.test(l));
      return onlyCheck(
        this.id,
        `access and error log of ${s.namespace}/${router.metadata.name} for ${names(hosts) || ctx.namespace}`,
        errors.length > 0 ? 'found' : 'ruled-out',
        errors.length > 0
          ? `${plural(errors.length, 'error line')}, latest: ${clipLine(errors.at(-1) ?? '', 200)}`
          : `${plural(mine.length, 'line')} for these hosts, none an error`,
      );
    }
    return onlyCheck(
      this.id,
      'router and ingress controller logs',
      'not-read',
      'no router (openshift-ingress) or ingress-nginx controller pod is visible to calmops',
    );
  },
};

const endpointsPerPort: SpecialistAnalyzer = {
  id: 'endpoints-per-port',
  domains: ['networking', 'platform'],
  async run(ctx) {
    const services = await ctx.reads.list({ kind: 'services', namespace: ctx.namespace, maxItems: 100 });
    const endpoints = await ctx.reads.list({ kind: 'endpoints', namespace: ctx.namespace, maxItems: 100 });
    const all = await pods(ctx);
    const lines: string[] = [];
    let empty = 0;
    for (const svc of services.filter((s) => s.spec?.selector)) {
      const ep = endpoints.find((e) => e.metadata.name === svc.metadata.name);
      const subsets = (ep?.['subsets'] ?? []) as Array<{
        addresses?: unknown[];
        notReadyAddresses?: unknown[];
        ports?: Array<{ port: number; name?: string }>;
      }>;
      const selected = all.filter((p) => matchesMap(svc.spec.selector, p.metadata.labels));
      for (const port of (svc.spec?.ports ?? []) as Array<{
        port: number;
        name?: string;
        targetPort?: number | string;
      }>) {
        const ready = subsets
          .filter((s) => (s.ports ?? []).some((p) => p.name === port.name || (!port.name && p.port)))
          .reduce((n, s) => n + (s.addresses?.length ?? 0), 0);
        const notReady = subsets.reduce((n, s) => n + (s.notReadyAddresses?.length ?? 0), 0);
        if (ready === 0) empty += 1;
        lines.push(
          `${svc.metadata.name}:${port.port}→${port.targetPort ?? port.port}: ${ready} ready, ${notReady} not ready of ${plural(selected.length, 'selected pod')}`,
        );
      }
    }
    return onlyCheck(
      this.id,
      `endpoints of every port of ${plural(services.length, 'Service')}`,
      empty > 0 ? 'found' : 'ruled-out',
      lines.slice(0, 5).join('; ') || 'no Service with a selector',
    );
  },
};

export const NETWORK_ANALYZERS: readonly SpecialistAnalyzer[] = [
  unreadyPodLogs,
  networkPolicies,
  clusterDns,
  routerLogs,
  endpointsPerPort,
];
