import type { FindingInput } from '../envelope/findings.js';
import { groupBy, worstFirst } from '../kube/container-groups.js';
import { describeEvent, type EventSummary, findEvents, isRecent } from '../kube/events.js';
import { EvidenceList, nameList } from '../kube/evidence-list.js';
import { ownerKey, ownerOf } from '../kube/pod-owners.js';
import { containers, isoAge, namespacePods, podRef } from '../kube/pods.js';
import { revisionChanges, rolloutLine } from '../kube/revisions.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

const NAME = 'liveness-probe';

// biome-ignore lint/suspicious/noExplicitAny: raw probe JSON
function describeProbe(probe: any): string {
  const target = probe.httpGet
    ? `httpGet ${probe.httpGet.scheme === 'HTTPS' ? 'https' : 'http'} :${probe.httpGet.port}${probe.httpGet.path ?? '/'}`
    : probe.tcpSocket
      ? `tcpSocket :${probe.tcpSocket.port}`
      : probe.grpc
        ? `grpc :${probe.grpc.port}`
        : probe.exec
          ? `exec ${JSON.stringify(probe.exec.command ?? [])}`
          : 'unknown handler';
  const timing = ['initialDelaySeconds', 'periodSeconds', 'timeoutSeconds', 'failureThreshold']
    .map(
      (k) =>
        `${k}=${probe[k] ?? { initialDelaySeconds: 0, periodSeconds: 10, timeoutSeconds: 1, failureThreshold: 3 }[k]}`,
    )
    .join(' ');
  return `livenessProbe ${target} ${timing}`;
}

/** A probe aimed at a port the container does not declare is the most common liveness misconfiguration. */
// biome-ignore lint/suspicious/noExplicitAny: raw container JSON
function portMismatch(spec: any): string | undefined {
  const probe = spec?.livenessProbe;
  const port = probe?.httpGet?.port ?? probe?.tcpSocket?.port ?? probe?.grpc?.port;
  const ports: { containerPort?: number; name?: string }[] = Array.isArray(spec?.ports) ? spec.ports : [];
  if (port === undefined || ports.length === 0) return undefined;
  const declared = ports.some((p) => p.containerPort === port || p.name === port);
  if (declared) return undefined;
  const list = ports.map((p) => `${p.containerPort}${p.name ? `(${p.name})` : ''}`).join(', ');
  return `probe port ${port} is not a declared containerPort (container declares ${list})`;
}

export const livenessProbeAnalyzer: Analyzer = {
  name: NAME,
  domain: 'compute',
  description: 'Containers restarted by failing liveness probes (Unhealthy events, kubelet kills, probe settings).',
  needs: ['pods', 'events'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    const candidates = namespacePods(ctx).flatMap((pod) => {
      const probed = containers(pod).filter((c) => c.spec?.livenessProbe !== undefined);
      // Most pods have no liveness probe: their events are never looked at.
      if (probed.length === 0) return [];
      const events = findEvents(ctx, { kind: 'Pod', name: pod.metadata.name, namespace: ctx.namespace });
      return probed
        .map((c) => {
          const mine = (e: EventSummary) =>
            e.fieldPath === undefined || e.fieldPath.includes(`{${c.name}}`) || e.message.includes(c.name);
          const failures = events.filter(
            (e) => e.reason === 'Unhealthy' && /^Liveness probe failed/i.test(e.message) && mine(e),
          );
          const kills = events.filter(
            (e) => e.reason === 'Killing' && /failed liveness probe/i.test(e.message) && mine(e),
          );
          return { pod, c, failures, kills };
        })
        .filter(({ failures }) => failures.some((e) => isRecent(ctx.now, e.last)));
    });
    for (const [, unordered] of groupBy(candidates, ({ pod, c }) => `${ownerKey(ctx, pod)}/${c.name}`)) {
      const group = worstFirst(unordered);
      const { pod, c, failures, kills } = group[0]!;
      const failCount = group.reduce((n, g) => n + g.failures.reduce((m, e) => m + e.count, 0), 0);
      const killCount = group.reduce((n, g) => n + g.kills.reduce((m, e) => m + e.count, 0), 0);
      const recentExit = (g: (typeof group)[number]) =>
        g.c.restartCount > 0 && isoAge(ctx.now, g.c.lastTerminated?.finishedAt) <= 60 * 60_000;
      const restarting = group.some(recentExit);
      // Kill events are Normal events, missing from a read of warnings: a recent exit on SIGTERM or SIGKILL while
      // the probe fails is the kubelet's restart all the same.
      const inferredKills =
        killCount === 0
          ? group.filter((g) => recentExit(g) && [137, 143].includes(Number(g.c.lastTerminated?.exitCode))).length
          : 0;
      const killed = killCount > 0 || inferredKills > 0;
      // Ranks: the probe's failure and the kubelet's reaction, what is wrong with the probe, then the replicas.
      const evidence = new EvidenceList().add(
        0,
        describeEvent(failures[0] ?? group.find((g) => g.failures[0])!.failures[0]!, ctx.now),
      );
      const kill = kills[0] ?? group.find((g) => g.kills[0])?.kills[0];
      if (kill) evidence.add(1, describeEvent(kill, ctx.now));
      else if (inferredKills > 0) {
        evidence.add(
          1,
          `no kill event read, but ${inferredKills} pod(s) last exited with ${c.lastTerminated?.exitCode ?? 'SIGTERM/SIGKILL'} (stopped by the kubelet) while the probe failed`,
        );
      }
      const mismatch = portMismatch(c.spec);
      evidence
        .add(2, mismatch)
        .add(3, describeProbe(c.spec.livenessProbe))
        .add(3, revisionChanges(ctx, pod))
        .add(
          4,
          `container ${c.name}: ${c.waitingReason ? `${c.waitingReason}, ` : ''}${c.restartCount} restarts${c.lastTerminated ? `, last exit code ${c.lastTerminated.exitCode} (${c.lastTerminated.reason ?? 'n/a'})` : ''}`,
        );
      if (group.length > 1) {
        evidence.add(
          4,
          `${group.length} pods affected: ${nameList(group.map((g) => `${g.pod.metadata.name} (${g.c.restartCount} restarts${g.c.waitingReason ? `, ${g.c.waitingReason}` : ''})`))}`,
        );
      }
      evidence.add(5, rolloutLine(ctx, pod));
      const owner = ownerOf(ctx, pod);
      const restarts =
        killCount > 0
          ? `, ${killCount} restarts by the kubelet`
          : inferredKills > 0
            ? ', and the kubelet restarts the container'
            : '';
      findings.push({
        code: 'CONTAINER_LIVENESS_FAILING',
        analyzer: NAME,
        domain: 'compute',
        severity: killed || restarting ? 'high' : 'medium',
        resource: podRef(pod),
        message: `The liveness probe of container ${c.name} in pod ${pod.metadata.name} fails (${failCount} failures${restarts})${mismatch ? `; ${mismatch}` : ''}.`,
        evidence: evidence.lines(),
        confidence: killCount > 0 ? (mismatch ? 0.92 : 0.85) : inferredKills > 0 ? (mismatch ? 0.9 : 0.8) : 0.65,
        related: owner ? [owner] : [],
        remediation: mismatch ? ['fix-probe-port'] : ['tune-liveness-probe', 'inspect-previous-logs'],
      });
    }
    return findings;
  },
};
