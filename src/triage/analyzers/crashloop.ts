import type { KubeObject } from '../../cluster/types.js';
import type { Analyzer, AnalyzerContext } from '../analyzer.js';
import type { FindingInput } from '../findings.js';
import { describeEvent, findEvents, formatAge, isRecent } from './events.js';
import { type ContainerView, containerGroups, crashLog, decisiveLogLine, isoAge, ownerOf, podRef } from './pods.js';

const NAME = 'crashloop';

const EXIT_CODES: Readonly<Record<number, string>> = {
  1: 'application error',
  2: 'misuse of shell builtin / bad arguments',
  126: 'command not executable',
  127: 'command not found',
  128: 'invalid exit argument',
  134: 'SIGABRT (abort)',
  137: 'SIGKILL (killed: OOM or liveness/stop timeout)',
  139: 'SIGSEGV (segmentation fault)',
  143: 'SIGTERM (asked to stop)',
};

/** Is the container restarting now, rather than having restarted at some point in the past? */
export function isCrashLooping(now: Date, c: ContainerView): boolean {
  if (c.waitingReason === 'CrashLoopBackOff') return true;
  const last = c.lastTerminated ?? c.terminated;
  if (last === undefined || Number(last.exitCode ?? 0) === 0) return false;
  return c.restartCount >= 3 && isoAge(now, last.finishedAt) <= 60 * 60_000;
}

function terminationLine(c: ContainerView): string {
  const last = c.lastTerminated ?? c.terminated;
  const code = Number(last?.exitCode ?? Number.NaN);
  const meaning = EXIT_CODES[code];
  const state = c.waitingReason ?? (c.terminated ? 'Terminated' : 'Running');
  return `container ${c.name}: ${state}, ${c.restartCount} restarts, last exit code ${Number.isNaN(code) ? '?' : code}${last?.reason ? ` (${last.reason})` : ''}${meaning ? ` = ${meaning}` : ''}`;
}

function livenessKills(ctx: AnalyzerContext, pod: KubeObject, container: string): number {
  return findEvents(ctx, { kind: 'Pod', name: pod.metadata.name, namespace: ctx.namespace, reasons: ['Killing'] })
    .filter(
      (e) => /failed liveness probe/i.test(e.message) && e.message.includes(container) && isRecent(ctx.now, e.last),
    )
    .reduce((n, e) => n + e.count, 0);
}

/** Whether a permission problem names a path the pod mounts: then the volume, not the app, is the suspect. */
function mountedPath(c: ContainerView, line: string): string | undefined {
  const mounts: { mountPath?: string }[] = Array.isArray(c.spec?.volumeMounts) ? c.spec.volumeMounts : [];
  return mounts.map((m) => m.mountPath ?? '').find((p) => p !== '' && line.includes(p));
}

export const crashloopAnalyzer: Analyzer = {
  name: NAME,
  domain: 'compute',
  description: 'Containers in CrashLoopBackOff, with exit codes and the decisive line of the crashed container log.',
  needs: ['pods', 'events'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    for (const group of containerGroups(ctx, (c) => isCrashLooping(ctx.now, c))) {
      const { pod, c } = group[0]!;
      const last = c.lastTerminated ?? c.terminated;
      // OOM kills have their own analyzer with memory evidence; repeating them here would only add noise.
      if (last?.reason === 'OOMKilled') continue;
      const verdict = group.map(({ pod: p, c: cc }) => decisiveLogLine(crashLog(ctx, p, cc.name))).find(Boolean);
      const kills = livenessKills(ctx, pod, c.name);
      const backoff = findEvents(ctx, {
        kind: 'Pod',
        name: pod.metadata.name,
        namespace: ctx.namespace,
        reasons: ['BackOff'],
      })[0];
      const owner = ownerOf(ctx, pod);
      const evidence = [terminationLine(c)];
      if (verdict) evidence.push(`log (previous container): ${verdict.line}`);
      if (backoff) evidence.push(describeEvent(backoff, ctx.now));
      if (group.length > 1) evidence.push(`${group.length} pods of ${owner?.kind} ${owner?.name} crash the same way`);
      if (last?.finishedAt) evidence.push(`last crash ${formatAge(isoAge(ctx.now, last.finishedAt))} ago`);

      let code = 'CONTAINER_CRASHLOOP';
      let confidence = verdict ? 0.75 : 0.55;
      let severity: FindingInput['severity'] = 'high';
      let message = `Container ${c.name} of pod ${pod.metadata.name} is crash-looping`;
      const remediation = ['inspect-previous-logs'];
      if (kills > 0) {
        // The kubelet is killing a healthy-enough process: the probe, not the app, decides the restarts.
        confidence = 0.45;
        severity = 'medium';
        message += `; the restarts are liveness-probe kills (${kills} recent)`;
        evidence.splice(1, 0, `${kills} "failed liveness probe, will be restarted" kills in the last hour`);
      } else if (verdict?.kind === 'config') {
        code = 'CONTAINER_CRASHLOOP_CONFIG_ERROR';
        confidence = 0.9;
        message += ` because of its configuration: ${verdict.line}`;
        remediation.unshift('fix-config');
      } else if (verdict?.kind === 'permission' && mountedPath(c, verdict.line)) {
        confidence = 0.55;
        message += `: permission denied on mounted path ${mountedPath(c, verdict.line)}`;
      } else if (verdict?.kind === 'dns' || verdict?.kind === 'platform') {
        // Another analyzer owns the cause (DNS, image platform); the crash loop is how it shows.
        confidence = 0.55;
        message += `: ${verdict.line}`;
      } else if (verdict) {
        message += `: ${verdict.line}`;
        if (verdict.kind === 'dependency') remediation.unshift('check-dependency');
      } else {
        message += ' (no decisive log line found)';
      }
      findings.push({
        code,
        analyzer: NAME,
        domain: 'compute',
        severity,
        resource: podRef(pod),
        message: `${message}.`,
        evidence,
        confidence,
        related: owner ? [owner] : [],
        remediation,
      });
    }
    return findings;
  },
};
