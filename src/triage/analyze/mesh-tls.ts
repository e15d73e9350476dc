import type { KubeObject } from '../../cluster/types.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { canSee, clip } from '../kube/events.js';
import { podsOfService } from '../kube/network-policy.js';
import { ownerOf } from '../kube/pod-owners.js';
import { ref } from '../kube/pods.js';
import { podLogLines, quoteLog } from '../kube/proxy-logs.js';
import { type LabelSelector, matchesSelector } from '../kube/selectors.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

/**
 * Istio mutual TLS that one side does not speak. A sidecar under a STRICT PeerAuthentication accepts only mTLS:
 * a DestinationRule that tells clients to send plaintext (`tls.mode: DISABLE`) or one-way TLS (`SIMPLE`) has every
 * connection cut by the server's proxy (`upstream_reset_before_response_started{connection_termination}`, 503), and
 * a client without a sidecar speaking plain HTTP is refused by it (`OPENSSL_internal:HTTP_REQUEST` on the server's
 * proxy, `Connection reset by peer` in the client). Each verdict rests on those lines, never on configuration alone.
 */

const NAME = 'mesh-tls';
/** Istio's default root namespace: a PeerAuthentication there without a selector is the mesh-wide policy. */
const ROOT_NAMESPACE = 'istio-system';
const SIDECAR = 'istio-proxy';

/** Envoy's access-log reason when the upstream closed or failed the connection before answering. */
const UPSTREAM_RESET =
  /upstream_reset_before_response_started\{(?:connection_termination|connection_failure[^}]*TLS_error[^}]*)\}|reset reason: connection termination/;
/** Envoy's TLS listener given a plaintext HTTP request (BoringSSL's HTTP_REQUEST), with the peer's address. */
const PLAINTEXT_REFUSED = /OPENSSL_internal:HTTP_REQUEST/;
const REMOTE_ADDRESS = /remote address:\s*\[?([0-9a-f.:]+?)\]?:\d+,/i;
const PEER_RESET = /Connection reset by peer|ECONNRESET/;

function hasSidecar(pod: KubeObject): boolean {
  const names = [
    ...((pod.spec?.containers ?? []) as Array<{ name?: string }>),
    ...((pod.spec?.initContainers ?? []) as Array<{ name?: string }>),
  ];
  return names.some((c) => c.name === SIDECAR);
}

function modeOf(pa: KubeObject): string | undefined {
  const mode = (pa.spec?.mtls as { mode?: string } | undefined)?.mode;
  return mode === undefined || mode === 'UNSET' ? undefined : mode;
}

/**
 * The PeerAuthentication that decides a pod's mTLS mode, as Istio resolves it: a workload policy selecting the pod,
 * else its namespace's policy, else the mesh-wide one in the root namespace; a level that leaves the mode unset
 * inherits the next.
 */
function effectivePeerAuthentication(
  ctx: AnalyzerContext,
  pod: KubeObject,
): { policy: KubeObject; mode: string } | undefined {
  const ns = pod.metadata.namespace;
  const all = ctx.objects('peerauthentications');
  const selecting = all.filter(
    (p) =>
      p.metadata.namespace === ns &&
      p.spec?.selector !== undefined &&
      matchesSelector(p.spec.selector as LabelSelector, pod.metadata.labels),
  );
  const namespaceWide = all.filter((p) => p.metadata.namespace === ns && p.spec?.selector === undefined);
  const meshWide = all.filter((p) => p.metadata.namespace === ROOT_NAMESPACE && p.spec?.selector === undefined);
  for (const level of [selecting, namespaceWide, meshWide]) {
    const decided = level.find((p) => modeOf(p) !== undefined);
    if (decided) return { policy: decided, mode: modeOf(decided) as string };
  }
  return undefined;
}

/** `name`, `name.ns`, `name.ns.svc[.cluster.local]` → the Service it names, as Istio resolves a short host. */
function serviceOfHost(ctx: AnalyzerContext, host: string, namespace: string): KubeObject | undefined {
  const [name, ns] = host.split('.');
  const target = ns ?? namespace;
  return ctx.objects('services').find((s) => s.metadata.name === name && s.metadata.namespace === target);
}

function fqdn(svc: KubeObject): string {
  return `${svc.metadata.name}.${svc.metadata.namespace}.svc.cluster.local`;
}

/** Log lines of every pod read that satisfy `test`, with the pod that wrote them. */
function linesWhere(ctx: AnalyzerContext, test: (line: string) => boolean): Array<{ pod: KubeObject; line: string }> {
  const out: Array<{ pod: KubeObject; line: string }> = [];
  for (const pod of ctx.objects('pods'))
    for (const line of podLogLines(ctx, pod)) if (test(line)) out.push({ pod, line });
  return out;
}

/** The client-side TLS modes a DestinationRule sets, overall and per port. */
function tlsModes(dr: KubeObject): string[] {
  const policy = dr.spec?.trafficPolicy as
    | { tls?: { mode?: string }; portLevelSettings?: Array<{ tls?: { mode?: string } }> }
    | undefined;
  return [policy?.tls?.mode, ...(policy?.portLevelSettings ?? []).map((p) => p.tls?.mode)].filter(
    (m): m is string => m !== undefined,
  );
}

function strictServers(
  ctx: AnalyzerContext,
  pods: readonly KubeObject[],
): Array<{ pod: KubeObject; policy: KubeObject }> {
  return pods
    .filter(hasSidecar)
    .map((pod) => ({ pod, decided: effectivePeerAuthentication(ctx, pod) }))
    .filter((x) => x.decided?.mode === 'STRICT')
    .map((x) => ({ pod: x.pod, policy: (x.decided as { policy: KubeObject }).policy }));
}

function policyLine(p: KubeObject): string {
  return `PeerAuthentication ${p.metadata.name} (${p.metadata.namespace}): mtls.mode ${modeOf(p)}${p.spec?.selector ? ` for ${JSON.stringify(p.spec.selector)}` : p.metadata.namespace === ROOT_NAMESPACE ? ', mesh-wide' : ', namespace-wide'}`;
}

function workloadOf(ctx: AnalyzerContext, pods: readonly KubeObject[]): ResourceRef[] {
  const seen = new Map<string, ResourceRef>();
  for (const p of pods) {
    const o = ownerOf(ctx, p);
    if (o) seen.set(`${o.kind}/${o.namespace}/${o.name}`, o);
  }
  return [...seen.values()];
}

/** A DestinationRule sending plaintext or one-way TLS to sidecars that only accept mutual TLS. */
function destinationRuleFindings(ctx: AnalyzerContext): FindingInput[] {
  const out: FindingInput[] = [];
  for (const dr of ctx.objects('destinationrules')) {
    const mode = tlsModes(dr).find((m) => m === 'DISABLE' || m === 'SIMPLE');
    if (mode === undefined) continue;
    const namespace = dr.metadata.namespace ?? ctx.namespace;
    const svc = serviceOfHost(ctx, String(dr.spec?.host ?? ''), namespace);
    if (!svc) continue;
    const servers = strictServers(ctx, podsOfService(ctx, svc));
    const strict = servers[0];
    if (!strict) continue;
    const host = fqdn(svc);
    const resets = linesWhere(ctx, (l) => UPSTREAM_RESET.test(l) && l.includes(`||${host}`));
    const last = resets[resets.length - 1];
    if (!last) continue;
    const workloads = workloadOf(
      ctx,
      servers.map((s) => s.pod),
    );
    out.push({
      code: 'MESH_TLS_MODE_CONFLICT',
      analyzer: NAME,
      domain: 'networking',
      severity: 'high',
      resource: ref('DestinationRule', dr.metadata.name, namespace),
      message: `DestinationRule ${dr.metadata.name} sets tls.mode ${mode} for ${host}, but its pods' sidecars accept only mutual TLS (STRICT), so their proxies cut every connection and callers get 503.`,
      evidence: [
        `DestinationRule ${dr.metadata.name}: host ${String(dr.spec?.host)}, trafficPolicy tls.mode ${mode} (created ${String(dr.metadata.creationTimestamp ?? '?')})`,
        policyLine(strict.policy),
        `${resets.length} reset line(s) for ${host}`,
        quoteLog(last.pod, last.line),
      ].map((e) => clip(e)),
      confidence: 0.9,
      related: [ref('Service', svc.metadata.name, svc.metadata.namespace), ...workloads],
      remediation: ['fix-destination-rule-tls'],
      change: `set tls.mode ISTIO_MUTUAL in DestinationRule ${dr.metadata.name} (or remove the tls setting) so clients send mutual TLS to ${host}`,
      alternatives: [
        {
          resource: ref('PeerAuthentication', strict.policy.metadata.name, strict.policy.metadata.namespace),
          change: `set mtls.mode PERMISSIVE in PeerAuthentication ${strict.policy.metadata.name} while clients send plaintext`,
        },
      ],
    });
  }
  return out;
}

interface Refusal {
  server: KubeObject;
  policy: KubeObject;
  quote: string;
  client?: KubeObject;
  /** The refused peer's address when no pod read has it: a client in a namespace that was not read. */
  unreadPeer?: string;
}

/** Plaintext clients (no sidecar) refused by sidecars under a STRICT policy, as the server or the client logs it. */
function plaintextClientFindings(ctx: AnalyzerContext): FindingInput[] {
  const byIp = new Map(ctx.objects('pods').map((p) => [String(p.status?.podIP ?? ''), p]));
  const refusals: Refusal[] = [];
  for (const { pod, line } of linesWhere(ctx, (l) => PLAINTEXT_REFUSED.test(l))) {
    if (!hasSidecar(pod)) continue;
    const decided = effectivePeerAuthentication(ctx, pod);
    if (decided?.mode !== 'STRICT') continue;
    const ip = REMOTE_ADDRESS.exec(line)?.[1];
    const client = ip ? byIp.get(ip) : undefined;
    refusals.push({
      server: pod,
      policy: decided.policy,
      quote: quoteLog(pod, line),
      ...(client && !hasSidecar(client) ? { client } : {}),
      ...(ip && !client ? { unreadPeer: ip } : {}),
    });
  }
  const resets = linesWhere(ctx, (l) => PEER_RESET.test(l)).filter((r) => !hasSidecar(r.pod));
  if (resets.length > 0) {
    // Only Services behind STRICT sidecars can refuse a plaintext client; each is named as `name.namespace[.svc…]`,
    // or as a bare `//name` from a client in its own namespace.
    const targets = ctx.objects('services').flatMap((svc) => {
      const strict = strictServers(ctx, podsOfService(ctx, svc))[0];
      if (!strict) return [];
      const name = svc.metadata.name;
      const ns = svc.metadata.namespace as string;
      return [
        {
          ns,
          strict,
          qualified: new RegExp(`(?:^|[^a-z0-9.-])${name}\\.${ns}(?:\\.svc|[^a-z0-9.-]|$)`),
          bare: new RegExp(`//${name}[:/]`),
        },
      ];
    });
    for (const { pod, line } of resets) {
      for (const t of targets) {
        if (!(t.qualified.test(line) || (pod.metadata.namespace === t.ns && t.bare.test(line)))) continue;
        refusals.push({ server: t.strict.pod, policy: t.strict.policy, quote: quoteLog(pod, line), client: pod });
      }
    }
  }
  const byPolicy = new Map<string, Refusal[]>();
  for (const r of refusals) {
    const key = `${r.policy.metadata.namespace}/${r.policy.metadata.name}`;
    byPolicy.set(key, [...(byPolicy.get(key) ?? []), r]);
  }
  const out: FindingInput[] = [];
  for (const group of byPolicy.values()) {
    const policy = (group[0] as Refusal).policy;
    const clients = group.map((r) => r.client).filter((c): c is KubeObject => c !== undefined);
    const clientWorkloads = workloadOf(ctx, clients);
    const serverWorkloads = workloadOf(
      ctx,
      group.map((r) => r.server),
    );
    const clientNames = clientWorkloads.map((w) => `${w.kind} ${w.name} (${w.namespace})`);
    const quotes = [...new Set(group.map((r) => r.quote))];
    out.push({
      code: 'MESH_MTLS_PLAINTEXT_REFUSED',
      analyzer: NAME,
      domain: 'networking',
      severity: 'high',
      resource: ref('PeerAuthentication', policy.metadata.name, policy.metadata.namespace),
      message: `PeerAuthentication ${policy.metadata.name} in ${policy.metadata.namespace} requires mutual TLS (STRICT), and ${clientNames.length > 0 ? clientNames.join(', ') : 'a client'} without an Istio sidecar speaks plaintext to ${serverWorkloads.map((w) => `${w.kind} ${w.name}`).join(', ') || 'its pods'}: the server's proxy refuses it and the connection is reset.`,
      evidence: [
        policyLine(policy),
        ...clients
          .slice(0, 1)
          .map((c) => `client pod ${c.metadata.name} (${c.metadata.namespace}) has no ${SIDECAR} container`),
        ...(clients.length === 0
          ? [...new Set(group.map((r) => r.unreadPeer).filter((ip) => ip !== undefined))]
              .slice(0, 1)
              .map((ip) => `the plaintext client ${ip} is no pod read: it runs in a namespace this triage did not read`)
          : []),
        ...quotes.slice(0, 3),
      ].map((e) => clip(e)),
      confidence: clients.length > 0 ? 0.88 : 0.75,
      related: [...clientWorkloads, ...serverWorkloads],
      remediation: ['fix-peer-authentication'],
      change: `set mtls.mode PERMISSIVE in PeerAuthentication ${policy.metadata.name} (${policy.metadata.namespace}), or a portLevelMtls PERMISSIVE exception for the port the plaintext clients call`,
      ...(clientWorkloads.length > 0
        ? {
            alternatives: clientWorkloads.slice(0, 2).map((w) => ({
              resource: w,
              change: `inject an Istio sidecar into ${w.kind} ${w.name}'s pods so it speaks mutual TLS`,
            })),
          }
        : {}),
    });
  }
  return out;
}

export const meshTlsAnalyzer: Analyzer = {
  name: NAME,
  domain: 'networking',
  description:
    'Istio mutual TLS mismatches: a DestinationRule sending plaintext or one-way TLS to sidecars under a STRICT PeerAuthentication, and clients without a sidecar refused by a STRICT policy, each tied to the resets the proxies or clients log.',
  needs: ['peerauthentications', 'destinationrules', 'pods', 'services'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    if (!canSee(ctx, 'peerauthentications') || !canSee(ctx, 'pods')) return [];
    if (ctx.objects('peerauthentications').length === 0) return [];
    return [...(canSee(ctx, 'destinationrules') ? destinationRuleFindings(ctx) : []), ...plaintextClientFindings(ctx)];
  },
};
