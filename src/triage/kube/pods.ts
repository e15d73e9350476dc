import type { KubeObject, ResourceKind } from '../../cluster/types.js';
import { byCodePoint } from '../../code-point-order.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import { entriesOf } from './entries.js';
import type { ResourceRef } from '../envelope/findings.js';
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

/**
 * Most analyzers walk every pod of the namespace, several of them per pod or per group: what they all ask of the
 * pods (which are in the namespace, their containers, their owners) is worked out once per context.
 */
const podsByContext = new WeakMap<AnalyzerContext, readonly KubeObject[]>();

/** Pods of the analysed namespace, in name order. Shared by every caller: never changed. */
export function namespacePods(ctx: AnalyzerContext): readonly KubeObject[] {
  let pods = podsByContext.get(ctx);
  if (pods === undefined) {
    pods = ctx.objects('pods').filter((p) => (p.metadata.namespace ?? ctx.namespace) === ctx.namespace);
    podsByContext.set(ctx, pods);
  }
  return pods;
}

export function inNamespace(ctx: AnalyzerContext, objects: readonly KubeObject[]): KubeObject[] {
  return objects.filter((o) => (o.metadata.namespace ?? ctx.namespace) === ctx.namespace);
}

/** A pod's containers depend on the pod alone, and pods read from a cluster are never changed. */
const containersByPod = new WeakMap<KubeObject, readonly ContainerView[]>();

/** Init containers first, then the others, each with its status. Shared by every caller: never changed. */
export function containers(pod: KubeObject): readonly ContainerView[] {
  let views = containersByPod.get(pod);
  if (views === undefined) {
    views = containerViews(pod);
    containersByPod.set(pod, views);
  }
  return views;
}

const NO_STATUSES: readonly unknown[] = [];

function containerViews(pod: KubeObject): ContainerView[] {
  const views: ContainerView[] = [];
  addViews(views, pod.spec?.initContainers, pod.status?.initContainerStatuses, true);
  addViews(views, pod.spec?.containers, pod.status?.containerStatuses, false);
  return views;
}

// biome-ignore lint/suspicious/noExplicitAny: raw API JSON
function addViews(views: ContainerView[], specs: any, statuses: any, init: boolean): void {
  if (!Array.isArray(specs)) return;
  const stats = Array.isArray(statuses) ? statuses : NO_STATUSES;
  for (let i = 0; i < specs.length; i++) {
    const spec = specs[i];
    const status = statusNamed(stats, spec?.name);
    const state = status?.state;
    views.push({
      name: String(spec?.name ?? ''),
      init,
      spec,
      status,
      restartCount: Number(status?.restartCount ?? 0),
      waitingReason: state?.waiting?.reason,
      waitingMessage: state?.waiting?.message,
      lastTerminated: status?.lastState?.terminated,
      terminated: state?.terminated,
      ready: status?.ready === true,
    });
  }
}

/** The first status with this name, as the kubelet reports one per container. */
// biome-ignore lint/suspicious/noExplicitAny: raw API JSON
function statusNamed(stats: readonly any[], name: unknown): any {
  for (let i = 0; i < stats.length; i++) if (stats[i]?.name === name) return stats[i];
  return undefined;
}

export function podCondition(
  pod: KubeObject,
  type: string,
): { status?: string; reason?: string; message?: string; lastTransitionTime?: string } | undefined {
  const conditions = pod.status?.conditions;
  if (!Array.isArray(conditions)) return undefined;
  for (let i = 0; i < conditions.length; i++) if (conditions[i]?.type === type) return conditions[i];
  return undefined;
}

export function isPodReady(pod: KubeObject): boolean {
  return podCondition(pod, 'Ready')?.status === 'True';
}

export function isTerminating(pod: KubeObject): boolean {
  return typeof pod.metadata.deletionTimestamp === 'string';
}

/**
 * The workload a person edits for a pod (or a ReplicaSet or Job): the Deployment through its ReplicaSet, the CronJob
 * through its Job, else the direct controller.
 */
export function ownerOf(ctx: AnalyzerContext, pod: KubeObject): ResourceRef | undefined {
  const owner = ownerRefOf(ctx, pod);
  // Each caller gets a reference of its own, as a lookup would give it.
  return owner === undefined ? undefined : { ...owner };
}

/** The owner ownerOf gives, shared rather than copied: for comparing, never for handing on or changing. */
export function ownerRefOf(ctx: AnalyzerContext, pod: KubeObject): Readonly<ResourceRef> | undefined {
  return ownerIn(ownersOf(ctx), ctx, pod);
}

function ownersOf(ctx: AnalyzerContext): Map<KubeObject, ResourceRef | undefined> {
  let owners = ownersByContext.get(ctx);
  if (owners === undefined) {
    owners = new Map();
    ownersByContext.set(ctx, owners);
  }
  return owners;
}

function ownerIn(
  owners: Map<KubeObject, ResourceRef | undefined>,
  ctx: AnalyzerContext,
  pod: KubeObject,
): Readonly<ResourceRef> | undefined {
  let owner = owners.get(pod);
  if (owner === undefined && !owners.has(pod)) {
    owner = findOwner(ctx, pod);
    owners.set(pod, owner);
  }
  return owner;
}

const podsByOwnerByContext = new WeakMap<AnalyzerContext, Map<string, Map<string, KubeObject[]>>>();
const NO_PODS: readonly KubeObject[] = [];

/**
 * The pods read, in any namespace, whose owner (as ownerOf gives it) has this kind and name, in the context's
 * order: replicas of a workload, found without another walk over every pod.
 */
export function podsOwnedBy(ctx: AnalyzerContext, kind: string, name: string): readonly KubeObject[] {
  let index = podsByOwnerByContext.get(ctx);
  if (index === undefined) {
    index = new Map();
    const pods = ctx.objects('pods');
    const owners = ownersOf(ctx);
    for (let i = 0; i < pods.length; i++) {
      const pod = pods[i] as KubeObject;
      const owner = ownerIn(owners, ctx, pod);
      if (owner === undefined) continue;
      let byName = index.get(owner.kind);
      if (byName === undefined) {
        byName = new Map();
        index.set(owner.kind, byName);
      }
      const list = byName.get(owner.name);
      if (list === undefined) byName.set(owner.name, [pod]);
      else list.push(pod);
    }
    podsByOwnerByContext.set(ctx, index);
  }
  return index.get(kind)?.get(name) ?? NO_PODS;
}

/** Asked for every pod by several analyzers, for some pods many times: found once per context. */
const ownersByContext = new WeakMap<AnalyzerContext, Map<KubeObject, ResourceRef | undefined>>();

function findOwner(ctx: AnalyzerContext, pod: KubeObject): ResourceRef | undefined {
  const owner = controllerOf(pod.metadata.ownerReferences);
  if (owner === undefined) return undefined;
  const namespace = pod.metadata.namespace;
  if (owner.kind === 'Job') {
    const job = byName(ctx, 'jobs', namespace, owner.name);
    const cron = job?.metadata.ownerReferences?.find((o) => o.kind === 'CronJob');
    if (cron !== undefined) return ref('CronJob', cron.name, namespace);
  }
  if (owner.kind === 'ReplicaSet') {
    const rs = byName(ctx, 'replicasets', namespace, owner.name);
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

/** The controlling owner reference, else the first. */
function controllerOf<T extends { controller?: boolean }>(refs: readonly T[] | undefined): T | undefined {
  const entries = entriesOf<T>(refs);
  for (let i = 0; i < entries.length; i++) if ((entries[i] as T).controller) return entries[i];
  return entries[0];
}

type Named = Map<string | undefined, Map<string, KubeObject>>;
const namedByContext = new WeakMap<AnalyzerContext, Map<ResourceKind, Named>>();

/** The first object of a kind with this exact namespace and name, as a search in read order would find it. */
function byName(
  ctx: AnalyzerContext,
  kind: ResourceKind,
  namespace: string | undefined,
  name: string,
): KubeObject | undefined {
  let kinds = namedByContext.get(ctx);
  if (kinds === undefined) {
    kinds = new Map();
    namedByContext.set(ctx, kinds);
  }
  let named = kinds.get(kind);
  if (named === undefined) {
    named = new Map();
    for (const object of ctx.objects(kind)) {
      let inNamespace = named.get(object.metadata.namespace);
      if (inNamespace === undefined) {
        inNamespace = new Map();
        named.set(object.metadata.namespace, inNamespace);
      }
      if (!inNamespace.has(object.metadata.name)) inNamespace.set(object.metadata.name, object);
    }
    kinds.set(kind, named);
  }
  return named.get(namespace)?.get(name);
}

/** Group key so that 30 replicas of one Deployment produce one finding, not thirty. */
export function ownerKey(ctx: AnalyzerContext, pod: KubeObject): string {
  const owner = ownerRefOf(ctx, pod);
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
  return new Map([...groups.entries()].sort(([a], [b]) => byCodePoint(a, b)));
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
  const all = namespaceContainers(ctx);
  const matching: PodContainer[] = [];
  for (let i = 0; i < all.views.length; i++) {
    const c = all.views[i] as ContainerView;
    if (test(c)) matching.push({ pod: all.pods[i] as KubeObject, c });
  }
  return [...groupBy(matching, ({ pod, c }) => `${ownerKey(ctx, pod)}/${c.name}`).values()];
}

/** Every container of the namespace's pods, pod by pod in name order, beside the pod it belongs to. */
interface NamespaceContainers {
  pods: readonly KubeObject[];
  views: readonly ContainerView[];
}

const containersByContext = new WeakMap<AnalyzerContext, NamespaceContainers>();

function namespaceContainers(ctx: AnalyzerContext): NamespaceContainers {
  let all = containersByContext.get(ctx);
  if (all === undefined) {
    const owners: KubeObject[] = [];
    const list: ContainerView[] = [];
    const pods = namespacePods(ctx);
    for (let i = 0; i < pods.length; i++) {
      const pod = pods[i] as KubeObject;
      const views = containers(pod);
      for (let j = 0; j < views.length; j++) {
        owners.push(pod);
        list.push(views[j] as ContainerView);
      }
    }
    all = { pods: owners, views: list };
    containersByContext.set(ctx, all);
  }
  return all;
}

/** Calls `visit` with every container of the namespace's pods, pod by pod in name order, beside its pod. */
export function forEachContainer(ctx: AnalyzerContext, visit: (pod: KubeObject, c: ContainerView) => void): void {
  const all = namespaceContainers(ctx);
  for (let i = 0; i < all.views.length; i++) visit(all.pods[i] as KubeObject, all.views[i] as ContainerView);
}

const crashedByContext = new WeakMap<AnalyzerContext, NamespaceContainers>();

/**
 * Calls `visit` with every container of the namespace's pods that has restarted or waits in CrashLoopBackOff (the
 * ones with a crashed run whose log tells why), pod by pod in name order, beside its pod. Several analyzers read
 * those logs; the few such containers among thousands are picked out once per context.
 */
export function forEachCrashedContainer(
  ctx: AnalyzerContext,
  visit: (pod: KubeObject, c: ContainerView) => void,
): void {
  let crashed = crashedByContext.get(ctx);
  if (crashed === undefined) {
    const all = namespaceContainers(ctx);
    const pods: KubeObject[] = [];
    const views: ContainerView[] = [];
    for (let i = 0; i < all.views.length; i++) {
      const c = all.views[i] as ContainerView;
      if (c.restartCount === 0 && c.waitingReason !== 'CrashLoopBackOff') continue;
      pods.push(all.pods[i] as KubeObject);
      views.push(c);
    }
    crashed = { pods, views };
    crashedByContext.set(ctx, crashed);
  }
  for (let i = 0; i < crashed.views.length; i++)
    visit(crashed.pods[i] as KubeObject, crashed.views[i] as ContainerView);
}

export interface LogVerdict {
  line: string;
  score: number;
  /** What kind of failure the line reports. */
  kind: 'config' | 'dependency' | 'permission' | 'crash' | 'oom' | 'dns' | 'platform' | 'error';
  /**
   * The lines that continue the same record right after it (Flyway's "Detected failed migration to version 42"
   * under "Validate failed"), when the program explained itself over several lines.
   */
  detail?: string;
  /** A structured (JSON) record reduced to what a person reads: level, message, error and where it was raised. */
  readable?: string;
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
      /no such host|server misbehaving|temporary failure in name resolution|EAI_AGAIN|ENOTFOUND|UnknownHostException|lookup \S+ on \S+:53|name or service not known|could not translate host name|could not resolve host|nodename nor servname|name does not resolve/i,
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
    pattern: /^\s*panic:|\bFATAL\b|\bfatal error\b|Unhandled(Promise)?Rejection|uncaught exception/i,
    score: 70,
    kind: 'crash',
  },
  {
    // The exception a Python traceback or a Java stack trace ends (or starts) with: `psycopg2.OperationalError: …`,
    // `java.lang.IllegalStateException: …`. The "Traceback (most recent call last):" header itself says nothing.
    pattern: /^(?:Caused by: )?(?:[A-Za-z_$][\w$]*\.)*[A-Za-z_$][\w$]*(?:Error|Exception)(?::\s|$)/,
    score: 68,
    kind: 'crash',
  },
  { pattern: /\bError:|\bERROR\b|\bexception\b|\[error\]|level=error|"level":"error"/i, score: 50, kind: 'error' },
];

/** The most decisive line of a log (later lines win ties: the last words before a crash matter most). */
export function decisiveLogLine(text: string | undefined): LogVerdict | undefined {
  if (text === undefined) return undefined;
  const lines = text.split(/\r?\n/);
  let best: LogVerdict | undefined;
  let bestAt = -1;
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.length > 2000) continue;
    for (const p of LOG_PATTERNS) {
      if (!p.pattern.test(line)) continue;
      if (best === undefined || p.score >= best.score) {
        const readable = readableRecord(line);
        best = {
          line: clip(scrubText(line)),
          score: p.score,
          kind: p.kind,
          ...(readable ? { readable: clip(scrubText(readable)) } : {}),
        };
        bestAt = i;
      }
      break;
    }
  }
  if (best === undefined) return undefined;
  const detail = continuation(lines, bestAt);
  return detail === undefined ? best : { ...best, detail: clip(scrubText(detail)) };
}

/**
 * What kind of failure one log line reports, as decisiveLogLine would classify it on its own; undefined when no
 * pattern matches. For callers that weigh every line of a log, without quoting (and scrubbing) each one.
 */
export function logLineKind(line: string): LogVerdict['kind'] | undefined {
  if (line.includes('\n')) return decisiveLogLine(line)?.kind;
  const trimmed = line.trim();
  if (trimmed === '' || trimmed.length > 2000) return undefined;
  for (const p of LOG_PATTERNS) if (p.pattern.test(trimmed)) return p.kind;
  return undefined;
}

/** A line that opens a new log record (timestamp, level, JSON) or a stack trace, rather than continuing one. */
const RECORD_START =
  /^(?:\[?\d{4}-\d{2}-\d{2}|\[?\d{2}:\d{2}:\d{2}|[IWEF]\d{4} |\{|\[?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|SEVERE|FATAL|CRITICAL|PANIC)\b|at |goroutine \d|Traceback |File "|Caused by:|\.\.\.)/i;
const MAX_CONTINUATION = 2;

/**
 * The lines right below `at` that carry on its message: not indented (a stack frame), not a new record, no blank
 * line in between. Programs such as Flyway or Spring Boot put the specific reason on the line after the headline.
 */
function continuation(lines: readonly string[], at: number): string | undefined {
  const out: string[] = [];
  for (let i = at + 1; i < lines.length && out.length < MAX_CONTINUATION; i++) {
    const raw = lines[i] as string;
    if (raw.trim() === '' || /^\s/.test(raw) || RECORD_START.test(raw) || raw.length > 2000) break;
    out.push(raw.trim());
  }
  return out.length > 0 ? out.join(' ') : undefined;
}

/** The decisive line as an engineer would quote it: the headline and, when there is one, what follows it. */
export function quoteVerdict(verdict: LogVerdict): string {
  const head = verdict.readable ?? verdict.line;
  return verdict.detail === undefined ? head : clip(`${head} — ${verdict.detail}`);
}

const MESSAGE_FIELDS = ['msg', 'message', 'MESSAGE', '@message'];
const ERROR_FIELDS = ['error', 'err', 'exception', 'error.message', 'reason'];
const LEVEL_FIELDS = ['level', 'severity', 'lvl', '@level'];
const SOURCE_FIELDS = ['caller', 'logger', 'source'];

/**
 * `{"level":"fatal","msg":"invalid configuration","error":"required key X missing value","stacktrace":…}` as
 * `fatal: invalid configuration: required key X missing value (cmd/main.go:47)`, the way zap, logrus, pino,
 * bunyan and slog records are read; undefined for anything that is not a JSON object with a message.
 */
function readableRecord(line: string): string | undefined {
  if (!line.startsWith('{')) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return undefined;
  const fields = record as Record<string, unknown>;
  const pick = (names: readonly string[]) => {
    for (const n of names) {
      const v = fields[n];
      if (typeof v === 'string' && v.trim() !== '') return v.trim();
      if (v !== null && typeof v === 'object' && typeof (v as { message?: unknown }).message === 'string')
        return (v as { message: string }).message;
    }
    return undefined;
  };
  const message = pick(MESSAGE_FIELDS);
  const error = pick(ERROR_FIELDS);
  if (message === undefined && error === undefined) return undefined;
  const levelValue = LEVEL_FIELDS.map((n) => fields[n]).find((v) => typeof v === 'string');
  const source = pick(SOURCE_FIELDS);
  const text = [levelValue, message, error !== message ? error : undefined].filter(Boolean).join(': ');
  return source ? `${text} (${source})` : text;
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

/**
 * How bad a container looks right now, for choosing which replica a finding names: the one an engineer would open
 * first (waiting in a back-off, then not ready, then the most recent crash), not the first in name order.
 */
export function currentBadness(pod: KubeObject, c: ContainerView): number {
  let score = 0;
  if (c.waitingReason !== undefined) score += c.waitingReason === 'ContainerCreating' ? 2 : 8;
  if (!c.ready && !c.init) score += 4;
  if (c.init && c.terminated === undefined) score += 2;
  if (!isPodReady(pod)) score += 2;
  if (isTerminating(pod)) score -= 10;
  return score;
}

/** The group's replicas, worst first; ties keep name order so output never wobbles. */
export function worstFirst<T extends PodContainer>(group: readonly T[]): T[] {
  // Each replica is judged once, not in every comparison it takes part in.
  const judged = group.map((g) => ({
    g,
    badness: currentBadness(g.pod, g.c),
    finished: Date.parse(String((g.c.lastTerminated ?? g.c.terminated)?.finishedAt ?? '')) || 0,
  }));
  return judged
    .sort(
      (a, b) =>
        b.badness - a.badness || b.finished - a.finished || byCodePoint(a.g.pod.metadata.name, b.g.pod.metadata.name),
    )
    .map((j) => j.g);
}

/** `a, b, c and 2 more`: names in evidence stay readable however many replicas fail. */
export function nameList(names: readonly string[], max = 5): string {
  const unique = new Set(names);
  if (unique.size <= max) return [...unique].join(', ');
  // Thousands of ready replicas may be counted: only the names shown are copied out.
  const shown: string[] = [];
  for (const name of unique) {
    if (shown.length === max) break;
    shown.push(name);
  }
  return `${shown.join(', ')} and ${unique.size - max} more`;
}

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';

export interface ReplicaSetRevision {
  replicaSet: KubeObject;
  revision: number | undefined;
  deployment: string | undefined;
}

/** The ReplicaSet a pod belongs to and its Deployment revision, when both were read. */
export function replicaSetOf(ctx: AnalyzerContext, pod: KubeObject): ReplicaSetRevision | undefined {
  const owner = pod.metadata.ownerReferences?.find((o) => o.kind === 'ReplicaSet');
  if (owner === undefined) return undefined;
  const rs = byName(ctx, 'replicasets', pod.metadata.namespace, owner.name);
  if (rs === undefined) return undefined;
  return {
    replicaSet: rs,
    revision: revisionNumber(rs),
    deployment: rs.metadata.ownerReferences?.find((o) => o.kind === 'Deployment')?.name,
  };
}

function revisionNumber(rs: KubeObject): number | undefined {
  const value = Number(rs.metadata.annotations?.[REVISION_ANNOTATION]);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

/**
 * Where the failing pods sit in their Deployment's history: "ReplicaSet web-7d9 (revision 8)", and the previous
 * revision that still has ready pods, which is what a rollback would return to. Undefined for other owners.
 */
export function rolloutLine(ctx: AnalyzerContext, pod: KubeObject): string | undefined {
  const mine = replicaSetOf(ctx, pod);
  if (mine === undefined) return undefined;
  const label = (rs: KubeObject) =>
    `ReplicaSet ${rs.metadata.name}${revisionNumber(rs) !== undefined ? ` (revision ${revisionNumber(rs)})` : ''}`;
  const parts = [`pods of ${label(mine.replicaSet)}`];
  if (mine.deployment !== undefined) {
    const siblings = ctx
      .objects('replicasets')
      .filter(
        (r) =>
          r.metadata.namespace === pod.metadata.namespace &&
          r.metadata.name !== mine.replicaSet.metadata.name &&
          r.metadata.ownerReferences?.some((o) => o.kind === 'Deployment' && o.name === mine.deployment),
      );
    const newest = Math.max(mine.revision ?? 0, ...siblings.map((r) => revisionNumber(r) ?? 0));
    if (mine.revision !== undefined && mine.revision === newest && siblings.length > 0) {
      parts.push(`the newest revision of Deployment ${mine.deployment}`);
    }
    const healthy = siblings
      .filter((r) => Number(r.status?.readyReplicas ?? 0) > 0)
      .sort((a, b) => (revisionNumber(b) ?? 0) - (revisionNumber(a) ?? 0))[0];
    if (healthy !== undefined) {
      parts.push(`previous ${label(healthy)} still has ${healthy.status.readyReplicas} ready pod(s)`);
    }
  }
  return parts.join('; ');
}

/**
 * Pods elsewhere (same owner, or anywhere that was read) running `image` and ready: proof the image and its
 * configuration can work, and a pointer to what differs (the node, the namespace, the revision).
 */
export function healthySiblings(ctx: AnalyzerContext, image: string, exclude: ReadonlySet<string>): KubeObject[] {
  if (image === '') return [];
  return ctx
    .objects('pods')
    .filter((p) => !exclude.has(`${p.metadata.namespace}/${p.metadata.name}`))
    .filter((p) => isPodReady(p) && !isTerminating(p))
    .filter((p) => containers(p).some((c) => !c.init && String(c.spec?.image ?? '') === image));
}

/** `name (node n1)` or `ns/name (node n1)` for a pod outside the analysed namespace. */
export function podWhere(ctx: AnalyzerContext, pod: KubeObject): string {
  const name =
    (pod.metadata.namespace ?? ctx.namespace) === ctx.namespace
      ? pod.metadata.name
      : `${pod.metadata.namespace}/${pod.metadata.name}`;
  return pod.spec?.nodeName ? `${name} (node ${pod.spec.nodeName})` : name;
}

export interface UnresolvedHost {
  host: string;
  /**
   * The resolver answered that the name does not exist (NXDOMAIN: "no such host", "Name or service not known",
   * ENOTFOUND), as opposed to failing to get an answer (timeouts, SERVFAIL, EAI_AGAIN). A name that does not exist
   * is a wrong name; an unanswered lookup is a DNS problem.
   */
  nameDoesNotExist: boolean;
}

const HOST = '([A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?)';
/** Where Go, glibc/libpq, Node, Java, curl and musl put the host name in a failed lookup. */
const UNRESOLVED_HOST: readonly RegExp[] = [
  new RegExp(`lookup ${HOST}(?: on [^:\\s]+(?::\\d+)?)?: (no such host|server misbehaving|i/o timeout|.*)`, 'i'),
  new RegExp(`could not translate host name "${HOST}" to address: (.*)`, 'i'),
  new RegExp(`getaddrinfo (ENOTFOUND|EAI_AGAIN) ${HOST}`, 'i'),
  new RegExp(`UnknownHostException: ${HOST}(?::? (.*))?`, 'i'),
  new RegExp(`Could not resolve host: ${HOST}`, 'i'),
  new RegExp(`(?:bad address|Name does not resolve)[: ']+${HOST}`, 'i'),
];
const NAME_MISSING =
  /no such host|name or service not known|ENOTFOUND|nodename nor servname|NXDOMAIN|does not resolve/i;

/** The host a failed name lookup names, and whether the answer was "no such name"; undefined for other lines. */
export function parseUnresolvedHost(line: string): UnresolvedHost | undefined {
  for (const pattern of UNRESOLVED_HOST) {
    const m = pattern.exec(line);
    if (!m) continue;
    const host = (/^(ENOTFOUND|EAI_AGAIN)$/i.test(m[1] ?? '') ? m[2] : m[1])?.replace(/\.$/, '');
    if (!host || /^\d+\.\d+\.\d+\.\d+$/.test(host)) continue;
    const temporary = /temporary failure|EAI_AGAIN|server misbehaving|i\/o timeout|timed out|SERVFAIL/i.test(line);
    return { host, nameDoesNotExist: !temporary && NAME_MISSING.test(line) };
  }
  return undefined;
}

export interface ConfigSource {
  /** ConfigMap holding the value; undefined when the value is written in the pod spec itself. */
  configMap?: string;
  key?: string;
  /** How the container consumes it: `env DB_HOST`, `envFrom`, `volume config → /etc/app`, `args`. */
  via: string;
}

/**
 * Where in a container's configuration a value comes from: its env, env from ConfigMaps (by key or whole),
 * ConfigMap volumes it mounts, or its command line. Secrets are never read, so values held there stay unknown.
 */
export function configSourcesOf(
  ctx: AnalyzerContext,
  pod: KubeObject,
  c: ContainerView,
  value: string,
): ConfigSource[] {
  if (value === '') return [];
  const namespace = pod.metadata.namespace ?? ctx.namespace;
  const configMap = (name: string | undefined) =>
    name === undefined
      ? undefined
      : ctx
          .objects('configmaps')
          .find((m) => m.metadata.name === name && (m.metadata.namespace ?? namespace) === namespace);
  const data = (cm: KubeObject | undefined): Record<string, string> =>
    (cm?.['data'] as Record<string, string> | undefined) ?? {};
  const holds = (text: unknown) => typeof text === 'string' && text.includes(value);
  const out: ConfigSource[] = [];
  const env: { name?: string; value?: string; valueFrom?: { configMapKeyRef?: { name?: string; key?: string } } }[] =
    Array.isArray(c.spec?.env) ? c.spec.env : [];
  for (const e of env) {
    if (holds(e.value)) out.push({ via: `env ${e.name}` });
    const r = e.valueFrom?.configMapKeyRef;
    if (r?.key !== undefined && holds(data(configMap(r.name))[r.key])) {
      out.push({ configMap: r.name, key: r.key, via: `env ${e.name}` });
    }
  }
  const envFrom: { configMapRef?: { name?: string }; prefix?: string }[] = Array.isArray(c.spec?.envFrom)
    ? c.spec.envFrom
    : [];
  for (const e of envFrom) {
    const cm = configMap(e.configMapRef?.name);
    for (const [key, v] of Object.entries(data(cm))) {
      if (holds(v)) out.push({ configMap: cm?.metadata.name, key, via: `envFrom (env ${e.prefix ?? ''}${key})` });
    }
  }
  const volumes: { name?: string; configMap?: { name?: string } }[] = Array.isArray(pod.spec?.volumes)
    ? pod.spec.volumes
    : [];
  const mounts: { name?: string; mountPath?: string }[] = Array.isArray(c.spec?.volumeMounts)
    ? c.spec.volumeMounts
    : [];
  for (const m of mounts) {
    const cm = configMap(volumes.find((v) => v.name === m.name)?.configMap?.name);
    for (const [key, v] of Object.entries(data(cm))) {
      if (holds(v)) out.push({ configMap: cm?.metadata.name, key, via: `volume ${m.name} → ${m.mountPath}/${key}` });
    }
  }
  const argv = [
    ...(Array.isArray(c.spec?.command) ? c.spec.command : []),
    ...(Array.isArray(c.spec?.args) ? c.spec.args : []),
  ];
  if (argv.some(holds)) out.push({ via: 'command line' });
  return out;
}

/** The node a pod runs on, when nodes were read. */
export function nodeOfPod(ctx: AnalyzerContext, pod: KubeObject): KubeObject | undefined {
  const name = pod.spec?.nodeName;
  return typeof name === 'string' ? ctx.objects('nodes').find((n) => n.metadata.name === name) : undefined;
}

const MAX_CHANGES = 5;

/** Leaves of a pod template as `path → JSON`, list items keyed by their name so reordering is not a change. */
function flatten(value: unknown, path: string, out: Map<string, string>): void {
  if (Array.isArray(value)) {
    if (value.length === 0) out.set(path, '[]');
    const named = value.every(
      (v) => v !== null && typeof v === 'object' && typeof (v as { name?: unknown }).name === 'string',
    );
    for (const [i, v] of value.entries()) flatten(v, `${path}[${named ? (v as { name: string }).name : i}]`, out);
    return;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) out.set(path, '{}');
    for (const [k, v] of entries) flatten(v, path === '' ? k : `${path}.${k}`, out);
    return;
  }
  if (value !== undefined) out.set(path, JSON.stringify(value));
}

/**
 * What the failing pods' revision changed in the pod template compared with the revision before it: the first
 * thing an engineer diffs after a bad rollout ("livenessProbe port 8080 → 8081", "requests.memory 4Gi → 12Gi").
 * Undefined when the pod is not the newest revision of a Deployment or no earlier revision was read.
 */
export function revisionChanges(ctx: AnalyzerContext, pod: KubeObject): string | undefined {
  const mine = replicaSetOf(ctx, pod);
  if (mine?.deployment === undefined || mine.revision === undefined) return undefined;
  const earlier = ctx
    .objects('replicasets')
    .filter(
      (r) =>
        r.metadata.namespace === pod.metadata.namespace &&
        r.metadata.ownerReferences?.some((o) => o.kind === 'Deployment' && o.name === mine.deployment) &&
        (revisionNumber(r) ?? 0) < (mine.revision ?? 0),
    )
    .sort((a, b) => (revisionNumber(b) ?? 0) - (revisionNumber(a) ?? 0))[0];
  if (earlier === undefined) return undefined;
  const before = new Map<string, string>();
  const after = new Map<string, string>();
  flatten(earlier.spec?.template?.spec ?? {}, '', before);
  flatten(mine.replicaSet.spec?.template?.spec ?? {}, '', after);
  const changes: string[] = [];
  for (const path of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(path);
    const b = after.get(path);
    if (a === b) continue;
    changes.push(
      a === undefined ? `${path} added (${b})` : b === undefined ? `${path} removed (was ${a})` : `${path} ${a} → ${b}`,
    );
  }
  if (changes.length === 0) return undefined;
  const shown = changes.slice(0, MAX_CHANGES).join('; ');
  const more = changes.length > MAX_CHANGES ? `; and ${changes.length - MAX_CHANGES} more` : '';
  return clip(
    scrubText(
      `revision ${mine.revision} changed from revision ${revisionNumber(earlier) ?? '?'} (ReplicaSet ${earlier.metadata.name}): ${shown}${more}`,
    ),
  );
}

/** A finding carries at most this many evidence lines; the rest is noise next to the decisive ones. */
export const MAX_EVIDENCE_LINES = 5;

/**
 * Evidence lines in the order a person needs them, lowest rank first (ties keep insertion order), cut to the few a
 * finding carries: the decisive lines must lead and survive the cut.
 */
export class EvidenceList {
  private readonly entries: { rank: number; text: string }[] = [];

  add(rank: number, text: string | undefined | false): this {
    if (text) this.entries.push({ rank, text });
    return this;
  }

  lines(max = MAX_EVIDENCE_LINES): string[] {
    const seen = new Set<string>();
    return this.entries
      .map((e, i) => ({ ...e, i }))
      .sort((a, b) => a.rank - b.rank || a.i - b.i)
      .map((e) => clip(e.text))
      .filter((text) => !seen.has(text) && seen.add(text))
      .slice(0, max);
  }
}
