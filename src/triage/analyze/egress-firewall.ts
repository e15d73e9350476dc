import type { KubeObject } from '../../cluster/types.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { nameList } from '../kube/evidence-list.js';
import { ownerOf } from '../kube/pod-owners.js';
import { containers, namespacePods, podRef, ref } from '../kube/pods.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

/**
 * OVN-Kubernetes' EgressFirewall (k8s.ovn.org/v1) filters what a namespace's pods send out of the cluster: its rules
 * are tried in order, the first whose destination (a CIDR or a DNS name) and ports match decides, and traffic no
 * rule matches is allowed. A client that logs a connect timeout to an address outside the cluster is checked
 * against those rules; when the first rule that matches the address it names is a Deny, the EgressFirewall is
 * what to change. Traffic to pods and Services stays inside the cluster and is never judged this way.
 */

const NAME = 'egress-firewall';

type EgressRule = {
  type?: string;
  to?: { cidrSelector?: string; dnsName?: string; nodeSelector?: unknown };
  ports?: Array<{ protocol?: string; port?: number }>;
};

/** A line where a connection times out, is refused or finds no route. */
const FAILED_CONNECT =
  /timed out|timeout|ETIMEDOUT|EHOSTUNREACH|no route to host|connection refused|ECONNREFUSED|unreachable|link failure/i;
/** `host/10.1.2.3:5432` (Java), `10.1.2.3:5432` (Go, Node), optionally preceded by the name it was resolved from. */
const ADDRESS = /(?:([a-z0-9][a-z0-9.-]*[a-z0-9])\/)?\b(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})\b/gi;

export interface EgressTarget {
  ip: string;
  port: number;
  host?: string;
}

/** A DNS name with the port it is called on (`"addr":"kafka-2.dc1.example:9093"`). */
const NAMED = /\b([a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+):(\d{1,5})\b/gi;

/**
 * The addresses a failed-connection log line names, each with the DNS name it was dialled as when the line says
 * (Java's `host/ip:port`, or a structured log's address field on the same port).
 */
export function failedAddresses(line: string): EgressTarget[] {
  if (!FAILED_CONNECT.test(line)) return [];
  const names = new Map<number, string>();
  for (const m of line.matchAll(NAMED)) {
    const name = (m[1] as string).toLowerCase();
    if (!/^\d+(\.\d+)*$/.test(name)) names.set(Number(m[2]), name);
  }
  const out: EgressTarget[] = [];
  for (const m of line.matchAll(ADDRESS)) {
    const ip = m[2] as string;
    if (ip.split('.').some((o) => Number(o) > 255)) continue;
    const port = Number(m[3]);
    const host = m[1]?.toLowerCase() ?? names.get(port);
    out.push({ ip, port, ...(host ? { host } : {}) });
  }
  return out;
}

function ipToInt(ip: string): number {
  return ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
}

/** Whether `ip` lies in an IPv4 CIDR; false for anything that is not one. */
export function inCidr(ip: string, cidr: string): boolean {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(cidr.trim());
  if (!m) return false;
  const bits = Number(m[2]);
  if (bits > 32) return false;
  const size = 2 ** (32 - bits);
  return Math.floor(ipToInt(ip) / size) === Math.floor(ipToInt(m[1] as string) / size);
}

/**
 * The rule of an EgressFirewall that decides traffic to `target`: the first that matches, undefined when none does
 * (allowed) or when one the address cannot be judged against (a DNS name other than the host logged, a node
 * selector) comes first.
 */
export function decidingRule(
  rules: readonly EgressRule[],
  target: EgressTarget,
): { rule: EgressRule; index: number } | undefined {
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as EgressRule;
    const ports = rule.ports ?? [];
    if (ports.length > 0 && !ports.some((p) => p.port === undefined || p.port === target.port)) continue;
    const to = rule.to ?? {};
    if (to.cidrSelector !== undefined) {
      if (inCidr(target.ip, to.cidrSelector)) return { rule, index: i };
      continue;
    }
    if (to.dnsName !== undefined) {
      const name = to.dnsName.toLowerCase().replace(/\.$/, '');
      if (
        target.host !== undefined &&
        (name === target.host || (name.startsWith('*.') && target.host.endsWith(name.slice(1))))
      )
        return { rule, index: i };
      // The name may resolve to this address: what follows cannot be relied on.
      if (target.host === undefined) return undefined;
      continue;
    }
    return undefined;
  }
  return undefined;
}

const ruleLine = (r: EgressRule) =>
  `${r.type ?? '?'} ${r.to?.cidrSelector ?? r.to?.dnsName ?? JSON.stringify(r.to ?? {})}${
    r.ports && r.ports.length > 0
      ? ` ports ${r.ports.map((p) => `${p.protocol ?? ''}/${p.port ?? '*'}`).join(',')}`
      : ''
  }`;

/** Addresses of pods and Services: traffic to them never leaves the cluster. */
function inClusterAddresses(ctx: AnalyzerContext): Set<string> {
  const out = new Set<string>();
  for (const p of ctx.objects('pods')) if (typeof p.status?.podIP === 'string') out.add(p.status.podIP);
  for (const s of ctx.objects('services')) if (typeof s.spec?.clusterIP === 'string') out.add(s.spec.clusterIP);
  return out;
}

interface Blocked {
  firewall: KubeObject;
  rule: EgressRule;
  index: number;
  target: EgressTarget;
  line: string;
  client: ResourceRef;
  pods: string[];
}

export const egressFirewallAnalyzer: Analyzer = {
  name: NAME,
  domain: 'networking',
  description:
    "Clients whose connections out of the cluster time out, checked against the namespace's OVN EgressFirewall rules in order.",
  needs: ['pods', 'egressfirewalls'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const firewalls = ctx
      .objects('egressfirewalls')
      .filter((f) => (f.metadata.namespace ?? ctx.namespace) === ctx.namespace);
    if (firewalls.length === 0) return [];
    const internal = inClusterAddresses(ctx);
    const blocked = new Map<string, Blocked>();
    for (const pod of namespacePods(ctx)) {
      for (const c of containers(pod)) {
        for (const previous of [false, true]) {
          const text = ctx.log(pod.metadata.name, c.name, previous, pod.metadata.namespace);
          if (!text) continue;
          for (const raw of text.split(/\r?\n/).slice(-200)) {
            for (const target of failedAddresses(raw)) {
              if (internal.has(target.ip)) continue;
              for (const firewall of firewalls) {
                const rules = (firewall.spec?.egress ?? []) as EgressRule[];
                const decided = decidingRule(rules, target);
                if (decided?.rule.type !== 'Deny') continue;
                const client = ownerOf(ctx, pod) ?? podRef(pod);
                const key = `${firewall.metadata.name}|${client.kind}/${client.name}|${target.ip}:${target.port}`;
                const seen = blocked.get(key);
                if (seen) {
                  if (!seen.pods.includes(pod.metadata.name)) seen.pods.push(pod.metadata.name);
                  continue;
                }
                blocked.set(key, { firewall, ...decided, target, line: raw.trim(), client, pods: [pod.metadata.name] });
              }
            }
          }
        }
      }
    }
    const out: FindingInput[] = [];
    for (const b of blocked.values()) {
      const name = b.firewall.metadata.name;
      const rules = (b.firewall.spec?.egress ?? []) as EgressRule[];
      const allows = rules.slice(0, b.index).filter((r) => r.type === 'Allow');
      const where = `${b.target.host ? `${b.target.host}/` : ''}${b.target.ip}:${b.target.port}`;
      const status = b.firewall.status?.status as string | undefined;
      out.push({
        code: 'EGRESS_FIREWALL_BLOCKS',
        analyzer: NAME,
        domain: 'networking',
        severity: 'high',
        resource: ref('EgressFirewall', name, ctx.namespace),
        message: `EgressFirewall ${name} in ${ctx.namespace} denies ${where}: rule ${b.index + 1} (${ruleLine(b.rule)}) is the first that matches it, so ${b.client.kind} ${b.client.name}'s connections time out.`,
        evidence: [
          `${b.pods[0]}: ${b.line}`.slice(0, 300),
          ...(b.pods.length > 1 ? [`${b.pods.length} pods fail the same way: ${nameList(b.pods)}`] : []),
          `EgressFirewall ${name} rules in order: ${rules.map((r, i) => `${i + 1}. ${ruleLine(r)}`).join('; ')}`.slice(
            0,
            300,
          ),
          ...(status ? [`EgressFirewall ${name} status: ${status}`] : []),
        ],
        confidence: 0.85,
        related: [b.client],
        remediation: ['fix-egress-firewall'],
        change: `add an Allow rule for ${b.target.ip}/32 (or its network)${b.target.host ? ` or dnsName ${b.target.host}` : ''} to EgressFirewall ${name} before rule ${b.index + 1}${allows.length > 0 ? ` (it allows only ${allows.map((r) => r.to?.cidrSelector ?? r.to?.dnsName).join(', ')})` : ''}`,
      });
    }
    return out;
  },
};
