import type { KubeObject } from '../../cluster/types.js';
import { byCodePoint } from '../../code-point-order.js';
import { EVIDENCE_PER_FINDING } from '../../limits.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { forEachContainer } from '../kube/container-groups.js';
import { clip, formatAge } from '../kube/events.js';
import { decisiveLogLine, parseUnresolvedHost } from '../kube/log-verdicts.js';
import { namespaceLabels, policyTypes } from '../kube/network-policy.js';
import { ownerOf } from '../kube/pod-owners.js';
import { containers, isoAge, isPodReady, namespacePods, podRef, ref } from '../kube/pods.js';
import { type LabelSelector, matchesSelector } from '../kube/selectors.js';
import { scrubText } from '../scrub.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

const NAME = 'dns';

/** Cluster DNS pods: CoreDNS on Kubernetes (kube-system) and the DNS operator's pods on OpenShift (openshift-dns). */
function isDnsPod(pod: KubeObject): boolean {
  const l = pod.metadata.labels ?? {};
  return (
    (pod.metadata.namespace === 'kube-system' && (l['k8s-app'] === 'kube-dns' || l['k8s-app'] === 'coredns')) ||
    (pod.metadata.namespace === 'openshift-dns' && l['dns.operator.openshift.io/daemonset-dns'] !== undefined)
  );
}

const DNS_SERVER_ERROR =
  /\[ERROR\] plugin\/errors|SERVFAIL|i\/o timeout|no route to host|connection refused|\[FATAL\]|plugin\/loop/i;
const APP_DNS_FAILURE =
  /no such host|server misbehaving|Temporary failure in name resolution|EAI_AGAIN|ENOTFOUND|UnknownHostException|Name or service not known|lookup \S+ on [\d.:[\]a-f]+:53|SERVFAIL|NXDOMAIN|could not resolve host|NameResolutionError/i;
/** .NET: `SocketException (00000001, 11): Resource temporarily unavailable` thrown from `System.Net.Dns.*`. */
const DOTNET_SOCKET =
  /SocketException \([^)]*\): (Resource temporarily unavailable|No such host is known|Name or service not known)/;

/** `[ERROR] plugin/errors: 2 sqlprod01.corp.contoso.com. AAAA: read udp 10.244.1.76:54515->10.20.0.53:53: i/o timeout` */
const COREDNS_ERROR = /\[ERROR\] plugin\/errors: (\d+) (\S+) (\S+): (.*)$/;
/** `[FATAL] plugin/loop: Loop (127.0.0.1:55953 -> :53) detected for zone ".", see …` */
const COREDNS_LOOP = /plugin\/loop: Loop \(([^)]*)\) detected for zone "([^"]*)"/;

interface Restarting {
  pod: KubeObject;
  container: ReturnType<typeof containers>[number];
  reason?: string;
  exitCode: number;
  age: number;
}

/** DNS pods whose container was killed within the last hour, most recent first. */
function restarting(ctx: AnalyzerContext, dnsPods: readonly KubeObject[]): Restarting[] {
  const out: Restarting[] = [];
  for (const pod of dnsPods) {
    for (const c of containers(pod)) {
      const t = c.lastTerminated as { reason?: string; exitCode?: number; finishedAt?: string } | undefined;
      if (!t || c.init || Number(t.exitCode ?? 0) === 0) continue;
      const age = isoAge(ctx.now, t.finishedAt);
      if (!(age >= 0 && age <= 60 * 60_000)) continue;
      out.push({ pod, container: c, ...(t.reason ? { reason: t.reason } : {}), exitCode: Number(t.exitCode), age });
    }
  }
  return out.sort((a, b) => a.age - b.age);
}

function dnsLogs(ctx: AnalyzerContext, pod: KubeObject): string {
  const ns = pod.metadata.namespace;
  return containers(pod)
    .flatMap((c) => [ctx.log(pod.metadata.name, c.name, true, ns), ctx.log(pod.metadata.name, c.name, false, ns)])
    .filter((t): t is string => t !== undefined)
    .join('\n');
}

/** Upstream resolver a CoreDNS error names, e.g. `read udp 10.128.0.12:45678->10.0.0.2:53: i/o timeout`. */
function upstreamOf(line: string): string | undefined {
  return /->\s*\[?([\da-f.:]+?)\]?:(\d+)/i.exec(line)?.slice(1, 3).join(':');
}

function lookupName(line: string): string | undefined {
  return (
    parseUnresolvedHost(line)?.host ??
    /Failed to resolve '([\w.-]+)'/.exec(line)?.[1] ??
    /(?:getaddrinfo (?:EAI_AGAIN|ENOTFOUND)|UnknownHostException:?|Could not resolve host:?) ([\w.-]+)/i.exec(line)?.[1]
  );
}

// --- Corefile ---------------------------------------------------------------------------------------------------

interface Forward {
  configMap: string;
  namespace: string;
  key: string;
  zones: string[];
  /** `forward . 10.20.0.53 10.20.0.54` as written. */
  line: string;
  to: string[];
}

/** The ConfigMaps the DNS pods mount: where their Corefile (and on AKS, coredns-custom) comes from. */
function configMapsOf(dnsPods: readonly KubeObject[]): { name: string; namespace: string }[] {
  const seen = new Map<string, { name: string; namespace: string }>();
  for (const pod of dnsPods) {
    const volumes: { configMap?: { name?: string } }[] = Array.isArray(pod.spec?.volumes) ? pod.spec.volumes : [];
    for (const v of volumes) {
      const name = v.configMap?.name;
      const namespace = pod.metadata.namespace ?? '';
      if (name && !seen.has(`${namespace}/${name}`)) seen.set(`${namespace}/${name}`, { name, namespace });
    }
  }
  return [...seen.values()];
}

/** Zone of a server block key: `.:53` → `.`, `corp.contoso.com:53` → `corp.contoso.com`. */
function zoneOf(token: string): string {
  const bare = token.replace(/^[a-z]+:\/\//, '').replace(/:\d+$/, '');
  return bare === '.' || bare === '' ? '.' : bare.replace(/\.$/, '');
}

/** Every `forward` a Corefile text holds, with the server block (zones) it sits in. */
export function corefileForwards(text: string): { zones: string[]; line: string; to: string[] }[] {
  const out: { zones: string[]; line: string; to: string[] }[] = [];
  let depth = 0;
  let zones: string[] = [];
  let pending: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') continue;
    const tokens = line
      .replace(/[{}]/g, (b) => ` ${b} `)
      .split(/\s+/)
      .filter(Boolean);
    let directive: string[] = [];
    const flush = () => {
      if (depth === 1 && directive[0] === 'forward') {
        out.push({ zones, line: directive.join(' '), to: directive.slice(2) });
      } else if (depth === 0 && directive[0] === 'forward') {
        // An imported snippet (AKS `*.override`) holds directives without a server block of its own.
        out.push({ zones: ['(imported)'], line: directive.join(' '), to: directive.slice(2) });
      }
      directive = [];
    };
    for (const t of tokens) {
      if (t === '{') {
        if (depth === 0) {
          zones = [...pending, ...directive].map(zoneOf);
          pending = [];
          directive = [];
        } else flush();
        depth++;
      } else if (t === '}') {
        flush();
        depth = Math.max(0, depth - 1);
      } else directive.push(t);
    }
    if (depth === 0 && directive.length > 0 && directive[0] !== 'forward') pending = [...pending, ...directive];
    else flush();
  }
  return out;
}

function forwardsOf(ctx: AnalyzerContext, dnsPods: readonly KubeObject[]): Forward[] {
  const out: Forward[] = [];
  for (const { name, namespace } of configMapsOf(dnsPods)) {
    const cm = ctx.objects('configmaps').find((c) => c.metadata.name === name && c.metadata.namespace === namespace);
    for (const [key, text] of Object.entries((cm?.['data'] ?? {}) as Record<string, string>)) {
      if (typeof text !== 'string') continue;
      for (const f of corefileForwards(text)) out.push({ configMap: name, namespace, key, ...f });
    }
  }
  return out;
}

function bareAddress(target: string): string {
  return target.replace(/^[a-z]+:\/\//, '').replace(/^\[?([\da-f.:]+?)\]?(?::\d+)?$/i, '$1');
}

function forwardLine(f: Forward): string {
  return `ConfigMap ${f.namespace}/${f.configMap} (${f.key}), zone ${f.zones.join(' ')}: ${f.line}`;
}

// --- NetworkPolicy egress to DNS --------------------------------------------------------------------------------

function ipv4(ip: string): number | undefined {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return undefined;
  return (
    (((parts[0] as number) << 24) >>> 0) +
    ((parts[1] as number) << 16) +
    ((parts[2] as number) << 8) +
    (parts[3] as number)
  );
}

function inCidr(ip: string, cidr: string): boolean | undefined {
  const [base, bits] = cidr.split('/');
  const a = ipv4(ip);
  const b = ipv4(base ?? '');
  if (a === undefined || b === undefined) return undefined;
  const n = Number(bits ?? 32);
  const mask = n === 0 ? 0 : (0xffffffff << (32 - n)) >>> 0;
  return (a & mask) >>> 0 === (b & mask) >>> 0;
}

interface Peer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr?: string; except?: string[] };
}

/** Whether a peer list admits a DNS pod (by labels, namespace, or IP); unknown answers count as admitted. */
function peerAdmits(ctx: AnalyzerContext, peers: Peer[] | undefined, dns: KubeObject, policyNs: string): boolean {
  if (peers === undefined || peers.length === 0) return true;
  return peers.some((peer) => {
    if (peer.ipBlock) {
      const ip = String(dns.status?.podIP ?? '');
      const inside = inCidr(ip, peer.ipBlock.cidr ?? '');
      if (inside === undefined) return true;
      return inside && !(peer.ipBlock.except ?? []).some((e) => inCidr(ip, e) === true);
    }
    const dnsNs = dns.metadata.namespace ?? '';
    const nsOk = peer.namespaceSelector
      ? matchesSelector(peer.namespaceSelector, namespaceLabels(ctx, dnsNs))
      : dnsNs === policyNs;
    return nsOk && (peer.podSelector ? matchesSelector(peer.podSelector, dns.metadata.labels) : true);
  });
}

/** Whether a port list admits DNS over UDP 53 (a bare `port: 53` means TCP: lookups over UDP stay blocked). */
function portAdmitsDns(
  ports: { port?: number | string; endPort?: number; protocol?: string }[] | undefined,
  dns?: KubeObject,
): boolean {
  if (ports === undefined || ports.length === 0) return true;
  const named = new Map<string, number>();
  for (const c of dns ? containers(dns) : []) {
    for (const cp of (c.spec?.ports ?? []) as { name?: string; containerPort?: number; protocol?: string }[]) {
      if (cp.name && (cp.protocol ?? 'TCP') === 'UDP' && cp.containerPort) named.set(cp.name, cp.containerPort);
    }
  }
  return ports.some((p) => {
    if ((p.protocol ?? 'TCP') !== 'UDP') return false;
    if (p.port === undefined) return true;
    const port = typeof p.port === 'string' ? (named.get(p.port) ?? (dns ? undefined : 53)) : p.port;
    if (port === undefined) return false;
    return port === 53 || (typeof p.port === 'number' && p.endPort !== undefined && p.port <= 53 && 53 <= p.endPort);
  });
}

function describeEgress(p: KubeObject): string {
  const rules = (
    (p.spec?.egress ?? []) as { to?: Peer[]; ports?: { port?: number | string; protocol?: string }[] }[]
  ).map((r) => {
    const ports = (r.ports ?? []).map((x) => `${x.protocol ?? 'TCP'} ${x.port ?? '*'}`).join(',') || 'any port';
    const to = (r.to ?? [])
      .map((t) =>
        t.ipBlock
          ? `${t.ipBlock.cidr}${t.ipBlock.except?.length ? ` except ${t.ipBlock.except.join(',')}` : ''}`
          : [
              t.namespaceSelector ? `ns ${JSON.stringify(t.namespaceSelector.matchLabels ?? t.namespaceSelector)}` : '',
              t.podSelector ? `pods ${JSON.stringify(t.podSelector.matchLabels ?? t.podSelector)}` : '',
            ]
              .filter(Boolean)
              .join(' '),
      )
      .join('; ');
    return `${ports} to ${to || 'anywhere'}`;
  });
  return rules.length > 0 ? rules.join(' | ') : 'no egress rule (deny all)';
}

interface DnsBlock {
  policies: KubeObject[];
  pods: KubeObject[];
}

/** Pods of the namespace whose Egress policies admit no DNS lookup to any cluster DNS pod. */
function egressBlocksDns(ctx: AnalyzerContext, dnsPods: readonly KubeObject[]): DnsBlock | undefined {
  const policies = ctx
    .objects('networkpolicies')
    .filter((p) => (p.metadata.namespace ?? ctx.namespace) === ctx.namespace)
    .filter((p) => policyTypes(p).includes('Egress'));
  if (policies.length === 0) return undefined;
  const blocked: KubeObject[] = [];
  const blamed = new Map<string, KubeObject>();
  for (const pod of namespacePods(ctx)) {
    if (pod.status?.phase !== 'Running' || pod.spec?.hostNetwork === true) continue;
    if (pod.spec?.dnsPolicy === 'Default' || pod.spec?.dnsPolicy === 'None') continue;
    const mine = policies.filter((p) =>
      matchesSelector(p.spec?.podSelector as LabelSelector | undefined, pod.metadata.labels),
    );
    if (mine.length === 0) continue;
    const targets = dnsPods.length > 0 ? dnsPods : [undefined];
    const admitted = mine.some((p) =>
      ((p.spec?.egress ?? []) as { to?: Peer[]; ports?: [] }[]).some((rule) =>
        targets.some(
          (dns) =>
            portAdmitsDns(rule.ports, dns) &&
            (dns === undefined || peerAdmits(ctx, rule.to, dns, p.metadata.namespace ?? ctx.namespace)),
        ),
      ),
    );
    if (admitted) continue;
    blocked.push(pod);
    for (const p of mine) blamed.set(p.metadata.name, p);
  }
  if (blocked.length === 0) return undefined;
  // Egress rules add up: the policy added last is the change that took DNS away.
  const ordered = [...blamed.values()].sort(
    (a, b) =>
      byCodePoint(String(b.metadata.creationTimestamp ?? ''), String(a.metadata.creationTimestamp ?? '')) ||
      byCodePoint(a.metadata.name, b.metadata.name),
  );
  return { policies: ordered, pods: blocked };
}

// --- application side -------------------------------------------------------------------------------------------

interface AppFailure {
  pod: KubeObject;
  line: string;
  name?: string;
  nxdomain: boolean;
}

function appFailures(ctx: AnalyzerContext): AppFailure[] {
  const failing: AppFailure[] = [];
  forEachContainer(ctx, (pod, c) => {
    const previous = ctx.log(pod.metadata.name, c.name, true);
    const current = ctx.log(pod.metadata.name, c.name, false);
    // A container without logs has no line to read.
    if (!previous && !current) return;
    const logs = [previous, current].filter(Boolean);
    const lines = logs.join('\n').split(/\r?\n/);
    let found: AppFailure | undefined;
    let nameless: AppFailure | undefined;
    for (let i = lines.length - 1; i >= 0 && !found; i--) {
      const line = (lines[i] as string).trim();
      if (APP_DNS_FAILURE.test(line)) {
        const unresolved = parseUnresolvedHost(line);
        const name = lookupName(line);
        const failure: AppFailure = {
          pod,
          line,
          ...(name ? { name } : {}),
          nxdomain:
            unresolved?.nameDoesNotExist ?? /no such host|NXDOMAIN|ENOTFOUND|Name or service not known/i.test(line),
        };
        // A multi-line error (Node's `code: 'EAI_AGAIN'`) ends below the line that names the host: quote that one.
        if (name) found = failure;
        else nameless ??= failure;
      } else {
        const dotnet = DOTNET_SOCKET.exec(line);
        if (dotnet && lines.slice(i + 1, i + 4).some((l) => /System\.Net\.Dns\./.test(l))) {
          found = { pod, line, nxdomain: !/temporarily/i.test(dotnet[1] as string) };
        }
      }
    }
    const failure = found ?? nameless;
    if (failure) failing.push(failure);
  });
  return failing;
}

/** Why a name that does not exist is wrong: `x.y.svc.cluster.local` in a namespace or Service that is not there. */
function whyNameMissing(ctx: AnalyzerContext, name: string, clientNs: string): string | undefined {
  const labels = name.toLowerCase().split('.');
  if (!(labels.length <= 2 || labels[2] === 'svc')) return undefined;
  const svc = labels[0] as string;
  const ns = labels.length >= 2 ? (labels[1] as string) : clientNs;
  const namespaces = ctx.objects('namespaces');
  const elsewhere = ctx
    .objects('services')
    .filter((s) => s.metadata.name === svc && s.metadata.namespace !== ns)
    .map((s) => s.metadata.namespace);
  const hint = elsewhere.length > 0 ? `; Service ${svc} exists in namespace ${elsewhere.join(', ')}` : '';
  if (namespaces.length > 0 && !namespaces.some((n) => n.metadata.name === ns))
    return `namespace ${ns} does not exist${hint}`;
  if (
    ctx.objects('services').some((s) => s.metadata.namespace === ns) &&
    !ctx.objects('services').some((s) => s.metadata.namespace === ns && s.metadata.name === svc)
  )
    return `no Service ${svc} in namespace ${ns}${hint}`;
  return undefined;
}

/** A ConfigMap of the client's namespace that spells out the host: where a wrong name usually lives. */
function configHolding(ctx: AnalyzerContext, host: string, namespace: string): KubeObject | undefined {
  return ctx
    .objects('configmaps')
    .filter((c) => (c.metadata.namespace ?? ctx.namespace) === namespace)
    .find((c) =>
      Object.values((c['data'] ?? {}) as Record<string, string>).some((v) => typeof v === 'string' && v.includes(host)),
    );
}

function quote(f: AppFailure): string {
  return clip(scrubText(`log ${f.pod.metadata.name}: ${f.line}`));
}

/**
 * Up to two failing lines from different workloads: the formats differ and both are worth seeing. A line that names
 * the resolver it asked (`lookup x on 10.96.0.10:53: … i/o timeout`) comes first: it says which server fails.
 */
function quotes(ctx: AnalyzerContext, failing: readonly AppFailure[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const namesResolver = (f: AppFailure) => (/:53\b/.test(f.line) ? 0 : 1);
  const ordered = [...failing].sort((a, b) => namesResolver(a) - namesResolver(b));
  for (const f of ordered) {
    const owner = ownerOf(ctx, f.pod)?.name ?? f.pod.metadata.name;
    if (seen.has(owner)) continue;
    seen.add(owner);
    out.push(quote(f));
    if (out.length === 2) break;
  }
  return out;
}

/** The cluster DNS pods and the Corefile they run, read once for every finding. */
interface DnsScene {
  dnsPods: KubeObject[];
  ready: KubeObject[];
  forwards: Forward[];
  corefileMaps: { name: string; namespace: string }[];
}

/** A finding about the cluster's DNS, and the object that failing lookups then follow from. */
interface Upstream {
  finding: FindingInput;
  upstream: ResourceRef;
}

/** Fewer than half the DNS pods are ready: cluster DNS is down, with the Corefile loop behind it when there is one. */
function corednsDown(ctx: AnalyzerContext, scene: DnsScene): Upstream | undefined {
  const { dnsPods, ready, forwards, corefileMaps } = scene;
  if (!(dnsPods.length > 0 && ready.length < Math.ceil(dnsPods.length / 2))) return undefined;
  const sample = dnsPods.find((p) => !isPodReady(p))!;
  const states = dnsPods
    .slice(0, 3)
    .map((p) => {
      const c = containers(p)[0];
      return `${p.metadata.name} ${c?.waitingReason ?? p.status?.phase}${c ? ` (${c.restartCount} restarts)` : ''}`;
    })
    .join(', ');
  const logs = dnsLogs(ctx, sample);
  const loopLine = logs.split(/\r?\n/).find((l) => COREDNS_LOOP.test(l));
  const loop = loopLine ? COREDNS_LOOP.exec(loopLine) : null;
  const verdict = loopLine ? { line: loopLine.trim() } : decisiveLogLine(logs);
  let owner: ResourceRef | undefined;
  let because = '';
  const extra: string[] = [];
  if (loop) {
    const zone = zoneOf(loop[2] || '.');
    const fwd = forwards.find((f) => f.zones.includes(zone));
    const holder = fwd ? { name: fwd.configMap, namespace: fwd.namespace } : corefileMaps[0];
    if (holder) owner = ref('ConfigMap', holder.name, holder.namespace);
    if (fwd) {
      extra.push(forwardLine(fwd));
      because = `: the Corefile in ConfigMap ${fwd.configMap} forwards zone "${loop[2]}" with "${fwd.line}", and those resolvers send the queries back to CoreDNS (loop ${loop[1]})`;
    } else {
      because = `: queries CoreDNS forwards for zone "${loop[2]}" come back to it (loop ${loop[1]}); its Corefile is in ConfigMap ${corefileMaps.map((m) => m.name).join(', ') || '?'}`;
    }
  }
  return {
    finding: {
      code: 'DNS_COREDNS_UNAVAILABLE',
      analyzer: NAME,
      domain: 'networking',
      severity: ready.length === 0 ? 'critical' : 'high',
      resource: podRef(sample),
      message: `Cluster DNS is down: ${ready.length}/${dnsPods.length} DNS pods in ${sample.metadata.namespace} are ready, so name lookups in every namespace fail${because}.`,
      evidence: [
        `DNS pods ready ${ready.length}/${dnsPods.length}: ${states}`,
        ...(verdict ? [clip(scrubText(`log ${sample.metadata.name}: ${verdict.line}`))] : []),
        ...extra,
      ],
      confidence: 0.93,
      related: [],
      remediation: loop ? ['check-coredns-config', 'inspect-coredns'] : ['inspect-coredns', 'check-coredns-config'],
      ...(owner ? { owner } : {}),
    },
    upstream: owner ?? podRef(sample),
  };
}

/** Error lines in the DNS pods' logs, with the upstream resolver and the name each one failed for. */
function corednsErrorLines(
  ctx: AnalyzerContext,
  dnsPods: readonly KubeObject[],
): { pod: KubeObject; line: string; upstream?: string; name?: string }[] {
  const errorLines: { pod: KubeObject; line: string; upstream?: string; name?: string }[] = [];
  for (const pod of dnsPods) {
    for (const raw of dnsLogs(ctx, pod).split(/\r?\n/)) {
      const line = raw.trim();
      if (!DNS_SERVER_ERROR.test(line)) continue;
      const parsed = COREDNS_ERROR.exec(line);
      const up = upstreamOf(line);
      errorLines.push({
        pod,
        line,
        ...(up ? { upstream: up } : {}),
        ...(parsed ? { name: (parsed[2] as string).replace(/\.$/, '') } : {}),
      });
    }
  }
  return errorLines;
}

/** The DNS pods are up but their lookups fail upstream: the Corefile forward that sends them there. */
function corednsErrors(ctx: AnalyzerContext, scene: DnsScene): Upstream | undefined {
  const { dnsPods, ready, forwards, corefileMaps } = scene;
  const errorLines = corednsErrorLines(ctx, dnsPods);
  if (!(errorLines.length >= 3)) return undefined;
  const counts = new Map<string, number>();
  for (const e of errorLines) if (e.upstream) counts.set(e.upstream, (counts.get(e.upstream) ?? 0) + 1);
  const upstreams = [...counts].sort((a, b) => b[1] - a[1] || byCodePoint(a[0], b[0])).map(([u]) => u);
  const lead = upstreams[0];
  const shown =
    [...errorLines].reverse().find((e) => lead === undefined || e.upstream === lead) ??
    errorLines[errorLines.length - 1]!;
  const timeouts = errorLines.filter((e) => /i\/o timeout/i.test(e.line)).length;
  const servfail = errorLines.filter((e) => /SERVFAIL/i.test(e.line)).length;
  const names = [...new Set(errorLines.map((e) => e.name).filter((n): n is string => n !== undefined))];
  const ips = new Set(upstreams.map((u) => bareAddress(u)));
  const sending = forwards.filter((f) => f.to.some((t) => ips.has(bareAddress(t))));
  const holder = sending[0];
  const podsWithErrors = [...new Set(errorLines.map((e) => e.pod.metadata.name))];
  const owner = holder ? ref('ConfigMap', holder.configMap, holder.namespace) : undefined;
  return {
    finding: {
      code: 'DNS_COREDNS_ERRORS',
      analyzer: NAME,
      domain: 'networking',
      severity: 'high',
      resource: podRef(shown.pod),
      message: `The cluster DNS pods are up but failing lookups (${errorLines.length} errors${upstreams.length ? `, upstream ${upstreams.join(', ')}` : ''})${
        holder
          ? `: ConfigMap ${holder.configMap} forwards zone ${holder.zones.join(' ')} to resolvers that do not answer`
          : ''
      }.`,
      evidence: [
        `${errorLines.length} error lines in ${podsWithErrors.length} DNS pod(s) (${podsWithErrors.slice(0, 3).join(', ')}): ${timeouts} i/o timeouts, ${servfail} SERVFAIL`,
        clip(scrubText(`log ${shown.pod.metadata.name}: ${shown.line}`)),
        ...(upstreams.length
          ? [
              clip(
                `failing upstream resolver(s): ${upstreams.join(', ')}${names.length ? ` for ${names.slice(0, EVIDENCE_PER_FINDING).join(', ')}` : ''}`,
              ),
            ]
          : []),
        ...(holder
          ? [clip(forwardLine(holder))]
          : corefileMaps.length > 0
            ? [
                `Corefile from ConfigMap ${corefileMaps.map((m) => `${m.namespace}/${m.name}`).join(', ')}${forwards.length === 0 ? ' (not read)' : `; none forwards to ${upstreams.join(', ')}`}`,
              ]
            : []),
        `DNS pods ready ${ready.length}/${dnsPods.length}`,
      ],
      confidence: 0.85,
      related: [],
      remediation: ['check-upstream-dns', 'inspect-coredns'],
      ...(owner ? { owner } : {}),
    },
    upstream: owner ?? podRef(shown.pod),
  };
}

/** DNS pods that keep being restarted (an OOM kill at their memory limit), so lookups sent to them time out. */
function corednsFlapping(
  ctx: AnalyzerContext,
  scene: DnsScene,
  flapping: readonly Restarting[],
  timingOut: readonly AppFailure[],
): Upstream {
  const { dnsPods, ready } = scene;
  const worst = flapping[0] as Restarting;
  const workload = ownerOf(ctx, worst.pod);
  const oom = flapping.filter((r) => r.reason === 'OOMKilled');
  const limit = worst.container.spec?.resources?.limits?.memory as string | undefined;
  return {
    finding: {
      code: 'DNS_COREDNS_UNAVAILABLE',
      analyzer: NAME,
      domain: 'networking',
      severity: timingOut.length > 0 ? 'high' : 'medium',
      resource: podRef(worst.pod),
      message: `Cluster DNS keeps failing: ${flapping.length}/${dnsPods.length} DNS pods in ${worst.pod.metadata.namespace} were restarted within the hour (${worst.reason ?? `exit ${worst.exitCode}`}${oom.length > 0 && limit ? ` at their ${limit} memory limit` : ''}), and lookups sent to them meanwhile time out.`,
      evidence: [
        ...flapping
          .slice(0, 2)
          .map(
            (r) =>
              `${r.pod.metadata.name}: last terminated ${r.reason ?? ''} (exit ${r.exitCode}) ${formatAge(r.age)} ago, ${r.container.restartCount} restarts, ready ${r.container.ready}`,
          ),
        `DNS pods ready ${ready.length}/${dnsPods.length}`,
        ...quotes(ctx, timingOut).slice(0, 1),
        ...(limit ? [`DNS container memory limit ${limit}`] : []),
      ],
      confidence: oom.length > 0 ? 0.88 : 0.75,
      related: [],
      remediation: ['inspect-coredns'],
      ...(oom.length > 0 && workload
        ? {
            owner: workload,
            change: `raise the memory limit of ${workload.kind} ${workload.name}${limit ? ` above ${limit}` : ''} (or add replicas so each serves fewer queries)`,
          }
        : workload
          ? { owner: workload }
          : {}),
    },
    upstream: workload ?? podRef(worst.pod),
  };
}

/** A NetworkPolicy whose Egress rules leave the namespace's pods no way to the cluster DNS pods. */
function policyBlocksDns(
  ctx: AnalyzerContext,
  scene: DnsScene,
  blocked: DnsBlock,
  timingOut: readonly AppFailure[],
): Upstream {
  const { dnsPods, ready } = scene;
  const policy = blocked.policies[0] as KubeObject;
  const policyRef = ref('NetworkPolicy', policy.metadata.name, policy.metadata.namespace ?? ctx.namespace);
  const victims = new Set(blocked.pods.map((p) => p.metadata.name));
  const witnesses = timingOut.filter((f) => victims.has(f.pod.metadata.name));
  const workloads = [...new Set(blocked.pods.map((p) => ownerOf(ctx, p)?.name ?? p.metadata.name))];
  const dnsLine =
    dnsPods.length > 0
      ? `cluster DNS pods ready ${ready.length}/${dnsPods.length} (${dnsPods
          .slice(0, 3)
          .map((p) => `${p.metadata.name} ${p.status?.podIP ?? ''}`.trim())
          .join(', ')}), no errors in their logs`
      : 'cluster DNS pods not read';
  return {
    finding: {
      code: 'NETWORK_POLICY_BLOCKS_DNS',
      analyzer: NAME,
      domain: 'networking',
      severity: 'high',
      resource: policyRef,
      message: `NetworkPolicy ${policy.metadata.name} puts ${blocked.pods.length} pod(s) in ${ctx.namespace} (${workloads.slice(0, 4).join(', ')}) under Egress rules that admit no DNS (UDP 53) to the cluster DNS pods, so their name lookups time out.`,
      evidence: [
        clip(
          `NetworkPolicy ${policy.metadata.name} (created ${formatAge(isoAge(ctx.now, policy.metadata.creationTimestamp))} ago) egress: ${describeEgress(policy)}`,
        ),
        ...quotes(ctx, witnesses),
        dnsLine,
        ...(blocked.policies.length > 1
          ? [
              `other Egress policies on these pods, none admitting DNS: ${blocked.policies
                .slice(1)
                .map((p) => p.metadata.name)
                .join(', ')}`,
            ]
          : []),
      ],
      confidence: witnesses.length > 0 ? 0.9 : 0.7,
      related: [],
      remediation: ['fix-network-policy'],
    },
    upstream: policyRef,
  };
}

/** Application symptoms: lookups failing in this namespace's logs, and what they follow from when it is known. */
function lookupFailures(
  ctx: AnalyzerContext,
  scene: DnsScene,
  failing: readonly AppFailure[],
  upstream: ResourceRef | undefined,
): FindingInput {
  const { dnsPods, ready } = scene;
  const names = [...new Set(failing.map((f) => f.name).filter((n): n is string => n !== undefined))];
  const nxdomain = failing.every((f) => f.nxdomain);
  const first = failing[0]!;
  const missing = nxdomain && first.name ? whyNameMissing(ctx, first.name, ctx.namespace) : undefined;
  const config =
    nxdomain && first.name && upstream === undefined ? configHolding(ctx, first.name, ctx.namespace) : undefined;
  const cause = upstream !== undefined;
  return {
    code: 'DNS_LOOKUP_FAILURES',
    analyzer: NAME,
    domain: 'networking',
    // With healthy DNS pods, a name that does not resolve is usually the application's own mistake.
    severity: cause ? 'medium' : 'high',
    resource: podRef(first.pod),
    message: `${failing.length} container(s) in ${ctx.namespace} fail DNS lookups${names.length ? ` for ${names.slice(0, 3).join(', ')}` : ''}${
      cause
        ? ` because of ${upstream?.kind} ${upstream?.name}`
        : nxdomain
          ? `; the name does not exist${missing ? ` (${missing})` : ''}${config ? `, and ConfigMap ${config.metadata.name} holds it` : ' (check spelling and namespace)'}`
          : ''
    }.`,
    evidence: [
      ...quotes(ctx, failing),
      `${failing.length} container(s) with DNS errors: ${[...new Set(failing.map((f) => f.pod.metadata.name))].slice(0, 4).join(', ')}`,
      ...(names.length ? [`names failing: ${names.slice(0, EVIDENCE_PER_FINDING).join(', ')}`] : []),
      ...(missing ? [missing] : []),
      dnsPods.length > 0
        ? `cluster DNS pods ready ${ready.length}/${dnsPods.length}: ${dnsPods
            .slice(0, 2)
            .map((p) => p.metadata.name)
            .join(', ')}`
        : 'cluster DNS pods not read',
    ],
    confidence: cause ? 0.7 : config ? 0.85 : dnsPods.length > 0 ? 0.8 : 0.6,
    related: upstream ? [upstream] : [],
    remediation: cause ? ['inspect-coredns'] : ['fix-service-hostname'],
    ...(config ? { owner: ref('ConfigMap', config.metadata.name, config.metadata.namespace ?? ctx.namespace) } : {}),
  };
}

export const dnsAnalyzer: Analyzer = {
  name: NAME,
  domain: 'networking',
  description:
    'Cluster DNS failures: CoreDNS down (and the Corefile loop behind it), CoreDNS upstream errors and the Corefile forward that sends them there, NetworkPolicies that leave pods no egress to DNS, lookup failures in application logs.',
  needs: ['pods'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    const dnsPods = ctx.objects('pods').filter(isDnsPod);
    const ready = dnsPods.filter(isPodReady);
    const scene: DnsScene = { dnsPods, ready, forwards: forwardsOf(ctx, dnsPods), corefileMaps: configMapsOf(dnsPods) };
    /** What failing lookups in the namespace follow from, when something upstream explains them. */
    let upstream: ResourceRef | undefined;
    const down = corednsDown(ctx, scene);
    const infraBroken = down !== undefined;
    if (down) {
      findings.push(down.finding);
      upstream = down.upstream;
    }

    if (!infraBroken) {
      const errors = corednsErrors(ctx, scene);
      if (errors) {
        findings.push(errors.finding);
        upstream = errors.upstream;
      }
    }

    const failing = appFailures(ctx);
    const timingOut = failing.filter((f) => !f.nxdomain);
    // Enough DNS pods are up to pass the half-ready test, yet they keep being killed and restarted (an OOM kill at
    // their memory limit): queries sent to them while they are down time out, in every namespace. Without a client
    // here that saw it, it is a fault of the cluster rather than this namespace's.
    const recent = !infraBroken && upstream === undefined ? restarting(ctx, dnsPods) : [];
    const flapping =
      timingOut.length > 0 || recent.some((r) => r.reason === 'OOMKilled') ? recent : ([] as Restarting[]);
    if (flapping.length > 0) {
      const restarts = corednsFlapping(ctx, scene, flapping, timingOut);
      findings.push(restarts.finding);
      upstream = restarts.upstream;
    }
    const blocked = !infraBroken ? egressBlocksDns(ctx, dnsPods) : undefined;
    if (blocked && upstream === undefined) {
      const policy = policyBlocksDns(ctx, scene, blocked, timingOut);
      findings.push(policy.finding);
      upstream = policy.upstream;
    }

    if (failing.length > 0) findings.push(lookupFailures(ctx, scene, failing, upstream));
    return findings.map((f) => ({ ...f, evidence: [...new Set(f.evidence)].slice(0, EVIDENCE_PER_FINDING) }));
  },
};
