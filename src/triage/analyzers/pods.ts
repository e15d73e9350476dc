import type { KubeObject } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyzer.js';
import type { ResourceRef } from '../findings.js';
import { scrubText } from '../scrub.js';
import { clip } from './events.js';

/** Pod and container state helpers shared by the workload analyzers. */

export interface ContainerView {
  name: string;
  init: boolean;
  // biome-ignore lint/suspicious/noExplicitAny: raw API JSON
  spec: any;
  // biome-ignore lint/suspicious/noExplicitAny: raw API JSON
  status: any;
  restartCount: number;
  waitingReason: string | undefined;
  waitingMessage: string | undefined;
  // biome-ignore lint/suspicious/noExplicitAny: raw API JSON
  lastTerminated: any;
  // biome-ignore lint/suspicious/noExplicitAny: raw API JSON
  terminated: any;
  ready: boolean;
}

export function podRef(pod: KubeObject): ResourceRef {
  return { kind: 'Pod', name: pod.metadata.name, namespace: pod.metadata.namespace };
}

export function ref(kind: string, name: string, namespace?: string): ResourceRef {
  return namespace === undefined ? { kind, name } : { kind, name, namespace };
}

/** Pods of the analysed namespace, in name order. */
export function namespacePods(ctx: AnalyzerContext): KubeObject[] {
  return ctx.objects('pods').filter((p) => (p.metadata.namespace ?? ctx.namespace) === ctx.namespace);
}

export function inNamespace(ctx: AnalyzerContext, objects: readonly KubeObject[]): KubeObject[] {
  return objects.filter((o) => (o.metadata.namespace ?? ctx.namespace) === ctx.namespace);
}

export function containers(pod: KubeObject): ContainerView[] {
  const views: ContainerView[] = [];
  const add = (specs: unknown, statuses: unknown, init: boolean) => {
    const list = Array.isArray(specs) ? specs : [];
    const stats = Array.isArray(statuses) ? statuses : [];
    for (const spec of list) {
      const status = stats.find((s: { name?: string }) => s?.name === spec?.name);
      views.push({
        name: String(spec?.name ?? ''),
        init,
        spec,
        status,
        restartCount: Number(status?.restartCount ?? 0),
        waitingReason: status?.state?.waiting?.reason,
        waitingMessage: status?.state?.waiting?.message,
        lastTerminated: status?.lastState?.terminated,
        terminated: status?.state?.terminated,
        ready: status?.ready === true,
      });
    }
  };
  add(pod.spec?.initContainers, pod.status?.initContainerStatuses, true);
  add(pod.spec?.containers, pod.status?.containerStatuses, false);
  return views;
}

export function podCondition(
  pod: KubeObject,
  type: string,
): { status?: string; reason?: string; message?: string; lastTransitionTime?: string } | undefined {
  const conditions = Array.isArray(pod.status?.conditions) ? pod.status.conditions : [];
  return conditions.find((c: { type?: string }) => c?.type === type);
}

export function isPodReady(pod: KubeObject): boolean {
  return podCondition(pod, 'Ready')?.status === 'True';
}

export function isTerminating(pod: KubeObject): boolean {
  return typeof pod.metadata.deletionTimestamp === 'string';
}

/** The workload that owns a pod: Deployment through its ReplicaSet when visible, else the direct owner. */
export function ownerOf(ctx: AnalyzerContext, pod: KubeObject): ResourceRef | undefined {
  const owner = pod.metadata.ownerReferences?.find((o) => o.controller) ?? pod.metadata.ownerReferences?.[0];
  if (owner === undefined) return undefined;
  const namespace = pod.metadata.namespace;
  if (owner.kind === 'ReplicaSet') {
    const rs = ctx
      .objects('replicasets')
      .find((r) => r.metadata.name === owner.name && r.metadata.namespace === namespace);
    const deploy = rs?.metadata.ownerReferences?.find((o) => o.kind === 'Deployment');
    if (deploy !== undefined) return ref('Deployment', deploy.name, namespace);
    // ReplicaSet names are `<deployment>-<pod-template-hash>`: good enough when the ReplicaSet was not read.
    const hash = pod.metadata.labels?.['pod-template-hash'];
    if (rs === undefined && hash !== undefined && owner.name.endsWith(`-${hash}`)) {
      return ref('Deployment', owner.name.slice(0, -hash.length - 1), namespace);
    }
  }
  return ref(owner.kind, owner.name, namespace);
}

/** Group key so that 30 replicas of one Deployment produce one finding, not thirty. */
export function ownerKey(ctx: AnalyzerContext, pod: KubeObject): string {
  const owner = ownerOf(ctx, pod);
  return owner === undefined ? `Pod/${pod.metadata.name}` : `${owner.kind}/${owner.name}`;
}

export function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list === undefined) groups.set(k, [item]);
    else list.push(item);
  }
  return new Map([...groups.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

export interface PodContainer {
  pod: KubeObject;
  c: ContainerView;
}

/**
 * The namespace's containers that pass `test`, grouped by owning workload and container name in key order, so
 * thirty failing replicas of one Deployment make one finding.
 */
export function containerGroups(ctx: AnalyzerContext, test: (c: ContainerView) => boolean): PodContainer[][] {
  const matching = namespacePods(ctx).flatMap((pod) =>
    containers(pod)
      .filter(test)
      .map((c) => ({ pod, c })),
  );
  return [...groupBy(matching, ({ pod, c }) => `${ownerKey(ctx, pod)}/${c.name}`).values()];
}

export interface LogVerdict {
  line: string;
  score: number;
  /** What kind of failure the line reports. */
  kind: 'config' | 'dependency' | 'permission' | 'crash' | 'oom' | 'dns' | 'platform' | 'error';
}

interface LogPattern {
  pattern: RegExp;
  score: number;
  kind: LogVerdict['kind'];
}

/**
 * Patterns ordered by how decisive a line is for a crash: a named missing setting beats a generic "Error:", and a
 * panic message beats the goroutine dump that follows it.
 */
const LOG_PATTERNS: readonly LogPattern[] = [
  { pattern: /exec format error/i, score: 100, kind: 'platform' },
  {
    pattern:
      /\b(missing|required)\b.*\b(env(ironment)?( variable)?|config(uration)?|setting|option|key|flag|parameter)\b/i,
    score: 95,
    kind: 'config',
  },
  {
    pattern:
      /\b(env(ironment)? variable|config(uration)?( key| value)?)\b.*\b(not set|is required|missing|undefined|empty)\b/i,
    score: 95,
    kind: 'config',
  },
  {
    pattern:
      /\binvalid (configuration|config|value|argument|setting)\b|\bunknown (flag|option|field)\b|\bfailed to (load|parse|read) (config|configuration|settings)/i,
    score: 90,
    kind: 'config',
  },
  {
    pattern: /java\.lang\.OutOfMemoryError|out of memory|cannot allocate memory|JavaScript heap out of memory/i,
    score: 88,
    kind: 'oom',
  },
  { pattern: /permission denied|operation not permitted|read-only file system/i, score: 85, kind: 'permission' },
  {
    pattern: /no such file or directory|not found in \$PATH|cannot find (module|file)|ENOENT/i,
    score: 85,
    kind: 'config',
  },
  {
    pattern:
      /no such host|server misbehaving|temporary failure in name resolution|EAI_AGAIN|ENOTFOUND|UnknownHostException|lookup \S+ on \S+:53/i,
    score: 82,
    kind: 'dns',
  },
  {
    pattern:
      /connection refused|ECONNREFUSED|could not connect|unable to connect|connection reset|i\/o timeout|ETIMEDOUT|Connection timed out/i,
    score: 80,
    kind: 'dependency',
  },
  {
    pattern:
      /^\s*panic:|\bFATAL\b|\bfatal error\b|Traceback \(most recent call last\)|Unhandled(Promise)?Rejection|uncaught exception/i,
    score: 70,
    kind: 'crash',
  },
  { pattern: /\bError:|\bERROR\b|\bexception\b|\[error\]|level=error|"level":"error"/i, score: 50, kind: 'error' },
];

/** The most decisive line of a log (later lines win ties: the last words before a crash matter most). */
export function decisiveLogLine(text: string | undefined): LogVerdict | undefined {
  if (text === undefined) return undefined;
  let best: LogVerdict | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.length > 2000) continue;
    for (const p of LOG_PATTERNS) {
      if (!p.pattern.test(line)) continue;
      if (best === undefined || p.score >= best.score)
        best = { line: clip(scrubText(line)), score: p.score, kind: p.kind };
      break;
    }
  }
  return best;
}

/** Logs of a container: previous instance first (the one that crashed), then the current one. */
export function crashLog(ctx: AnalyzerContext, pod: KubeObject, container: string): string | undefined {
  const namespace = pod.metadata.namespace;
  const previous = ctx.log(pod.metadata.name, container, true, namespace);
  const current = ctx.log(pod.metadata.name, container, false, namespace);
  if (previous === undefined) return current;
  if (current === undefined) return previous;
  return `${previous}\n${current}`;
}

export function isoAge(now: Date, iso: unknown): number {
  if (typeof iso !== 'string') return Number.POSITIVE_INFINITY;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? Number.POSITIVE_INFINITY : Math.max(0, now.getTime() - t);
}
