import type { KubeObject } from '../../cluster/types.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { brokenConfigFile } from '../kube/config-files.js';
import { type ConfigSource, configSourcesOf } from '../kube/config-sources.js';
import { containerGroups, type PodContainer, worstFirst } from '../kube/container-groups.js';
import { describeEvent, type EventSummary, findEvents, formatAge, isRecent } from '../kube/events.js';
import { EvidenceList, nameList } from '../kube/evidence-list.js';
import { crashLog, decisiveLogLine, type LogVerdict, parseUnresolvedHost, quoteVerdict } from '../kube/log-verdicts.js';
import { ownerOf, ownerRefOf, podsOwnedBy } from '../kube/pod-owners.js';
import { type ContainerView, containers, isoAge, isPodReady, namespacePods, podRef, ref } from '../kube/pods.js';
import { REVISION_ANNOTATION, revisionChanges, rolloutLine } from '../kube/revisions.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

/** Log lines whose cause another analyzer follows to the object to change. */
const OWNED_ELSEWHERE = /is forbidden: User \\?"system:serviceaccount:|no space left on device|disk quota exceeded/i;

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
function isCrashLooping(now: Date, c: ContainerView): boolean {
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
  return `${c.init ? 'init container' : 'container'} ${c.name}: ${state}, ${c.restartCount} restarts, last exit code ${Number.isNaN(code) ? '?' : code}${last?.reason ? ` (${last.reason})` : ''}${meaning ? ` = ${meaning}` : ''}`;
}

/** Events of the group's pods that name this container (by field path or message). */
function containerEvents(ctx: AnalyzerContext, group: readonly PodContainer[], reasons: string[]): EventSummary[] {
  return group.flatMap(({ pod, c }) =>
    findEvents(ctx, { kind: 'Pod', name: pod.metadata.name, namespace: pod.metadata.namespace, reasons }).filter(
      (e) =>
        isRecent(ctx.now, e.last) &&
        (e.fieldPath === undefined || e.fieldPath.includes(`{${c.name}}`) || e.message.includes(c.name)),
    ),
  );
}

interface LivenessRestarts {
  /** Kubelet "failed liveness probe, will be restarted" kills seen as events. */
  kills: number;
  /** Recent "Liveness probe failed" events. */
  failures: number;
  /** No kill event was read, but the probe fails and the container ends on the kubelet's stop signal. */
  inferred: boolean;
}

/**
 * Whether the kubelet, not the program, ends the container. The kill events are Normal events, which a read of
 * warnings alone misses; a failing liveness probe plus a last exit on SIGTERM/SIGKILL tells the same story.
 */
function livenessRestarts(ctx: AnalyzerContext, group: readonly PodContainer[], c: ContainerView): LivenessRestarts {
  const kills = containerEvents(ctx, group, ['Killing'])
    .filter((e) => /failed liveness probe/i.test(e.message))
    .reduce((n, e) => n + e.count, 0);
  const failures = containerEvents(ctx, group, ['Unhealthy'])
    .filter((e) => /^Liveness probe failed/i.test(e.message))
    .reduce((n, e) => n + e.count, 0);
  const exit = Number((c.lastTerminated ?? c.terminated)?.exitCode);
  const inferred = kills === 0 && failures > 0 && c.spec?.livenessProbe !== undefined && (exit === 143 || exit === 137);
  return { kills, failures, inferred };
}

/** Whether a permission problem names a path the pod mounts: then the volume, not the app, is the suspect. */
function mountedPath(c: ContainerView, line: string): string | undefined {
  const mounts: { mountPath?: string }[] = Array.isArray(c.spec?.volumeMounts) ? c.spec.volumeMounts : [];
  return mounts.map((m) => m.mountPath ?? '').find((p) => p !== '' && line.includes(p));
}

/** Log lines of the group that report a failed name lookup, most decisive first. */
function unresolvedIn(ctx: AnalyzerContext, group: readonly PodContainer[], verdict: LogVerdict | undefined) {
  const lines = [
    ...(verdict ? [verdict.line] : []),
    ...group.flatMap(({ pod, c }) => (crashLog(ctx, pod, c.name) ?? '').split(/\r?\n/).reverse()),
  ];
  for (const line of lines) {
    const host = parseUnresolvedHost(line);
    if (host) return { ...host, line: line.trim() };
  }
  return undefined;
}

interface WrongHost {
  host: string;
  source: ConfigSource | undefined;
  evidence: string[];
}

/**
 * A crash on a lookup the resolver answered with "no such name" is a wrong name, not a DNS outage, when the name
 * comes from the container's configuration or is a Service that does not exist. Undefined when the evidence does
 * not say which (the Service exists, or lookups merely time out): the DNS analyzers own that.
 */
function wrongHost(
  ctx: AnalyzerContext,
  pod: KubeObject,
  c: ContainerView,
  group: readonly PodContainer[],
  verdict: LogVerdict | undefined,
): WrongHost | undefined {
  const unresolved = unresolvedIn(ctx, group, verdict);
  if (!unresolved?.nameDoesNotExist) return undefined;
  const namespace = pod.metadata.namespace ?? ctx.namespace;
  const evidence: string[] = [];
  const service = serviceNamed(ctx, unresolved.host, namespace);
  if (service?.exists) return undefined;
  if (service) evidence.push(service.line);
  const sources = configSourcesOf(ctx, pod, c, unresolved.host);
  const source = sources.find((s) => s.configMap !== undefined) ?? sources[0];
  if (source === undefined && service === undefined) return undefined;
  if (source) {
    evidence.unshift(
      `${unresolved.host} comes from ${source.configMap ? `ConfigMap ${source.configMap} key ${source.key} (${source.via})` : `the pod spec (${source.via})`}`,
    );
  }
  return { host: unresolved.host, source, evidence };
}

/**
 * The Service a cluster-internal host name means (`db`, `db.shop`, `db.shop.svc.cluster.local`), and whether it
 * exists; undefined for outside names and for namespaces whose Services were not read.
 */
function serviceNamed(
  ctx: AnalyzerContext,
  host: string,
  namespace: string,
): { exists: boolean; line: string } | undefined {
  const labels = host.toLowerCase().split('.');
  if (labels.length > 2 && labels[2] !== 'svc') return undefined;
  const name = labels[0] as string;
  const ns = labels[1] ?? namespace;
  const services = ctx.objects('services').filter((s) => (s.metadata.namespace ?? ctx.namespace) === ns);
  if (services.length === 0) return undefined;
  const exists = services.some((s) => s.metadata.name === name);
  return {
    exists,
    line: exists
      ? `Service ${name} exists in ${ns}`
      : `no Service ${name} in namespace ${ns} (Services there: ${nameList(
          services.map((s) => s.metadata.name),
          8,
        )})`,
  };
}

/** Ready replicas of the same owner: they show the image works and what differs is when or where a pod started. */
function readySiblings(ctx: AnalyzerContext, pod: KubeObject, group: readonly PodContainer[]): KubeObject[] {
  const owner = ownerRefOf(ctx, pod);
  if (owner === undefined) return [];
  const failing = new Set(group.map((g) => g.pod.metadata.name));
  return podsOwnedBy(ctx, owner.kind, owner.name).filter(
    (p) => (p.metadata.namespace ?? ctx.namespace) === ctx.namespace && !failing.has(p.metadata.name) && isPodReady(p),
  );
}

/** A crash-looping container with the replicas that crash the same way, worst first, and what was read about it. */
interface Crash {
  pod: KubeObject;
  c: ContainerView;
  group: PodContainer[];
  owner: ResourceRef | undefined;
  last: ContainerView['lastTerminated'];
}

/** The decisive line of the first replica whose previous run left one. */
function firstVerdict(ctx: AnalyzerContext, group: readonly PodContainer[]): LogVerdict | undefined {
  let verdict: LogVerdict | undefined;
  for (const { pod: p, c: cc } of group) {
    verdict = decisiveLogLine(crashLog(ctx, p, cc.name));
    if (verdict) break;
  }
  return verdict;
}

/** Ranks: the state and the program's own last words first, then what explains them, then the history. */
function crashEvidence(ctx: AnalyzerContext, crash: Crash, verdict: LogVerdict | undefined): EvidenceList {
  const { pod, c, group, owner, last } = crash;
  const backoff = containerEvents(ctx, group, ['BackOff'])[0];
  const what = `${c.init ? 'init container' : 'container'} ${c.name}`;
  const evidence = new EvidenceList().add(0, terminationLine(c));
  if (c.init) {
    const app = containers(pod)
      .filter((x) => !x.init)
      .map((x) => x.name);
    evidence.add(
      1,
      `pod ${pod.metadata.name}: Init:CrashLoopBackOff; ${app.length > 0 ? `container(s) ${app.join(', ')} cannot start` : 'the pod cannot start'} until init container ${c.name} succeeds`,
    );
  }
  if (verdict) evidence.add(1, `log of ${what} (previous run): ${quoteVerdict(verdict)}`);
  if (group.length > 1) {
    evidence.add(
      3,
      `${group.length} pods of ${owner?.kind} ${owner?.name} crash the same way: ${nameList(group.map((g) => g.pod.metadata.name))}`,
    );
  }
  return evidence
    .add(4, revisionChanges(ctx, pod))
    .add(5, rolloutLine(ctx, pod))
    .add(6, backoff && describeEvent(backoff, ctx.now))
    .add(7, last?.finishedAt && `last crash ${formatAge(isoAge(ctx.now, last.finishedAt))} ago`);
}

/** What the crashes say about their cause, and the message, confidence and fix that follow from it. */
interface CrashCause {
  code: string;
  confidence: number;
  severity: FindingInput['severity'];
  message: string;
  fixOwner: ResourceRef | undefined;
  /** What to change in the fix owner, when the evidence says precisely. */
  change?: string;
  related: ResourceRef[];
  remediation: string[];
}

function crashCause(
  ctx: AnalyzerContext,
  crash: Crash,
  verdict: LogVerdict | undefined,
  ready: readonly KubeObject[],
  evidence: EvidenceList,
): CrashCause {
  const { pod, c, group, owner, last } = crash;
  const liveness = livenessRestarts(ctx, group, c);
  let code = 'CONTAINER_CRASHLOOP';
  let confidence = verdict ? 0.75 : 0.55;
  let severity: FindingInput['severity'] = 'high';
  let message = c.init
    ? `Init container ${c.name} of pod ${pod.metadata.name} keeps failing (Init:CrashLoopBackOff), so the pod never starts`
    : `Container ${c.name} of pod ${pod.metadata.name} is crash-looping`;
  let fixOwner: ResourceRef | undefined;
  let change: string | undefined;
  const related: ResourceRef[] = owner ? [owner] : [];
  const remediation = ['inspect-previous-logs'];
  const wrong =
    verdict?.kind === 'dns' || verdict?.kind === 'dependency' ? wrongHost(ctx, pod, c, group, verdict) : undefined;
  const broken = group
    .map((g) => brokenConfigFile(ctx, g.pod, g.c, crashLog(ctx, g.pod, g.c.name)))
    .find((b) => b !== undefined);
  if (liveness.kills > 0 || liveness.inferred) {
    // The kubelet is killing a healthy-enough process: the probe, not the app, decides the restarts.
    confidence = 0.45;
    severity = 'medium';
    if (liveness.kills > 0) {
      message += `; the restarts are liveness-probe kills (${liveness.kills} recent)`;
      evidence.add(1, `${liveness.kills} "failed liveness probe, will be restarted" kills in the last hour`);
    } else {
      message += `; the restarts follow its failing liveness probe (${liveness.failures} recent failures, then exit code ${Number(last?.exitCode)} on the kubelet's stop signal)`;
      evidence.add(1, `${liveness.failures} "Liveness probe failed" events in the last hour`);
    }
  } else if (verdict && OWNED_ELSEWHERE.test(verdict.line)) {
    // Access refused by RBAC, a full volume: the access and volume-capacity analyzers name what to change.
    confidence = 0.55;
    message += `: ${quoteVerdict(verdict)}`;
  } else if (broken) {
    // The program names a syntax error and the ConfigMap value it reads in that format does not parse: the value
    // is what changed, and every replica that starts reads it again.
    code = 'CONTAINER_CRASHLOOP_CONFIG_ERROR';
    confidence = 0.92;
    message += `: it cannot parse ${broken.where} (ConfigMap ${broken.configMap} key ${broken.key}): ${broken.complaint}`;
    evidence.add(
      1,
      `ConfigMap ${broken.configMap} key ${broken.key} (${broken.where}) is not valid ${broken.format}: ${broken.error}`,
    );
    fixOwner = ref('ConfigMap', broken.configMap, pod.metadata.namespace ?? ctx.namespace);
    related.push(fixOwner);
    change = `make ConfigMap ${broken.configMap} key ${broken.key} valid ${broken.format} again (${broken.error})`;
    remediation.unshift('fix-config');
  } else if (verdict?.kind === 'config') {
    code = 'CONTAINER_CRASHLOOP_CONFIG_ERROR';
    confidence = 0.9;
    message += ` because of its configuration: ${quoteVerdict(verdict)}`;
    remediation.unshift('fix-config');
  } else if (wrong && verdict) {
    // "No such host" is the resolver's authoritative answer: the name is wrong, wherever it was written.
    code = 'CONTAINER_CRASHLOOP_CONFIG_ERROR';
    confidence = wrong.source?.configMap ? 0.9 : 0.8;
    const cm = wrong.source?.configMap;
    message += `: it connects to ${wrong.host}, a name that does not exist${cm ? ` (set by ConfigMap ${cm} key ${wrong.source?.key})` : ''}: ${quoteVerdict(verdict)}`;
    for (const line of wrong.evidence) evidence.add(2, line);
    if (cm) {
      fixOwner = ref('ConfigMap', cm, pod.metadata.namespace ?? ctx.namespace);
      related.push(fixOwner);
      if (ready.length > 0) {
        evidence.add(
          3,
          `${nameList(ready.map((p) => p.metadata.name))} of ${owner?.kind} ${owner?.name} are ready: a container reads env from a ConfigMap only when it starts`,
        );
      }
    }
    remediation.unshift('fix-config');
  } else if (verdict?.kind === 'permission' && mountedPath(c, verdict.line)) {
    confidence = 0.55;
    message += `: permission denied on mounted path ${mountedPath(c, verdict.line)}`;
  } else if (verdict?.kind === 'dns' || verdict?.kind === 'platform') {
    // Another analyzer owns the cause (DNS, image platform); the crash loop is how it shows.
    confidence = 0.55;
    message += `: ${quoteVerdict(verdict)}`;
  } else if (verdict) {
    message += `: ${quoteVerdict(verdict)}`;
    if (verdict.kind === 'dependency') remediation.unshift('check-dependency');
  } else {
    message += ' (no decisive log line found)';
  }
  return { code, confidence, severity, message, fixOwner, related, remediation, ...(change ? { change } : {}) };
}

function crashFinding(ctx: AnalyzerContext, crash: Crash): FindingInput {
  const { pod, group, owner } = crash;
  const verdict = firstVerdict(ctx, group);
  const evidence = crashEvidence(ctx, crash, verdict);
  const ready = readySiblings(ctx, pod, group);
  const { code, confidence, severity, message, fixOwner, change, related, remediation } = crashCause(
    ctx,
    crash,
    verdict,
    ready,
    evidence,
  );
  if (ready.length > 0 && fixOwner === undefined) {
    // Replicas of the same owner that run fine narrow the cause to what differs: start time, node, revision.
    evidence.add(
      4,
      `ready replicas of ${owner?.kind} ${owner?.name}: ${nameList(
        ready.map((p) => (p.spec?.nodeName ? `${p.metadata.name} (node ${p.spec.nodeName})` : p.metadata.name)),
        4,
      )}`,
    );
  }
  return {
    code,
    analyzer: NAME,
    domain: 'compute',
    severity,
    resource: podRef(pod),
    message: `${message}.`,
    evidence: evidence.lines(),
    confidence,
    related,
    remediation,
    ...(fixOwner ? { owner: fixOwner } : {}),
    ...(change ? { change } : {}),
  };
}

export const crashloopAnalyzer: Analyzer = {
  name: NAME,
  domain: 'compute',
  description: 'Containers in CrashLoopBackOff, with exit codes and the decisive line of the crashed container log.',
  needs: ['pods', 'events'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    const failingOwners = new Set<string>();
    for (const unordered of containerGroups(ctx, (c) => isCrashLooping(ctx.now, c))) {
      const group = worstFirst(unordered);
      const { pod, c } = group[0]!;
      const owner = ownerOf(ctx, pod);
      if (owner) failingOwners.add(`${owner.kind}/${owner.name}`);
      const last = c.lastTerminated ?? c.terminated;
      // OOM kills have their own analyzer with memory evidence; repeating them here would only add noise.
      if (last?.reason === 'OOMKilled') continue;
      findings.push(crashFinding(ctx, { pod, c, group, owner, last }));
    }
    findings.push(...resolvedCrashLoops(ctx, failingOwners));
    return findings;
  },
};

const CRASH_EVENTS: readonly { reason: string; message: RegExp }[] = [
  { reason: 'BackOff', message: /^Back-off restarting failed container/i },
  { reason: 'Unhealthy', message: /^Liveness probe failed/i },
  { reason: 'Killing', message: /failed liveness probe/i },
];

/**
 * Crash-loop warnings left behind by pods that no longer exist, whose Deployment has since rolled out a revision
 * that runs fully: history an engineer paged earlier wants confirmed, reported as cleared (never a root cause).
 */
function resolvedCrashLoops(ctx: AnalyzerContext, failingOwners: ReadonlySet<string>): FindingInput[] {
  if (ctx.unavailable.has('pods') || ctx.unavailable.has('replicasets')) return [];
  const replicaSets = ctx
    .objects('replicasets')
    .filter((r) => (r.metadata.namespace ?? ctx.namespace) === ctx.namespace);
  // Every warning left behind is traced to a ReplicaSet of the namespace: with none read, none is.
  if (replicaSets.length === 0) return [];
  const present = new Set(namespacePods(ctx).map((p) => p.metadata.name));
  const byReplicaSet = new Map<string, { rs: KubeObject; pods: Set<string>; events: EventSummary[] }>();
  for (const { reason, message } of CRASH_EVENTS) {
    for (const e of findEvents(ctx, { kind: 'Pod', namespace: ctx.namespace, reasons: [reason], message })) {
      if (present.has(e.involvedName)) continue;
      // Pods of a ReplicaSet are named `<replicaset>-<5 characters>`.
      const rs = replicaSets.find((r) => e.involvedName.startsWith(`${r.metadata.name}-`));
      if (rs === undefined || e.involvedName.length !== rs.metadata.name.length + 6) continue;
      const entry = byReplicaSet.get(rs.metadata.name) ?? { rs, pods: new Set<string>(), events: [] };
      entry.pods.add(e.involvedName);
      entry.events.push(e);
      byReplicaSet.set(rs.metadata.name, entry);
    }
  }
  const findings: FindingInput[] = [];
  for (const { rs, pods, events } of byReplicaSet.values()) {
    const deploymentName = rs.metadata.ownerReferences?.find((o) => o.kind === 'Deployment')?.name;
    if (deploymentName === undefined || failingOwners.has(`Deployment/${deploymentName}`)) continue;
    if (Number(rs.spec?.replicas ?? 0) !== 0 || Number(rs.status?.replicas ?? 0) !== 0) continue;
    const deployment = ctx
      .objects('deployments')
      .find((d) => d.metadata.name === deploymentName && d.metadata.namespace === rs.metadata.namespace);
    const want = Number(deployment?.spec?.replicas ?? 1);
    const revision = deployment?.metadata.annotations?.[REVISION_ANNOTATION];
    const current = replicaSets.find(
      (r) =>
        r.metadata.annotations?.[REVISION_ANNOTATION] === revision &&
        r.metadata.ownerReferences?.some((o) => o.kind === 'Deployment' && o.name === deploymentName),
    );
    if (deployment === undefined || current === undefined || current === rs) continue;
    if (Number(deployment.status?.availableReplicas ?? 0) < want || Number(current.status?.readyReplicas ?? 0) < want)
      continue;
    const running = namespacePods(ctx).filter(
      (p) => p.metadata.ownerReferences?.some((o) => o.name === current.metadata.name) && isPodReady(p),
    );
    const newest = events.sort((a, b) => (b.last?.getTime() ?? 0) - (a.last?.getTime() ?? 0))[0]!;
    const revisionOf = (r: KubeObject) => r.metadata.annotations?.[REVISION_ANNOTATION];
    const gone = [...pods].sort();
    const deploymentRef = ref('Deployment', deploymentName, ctx.namespace);
    findings.push({
      code: 'CONTAINER_CRASHLOOP_RESOLVED',
      analyzer: NAME,
      domain: 'compute',
      severity: 'info',
      resource: ref('Pod', gone[0]!, ctx.namespace),
      owner: deploymentRef,
      message: `The earlier crash loop of Deployment ${deploymentName} has ended: pods of ReplicaSet ${rs.metadata.name}${revisionOf(rs) ? ` (revision ${revisionOf(rs)})` : ''} crash-looped until ${formatAge(isoAge(ctx.now, newest.last?.toISOString()))} ago and are gone; ReplicaSet ${current.metadata.name} (revision ${revision}) runs ${want}/${want} ready${running.length > 0 ? `: ${nameList(running.map((p) => p.metadata.name))}` : ''}.`,
      evidence: [
        ...events.slice(0, 2).map((e) => `${e.involvedName}: ${describeEvent(e, ctx.now)}`),
        `crash-looping pods (no longer exist): ${nameList(gone)}`,
        `Deployment ${deploymentName}: revision ${revision}, ${deployment.status?.availableReplicas}/${want} available`,
      ],
      confidence: 0.8,
      related: [deploymentRef, ref('ReplicaSet', current.metadata.name, ctx.namespace)],
      remediation: [],
      stale: `pod ${gone[0]} no longer exists; Deployment ${deploymentName} has rolled out revision ${revision} with ${want}/${want} replicas available`,
    });
  }
  return findings;
}
