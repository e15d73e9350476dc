import type { KubeObject } from '../../cluster/types.js';
import type { Analyzer, AnalyzerContext } from '../analyzer.js';
import type { FindingInput } from '../findings.js';
import { scrubText } from '../scrub.js';
import { clip } from './events.js';
import { containers, decisiveLogLine, isPodReady, namespacePods, podRef, ref } from './pods.js';

const NAME = 'dns';

/** Cluster DNS pods: CoreDNS on Kubernetes (kube-system) and the DNS operator's pods on OpenShift (openshift-dns). */
export function isDnsPod(pod: KubeObject): boolean {
  const l = pod.metadata.labels ?? {};
  return (
    (pod.metadata.namespace === 'kube-system' && (l['k8s-app'] === 'kube-dns' || l['k8s-app'] === 'coredns')) ||
    (pod.metadata.namespace === 'openshift-dns' && l['dns.operator.openshift.io/daemonset-dns'] !== undefined)
  );
}

const DNS_SERVER_ERROR =
  /\[ERROR\] plugin\/errors|SERVFAIL|i\/o timeout|no route to host|connection refused|\[FATAL\]|plugin\/loop/i;
const APP_DNS_FAILURE =
  /no such host|server misbehaving|Temporary failure in name resolution|EAI_AGAIN|ENOTFOUND|UnknownHostException|Name or service not known|lookup \S+ on [\d.:[\]a-f]+:53|SERVFAIL|NXDOMAIN|could not resolve host/i;

function dnsLogs(ctx: AnalyzerContext, pod: KubeObject): string {
  const ns = pod.metadata.namespace;
  return containers(pod)
    .flatMap((c) => [ctx.log(pod.metadata.name, c.name, true, ns), ctx.log(pod.metadata.name, c.name, false, ns)])
    .filter((t): t is string => t !== undefined)
    .join('\n');
}

/** Upstream resolver a CoreDNS error names, e.g. `read udp 10.128.0.12:45678->10.0.0.2:53: i/o timeout`. */
function upstreamOf(line: string): string | undefined {
  return /->\s*([\d.]+:53)/.exec(line)?.[1];
}

function lookupName(line: string): string | undefined {
  return (
    /lookup (\S+?)(?: on |:)/.exec(line)?.[1] ??
    /(?:getaddrinfo (?:EAI_AGAIN|ENOTFOUND)|UnknownHostException:?|Could not resolve host:?) ([\w.-]+)/i.exec(line)?.[1]
  );
}

export const dnsAnalyzer: Analyzer = {
  name: NAME,
  domain: 'networking',
  description:
    'Cluster DNS failures: CoreDNS pods not ready, CoreDNS upstream errors, lookup failures in application logs.',
  needs: ['pods'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    const dnsPods = ctx.objects('pods').filter(isDnsPod);
    const ready = dnsPods.filter(isPodReady);
    let infraBroken = false;
    if (dnsPods.length > 0 && ready.length < Math.ceil(dnsPods.length / 2)) {
      infraBroken = true;
      const sample = dnsPods.find((p) => !isPodReady(p))!;
      const states = dnsPods
        .slice(0, 3)
        .map((p) => {
          const c = containers(p)[0];
          return `${p.metadata.name} ${c?.waitingReason ?? p.status?.phase}${c ? ` (${c.restartCount} restarts)` : ''}`;
        })
        .join(', ');
      const verdict = decisiveLogLine(dnsLogs(ctx, sample));
      findings.push({
        code: 'DNS_COREDNS_UNAVAILABLE',
        analyzer: NAME,
        domain: 'networking',
        severity: ready.length === 0 ? 'critical' : 'high',
        resource: podRef(sample),
        message: `Cluster DNS is down: ${ready.length}/${dnsPods.length} DNS pods in ${sample.metadata.namespace} are ready, so name lookups in every namespace fail.`,
        evidence: [
          `DNS pods ready ${ready.length}/${dnsPods.length}: ${states}`,
          ...(verdict ? [`log ${sample.metadata.name}: ${verdict.line}`] : []),
        ],
        confidence: 0.93,
        related: dnsPods.slice(0, 5).map((p) => podRef(p)),
        remediation: ['inspect-coredns', 'check-coredns-config'],
      });
    }

    if (!infraBroken) {
      const errorLines: { pod: KubeObject; line: string }[] = [];
      for (const pod of dnsPods) {
        for (const line of dnsLogs(ctx, pod).split(/\r?\n/)) {
          if (DNS_SERVER_ERROR.test(line)) errorLines.push({ pod, line: line.trim() });
        }
      }
      if (errorLines.length >= 3) {
        const upstreams = [...new Set(errorLines.map((e) => upstreamOf(e.line)).filter(Boolean))];
        const timeouts = errorLines.filter((e) => /i\/o timeout/i.test(e.line)).length;
        const servfail = errorLines.filter((e) => /SERVFAIL/i.test(e.line)).length;
        const first = errorLines[errorLines.length - 1]!;
        findings.push({
          code: 'DNS_COREDNS_ERRORS',
          analyzer: NAME,
          domain: 'networking',
          severity: 'high',
          resource: podRef(first.pod),
          message: `The cluster DNS pods are up but failing lookups (${errorLines.length} errors${upstreams.length ? `, upstream ${upstreams.join(', ')}` : ''}).`,
          evidence: [
            `${errorLines.length} error lines in ${new Set(errorLines.map((e) => e.pod.metadata.name)).size} DNS pod(s): ${timeouts} i/o timeouts, ${servfail} SERVFAIL`,
            `log ${first.pod.metadata.name}: ${clip(scrubText(first.line))}`,
            ...(upstreams.length ? [`failing upstream resolver(s): ${upstreams.join(', ')}`] : []),
            `DNS pods ready ${ready.length}/${dnsPods.length}`,
          ],
          confidence: 0.85,
          related: [],
          remediation: ['check-upstream-dns', 'inspect-coredns'],
        });
      }
    }

    // Application symptoms: lookups failing in this namespace's logs.
    const failing: { pod: KubeObject; line: string }[] = [];
    for (const pod of namespacePods(ctx)) {
      for (const c of containers(pod)) {
        const text = [ctx.log(pod.metadata.name, c.name, true), ctx.log(pod.metadata.name, c.name, false)]
          .filter(Boolean)
          .join('\n');
        const line = text
          .split(/\r?\n/)
          .reverse()
          .find((l) => APP_DNS_FAILURE.test(l));
        if (line) failing.push({ pod, line: line.trim() });
      }
    }
    if (failing.length > 0) {
      const names = [...new Set(failing.map((f) => lookupName(f.line)).filter(Boolean))];
      const upstreamTrouble = infraBroken || findings.some((f) => f.code === 'DNS_COREDNS_ERRORS');
      const nxdomain = failing.every((f) =>
        /no such host|NXDOMAIN|ENOTFOUND|UnknownHost|Name or service not known/i.test(f.line),
      );
      const first = failing[0]!;
      findings.push({
        code: 'DNS_LOOKUP_FAILURES',
        analyzer: NAME,
        domain: 'networking',
        // With healthy DNS pods, a name that does not resolve is usually the application's own mistake.
        severity: upstreamTrouble ? 'medium' : 'high',
        resource: podRef(first.pod),
        message: `${failing.length} container(s) in ${ctx.namespace} fail DNS lookups${names.length ? ` for ${names.slice(0, 3).join(', ')}` : ''}${
          upstreamTrouble
            ? ' because cluster DNS is failing'
            : nxdomain
              ? '; the names do not exist (check spelling and namespace)'
              : ''
        }.`,
        evidence: [
          `log ${first.pod.metadata.name}: ${clip(scrubText(first.line))}`,
          `${failing.length} container(s) with DNS errors: ${[...new Set(failing.map((f) => f.pod.metadata.name))].slice(0, 4).join(', ')}`,
          ...(names.length ? [`names failing: ${names.slice(0, 5).join(', ')}`] : []),
          dnsPods.length > 0 ? `cluster DNS pods ready ${ready.length}/${dnsPods.length}` : 'cluster DNS pods not read',
        ],
        confidence: upstreamTrouble ? 0.7 : dnsPods.length > 0 ? 0.8 : 0.6,
        related: dnsPods.length > 0 ? [ref('Pod', dnsPods[0]!.metadata.name, dnsPods[0]!.metadata.namespace)] : [],
        remediation: upstreamTrouble ? ['inspect-coredns'] : ['fix-service-hostname'],
      });
    }
    return findings;
  },
};
