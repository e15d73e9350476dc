import {
  type ClusterReader,
  type KubeObject,
  READ_FAILURE_REASONS,
  type ReadFailureReason,
  type ResourceKind,
} from '../../cluster/types.js';
import { byCodePoint } from '../../code-point-order.js';
import { entriesOf } from '../kube/entries.js';
import type { ReadSpec, TriageTemplate } from '../templates/template-schema.js';

/**
 * Executes one template round: every read in the round runs in parallel, `forEach` reads fan out over objects an
 * earlier round returned (bounded by `max`), and a failed read becomes a classified outcome instead of an error.
 */

export type Round = TriageTemplate['rounds'][number];
type ForEach = NonNullable<ReadSpec['forEach']>;

interface OutcomeBase {
  /** The template read this outcome came from. */
  readId: string;
  evidence: string;
  kind: ResourceKind | 'logs';
  /** What was asked for, in the words an operator uses (`pods`, `logs web-1/app (previous)`). */
  label: string;
}

interface ObjectsOutcome extends OutcomeBase {
  status: 'ok';
  kind: ResourceKind;
  objects: KubeObject[];
  /** The list stopped at the read's `maxItems`: there may be more objects than were read. */
  limited?: boolean;
}

interface LogOutcome extends OutcomeBase {
  status: 'ok';
  kind: 'logs';
  log: { namespace: string; pod: string; container: string | undefined; previous: boolean; text: string };
}

interface FailedOutcome extends OutcomeBase {
  status: 'failed';
  reason: ReadFailureReason;
  detail: string;
}

/** A `forEach` read whose source selected nothing: there is nothing to follow, so nothing is missing. */
interface NothingToFollowOutcome extends OutcomeBase {
  status: 'nothing-to-follow';
}

export type ReadOutcome = ObjectsOutcome | LogOutcome | FailedOutcome | NothingToFollowOutcome;

export interface RoundContext {
  reader: ClusterReader;
  namespace: string;
  signal: AbortSignal;
  /** Outcomes of earlier rounds by read id (a fanned-out read has several). */
  previous: ReadonlyMap<string, readonly ReadOutcome[]>;
  /** Called once per request that leaves for the cluster. */
  onRequest?: () => void;
}

/** A read with every placeholder resolved, ready to send. */
interface ConcreteRead {
  spec: ReadSpec;
  /** Namespace of the object being followed, when it lives outside the triaged namespace (CoreDNS pods). */
  namespace?: string;
  name?: string;
  labelSelector?: string;
  fieldSelector?: string;
  container?: string;
  label: string;
}

export async function executeRound(round: Round, ctx: RoundContext): Promise<ReadOutcome[]> {
  const planned: Array<ConcreteRead | ReadOutcome> = [];
  for (const spec of round.reads) planned.push(...planRead(spec, ctx));
  const settled = await Promise.allSettled(
    planned.map((p) => ('status' in p ? Promise.resolve(p) : performRead(p, ctx))),
  );
  // allSettled keeps input order, so outcomes stay deterministic however the responses interleave.
  return settled.map((s, i) => {
    if (s.status === 'fulfilled') return s.value;
    const p = planned[i] as ConcreteRead;
    return failed(p.spec, p.label, s.reason, ctx.signal);
  });
}

function planRead(spec: ReadSpec, ctx: RoundContext): Array<ConcreteRead | ReadOutcome> {
  const base = { namespace: ctx.namespace };
  if (!spec.forEach) {
    const concrete = concretize(spec, base);
    return [concrete ?? nothingToFollow(spec)];
  }
  const source = ctx.previous.get(spec.forEach.read);
  if (!source || source.length === 0) {
    return [
      {
        status: 'failed',
        readId: spec.id,
        evidence: spec.evidence,
        kind: spec.kind,
        label: labelFor(spec),
        reason: 'invalid',
        detail: `depends on read "${spec.forEach.read}", which did not run`,
      },
    ];
  }
  const sourceFailure = source.find((o): o is FailedOutcome => o.status === 'failed');
  const items = itemsOf(source);
  if (items.length === 0 && sourceFailure) {
    return [
      {
        status: 'failed',
        readId: spec.id,
        evidence: spec.evidence,
        kind: spec.kind,
        label: labelFor(spec),
        reason: sourceFailure.reason,
        detail: `depends on ${sourceFailure.label}: ${sourceFailure.detail}`,
      },
    ];
  }
  const reads: ConcreteRead[] = [];
  const seen = new Set<string>();
  const max = spec.forEach.max;
  // Bindings come worst first and the fan-out stops at `max`: the rest are never made.
  visitBindings(items, spec.forEach, ctx.namespace, (binding) => {
    const concrete = concretize(spec, binding);
    if (!concrete) return true;
    const key = JSON.stringify([
      concrete.namespace,
      concrete.name,
      concrete.labelSelector,
      concrete.fieldSelector,
      concrete.container,
    ]);
    if (seen.has(key)) return true;
    seen.add(key);
    reads.push(concrete);
    return reads.length < max;
  });
  return reads.length > 0 ? reads : [nothingToFollow(spec)];
}

/** The objects a source read returned; a single list is used as it is, since the reads of a round share it. */
function itemsOf(source: readonly ReadOutcome[]): readonly KubeObject[] {
  const only = source.length === 1 ? source[0] : undefined;
  if (only !== undefined && only.status === 'ok' && only.kind !== 'logs') return only.objects;
  let items = itemsBySource.get(source);
  if (items === undefined) {
    items = source.flatMap((o) => (o.status === 'ok' && o.kind !== 'logs' ? o.objects : []));
    itemsBySource.set(source, items);
  }
  return items;
}

const itemsBySource = new WeakMap<readonly ReadOutcome[], readonly KubeObject[]>();

function nothingToFollow(spec: ReadSpec): NothingToFollowOutcome {
  return {
    status: 'nothing-to-follow',
    readId: spec.id,
    evidence: spec.evidence,
    kind: spec.kind,
    label: labelFor(spec),
  };
}

async function performRead(read: ConcreteRead, ctx: RoundContext): Promise<ReadOutcome> {
  const { spec } = read;
  const namespace = spec.scope === 'cluster' ? undefined : (spec.namespace ?? read.namespace ?? ctx.namespace);
  ctx.onRequest?.();
  if (spec.kind === 'logs') {
    const pod = read.name as string;
    const logNamespace = read.namespace ?? ctx.namespace;
    let text: string;
    try {
      text = await abortable(
        ctx.reader.logs(
          {
            namespace: logNamespace,
            pod,
            ...(read.container ? { container: read.container } : {}),
            previous: spec.previous,
            tailLines: spec.tailLines,
          },
          ctx.signal,
        ),
        ctx.signal,
      );
    } catch (error) {
      // The kubelet answers 400 when there is no such log to give ("previous terminated container not found",
      // "container is waiting to start") and 404 when the pod has gone since it was listed. Both are facts about
      // the pod, read successfully: the log does not exist, so nothing is missing from the evidence.
      if (!isAbsentLog(error, ctx.signal)) throw error;
      text = '';
    }
    return {
      status: 'ok',
      readId: spec.id,
      evidence: spec.evidence,
      kind: 'logs',
      label: read.label,
      log: { namespace: logNamespace, pod, container: read.container, previous: spec.previous, text },
    };
  }
  const kind = spec.kind;
  if (read.name !== undefined) {
    try {
      const object = await abortable(
        ctx.reader.get({ kind, name: read.name, ...(namespace ? { namespace } : {}) }, ctx.signal),
        ctx.signal,
      );
      return { status: 'ok', readId: spec.id, evidence: spec.evidence, kind, label: read.label, objects: [object] };
    } catch (error) {
      // A named object that does not exist is an observation (a Route pointing at a missing Service), not a gap.
      if (reasonOf(error, ctx.signal) === 'not-found') {
        return { status: 'ok', readId: spec.id, evidence: spec.evidence, kind, label: read.label, objects: [] };
      }
      throw error;
    }
  }
  const objects = await abortable(
    ctx.reader.list(
      {
        kind,
        ...(namespace ? { namespace } : {}),
        ...(read.labelSelector ? { labelSelector: read.labelSelector } : {}),
        ...(read.fieldSelector ? { fieldSelector: read.fieldSelector } : {}),
        maxItems: spec.maxItems,
      },
      ctx.signal,
    ),
    ctx.signal,
  );
  return {
    status: 'ok',
    readId: spec.id,
    evidence: spec.evidence,
    kind,
    label: read.label,
    objects,
    ...(objects.length >= spec.maxItems ? { limited: true } : {}),
  };
}

function isAbsentLog(error: unknown, signal: AbortSignal): boolean {
  const reason = reasonOf(error, signal);
  if (reason === 'not-found') return true;
  return reason === 'invalid' && (error as { status?: unknown } | null)?.status === 400;
}

/** Stops waiting the moment the overall deadline passes, even if a reader ignores its signal. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(new DeadlineError());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new DeadlineError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

class DeadlineError extends Error {
  override readonly name = 'DeadlineError';
  constructor() {
    super('the triage deadline passed before the read finished');
  }
}

function failed(spec: ReadSpec, label: string, error: unknown, signal: AbortSignal): FailedOutcome {
  return {
    status: 'failed',
    readId: spec.id,
    evidence: spec.evidence,
    kind: spec.kind,
    label,
    reason: reasonOf(error, signal),
    detail: error instanceof Error ? error.message : String(error),
  };
}

const REASONS: ReadonlySet<string> = new Set<ReadFailureReason>(READ_FAILURE_REASONS);

/** Classify any failure: the reader's own classification wins; an aborted deadline is a timeout. */
export function reasonOf(error: unknown, signal?: AbortSignal): ReadFailureReason {
  if (error instanceof DeadlineError) return 'timeout';
  const reason = (error as { reason?: unknown } | null)?.reason;
  if (typeof reason === 'string' && REASONS.has(reason)) return reason as ReadFailureReason;
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'AbortError' || name === 'TimeoutError' || signal?.aborted) return 'timeout';
  return 'server-error';
}

// ---------------------------------------------------------------------------------------------------------------
// forEach selection

type Binding = { namespace: string; item?: KubeObject; pod?: string; container?: string };

interface ContainerStatus {
  name: string;
  ready?: boolean;
  restartCount?: number;
  state?: { waiting?: unknown; terminated?: { exitCode?: number } };
  lastState?: { terminated?: { exitCode?: number } };
}

/** The statuses of a pod's init containers, then of its other containers. */
function containerStatuses(o: KubeObject): ContainerStatus[] {
  const s = o.status;
  return [...entriesOf<ContainerStatus>(s?.initContainerStatuses), ...entriesOf<ContainerStatus>(s?.containerStatuses)];
}

type Condition = { type?: string; status?: string };

const nonzero = (t?: { exitCode?: number }) => t !== undefined && (t.exitCode ?? 0) !== 0;

/** A container's restarts; a count that is not a number counts none. */
function restartsOf(c: ContainerStatus): number {
  const n = Number(c.restartCount ?? 0);
  return Number.isFinite(n) ? n : 0;
}

const restarting = (c: ContainerStatus) => restartsOf(c) > 0;
const waiting = (c: ContainerStatus) => c.state?.waiting !== undefined;
const terminatedNonzero = (c: ContainerStatus) => nonzero(c.state?.terminated) || nonzero(c.lastState?.terminated);

const CONTAINER_TESTS: Record<ForEach['where'], ((c: ContainerStatus) => boolean) | undefined> = {
  all: undefined,
  pending: undefined,
  'not-running': undefined,
  unbound: undefined,
  'one-per-workload': undefined,
  'second-of-workload': undefined,
  'not-ready': (c) => c.ready !== true,
  restarting,
  waiting,
  'terminated-nonzero': terminatedNonzero,
};

/**
 * What the `where` tests and the ordering ask of each object a source read returned, worked out in one walk and
 * shared by every read of the round that follows the same source (a sweep follows its pods five ways).
 */
interface SourceFacts {
  phase: Uint8Array;
  flags: Uint8Array;
  /**
   * The objects' indexes worst first: those failing loudest (their containers' restarts) by how loudly, then the
   * quiet ones, then any whose counts are below zero; ties keep the API's order. A bounded fan-out follows the
   * matching objects in this order and stops at its `max`, so the rest of the namespace is never looked at twice.
   */
  order: Uint32Array;
}

const PENDING = 1;
const RUNNING = 2;
const SUCCEEDED = 3;
const BOUND = 4;
const PHASES: ReadonlyMap<unknown, number> = new Map([
  ['Pending', PENDING],
  ['Running', RUNNING],
  ['Succeeded', SUCCEEDED],
  ['Bound', BOUND],
]);

const READY = 1;
const SOME_RESTARTING = 2;
const SOME_WAITING = 4;
const SOME_TERMINATED_NONZERO = 8;
/** The flags an object gets from one of its containers: one for each container test of a `where` it passes. */
function containerFlags(c: ContainerStatus): number {
  return (
    (restarting(c) ? SOME_RESTARTING : 0) |
    (waiting(c) ? SOME_WAITING : 0) |
    (terminatedNonzero(c) ? SOME_TERMINATED_NONZERO : 0)
  );
}

const factsBySource = new WeakMap<readonly KubeObject[], SourceFacts>();

/**
 * The facts of every object at once, in indexed loops: this runs once per process, uncompiled, where a for-of
 * loop or a copied array costs an allocation per step.
 */
function factsOf(items: readonly KubeObject[]): SourceFacts {
  let facts = factsBySource.get(items);
  if (facts !== undefined) return facts;
  const phase = new Uint8Array(items.length);
  const flags = new Uint8Array(items.length);
  const trouble = new Float64Array(items.length);
  const loud: number[] = [];
  const below: number[] = [];
  for (let i = 0; i < items.length; i++) {
    const status = (items[i] as KubeObject).status;
    phase[i] = PHASES.get(status?.phase) ?? 0;
    const conditions = entriesOf<Condition>(status?.conditions);
    let f = 0;
    for (let j = 0; j < conditions.length; j++) {
      const c = conditions[j] as Condition;
      if (c.type === 'Ready' && c.status === 'True') {
        f = READY;
        break;
      }
    }
    let score = 0;
    for (let list = 0; list < 2; list++) {
      const statuses = entriesOf<ContainerStatus>(
        list === 0 ? status?.initContainerStatuses : status?.containerStatuses,
      );
      for (let j = 0; j < statuses.length; j++) {
        const c = statuses[j] as ContainerStatus;
        f |= containerFlags(c);
        score += restartsOf(c);
      }
    }
    flags[i] = f;
    trouble[i] = score;
    if (score > 0) loud.push(i);
    else if (score < 0) below.push(i);
  }
  const byScore = (a: number, b: number) => (trouble[b] as number) - (trouble[a] as number) || a - b;
  loud.sort(byScore);
  below.sort(byScore);
  const order = new Uint32Array(items.length);
  let at = 0;
  for (let k = 0; k < loud.length; k++) order[at++] = loud[k] as number;
  for (let i = 0; i < items.length; i++) if (trouble[i] === 0) order[at++] = i;
  for (let k = 0; k < below.length; k++) order[at++] = below[k] as number;
  facts = { phase, flags, order };
  factsBySource.set(items, facts);
  return facts;
}

/** Whether object `i` of a source passes `where`. */
function factsMatch(facts: SourceFacts, i: number, where: ForEach['where']): boolean {
  const phase = facts.phase[i];
  const flags = facts.flags[i] as number;
  switch (where) {
    case 'all':
      return true;
    case 'pending':
      return phase === PENDING;
    case 'not-running':
      return phase !== RUNNING && phase !== SUCCEEDED;
    case 'unbound':
      return phase !== BOUND;
    case 'not-ready':
      return phase !== SUCCEEDED && (flags & READY) === 0;
    case 'one-per-workload':
    case 'second-of-workload':
      return phase === RUNNING;
    case 'restarting':
      return (flags & SOME_RESTARTING) !== 0;
    case 'waiting':
      return (flags & SOME_WAITING) !== 0;
    case 'terminated-nonzero':
      return (flags & SOME_TERMINATED_NONZERO) !== 0;
  }
}

/**
 * One running pod of each workload (`nth` 1): a healthy client still logs the dependency it cannot reach, and one
 * replica says what all of them would. The second (`nth` 2) tells a fault in every replica from one in a single pod,
 * and lets a finding name the replicas that show it.
 */
function nthOfWorkload(nth: number): (o: KubeObject) => boolean {
  // By namespace, then owner: thousands of replicas are turned away without a key built for each.
  const seen = new Map<string, Map<string, number>>();
  return (o) => {
    const owner = `${o.metadata.ownerReferences?.[0]?.name ?? o.metadata.labels?.['app'] ?? o.metadata.name}`;
    const namespace = o.metadata.namespace ?? '';
    let owners = seen.get(namespace);
    if (owners === undefined) {
      owners = new Map();
      seen.set(namespace, owners);
    }
    const count = (owners.get(owner) ?? 0) + 1;
    owners.set(owner, count);
    return count === nth;
  };
}

/** Hands each binding of a `forEach` to `visit`, worst offenders first, until `visit` returns false. */
function visitBindings(
  items: readonly KubeObject[],
  forEach: ForEach,
  namespace: string,
  visit: (binding: Binding) => boolean,
): void {
  const keep =
    forEach.where === 'one-per-workload'
      ? nthOfWorkload(1)
      : forEach.where === 'second-of-workload'
        ? nthOfWorkload(2)
        : undefined;
  const test = CONTAINER_TESTS[forEach.where];
  const facts = factsOf(items);
  for (let k = 0; k < facts.order.length; k++) {
    const i = facts.order[k] as number;
    if (!factsMatch(facts, i, forEach.where)) continue;
    const item = items[i] as KubeObject;
    if (keep && !keep(item)) continue;
    if (forEach.each === 'object') {
      if (!visit({ namespace, item, pod: item.metadata.name })) return;
      continue;
    }
    const statuses = new Map(containerStatuses(item).map((c) => [c.name, c]));
    const specs = [
      ...entriesOf<{ name?: unknown }>(item.spec?.initContainers),
      ...entriesOf<{ name?: unknown }>(item.spec?.containers),
    ];
    const names = (specs.length > 0 ? specs.map((c) => c.name) : [...statuses.keys()]).filter(
      (name): name is string => typeof name === 'string',
    );
    for (const container of names) {
      const status = statuses.get(container);
      if (test && (!status || !test(status))) continue;
      if (!visit({ namespace, item, pod: item.metadata.name, container })) return;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Placeholder substitution

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.[\]-]+)\s*\}\}/g;

/** Resolve `{{namespace}}`, `{{pod}}`, `{{container}}` and `{{item.<path>}}`; undefined when a value is absent. */
export function substitute(text: string, binding: Binding): string | undefined {
  let missing = false;
  const out = text.replace(PLACEHOLDER, (_m, path: string) => {
    const value = lookup(path, binding);
    if (value === undefined) {
      missing = true;
      return '';
    }
    return value;
  });
  return missing ? undefined : out;
}

function lookup(path: string, binding: Binding): string | undefined {
  if (path === 'namespace') return binding.namespace;
  if (path === 'pod') return binding.pod;
  if (path === 'container') return binding.container;
  if (!path.startsWith('item.') || !binding.item) return undefined;
  let value: unknown = binding.item;
  for (const key of path
    .slice(5)
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return render(value);
}

/** Scalars print as-is; a label map (a Service's selector, matchLabels) prints as a label selector. */
function render(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => typeof v === 'string');
    if (entries.length === 0) return undefined;
    return entries
      .sort(([a], [b]) => byCodePoint(a, b))
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
  }
  return undefined;
}

function concretize(spec: ReadSpec, binding: Binding): ConcreteRead | undefined {
  const fields = ['name', 'labelSelector', 'fieldSelector', 'container'] as const;
  const read: ConcreteRead = { spec, label: '' };
  for (const field of fields) {
    const raw = spec[field];
    if (raw === undefined) continue;
    const value = substitute(raw, binding);
    if (value === undefined) return undefined;
    read[field] = value;
  }
  if (spec.kind === 'logs' && read.name === undefined) {
    // A logs read inside a forEach defaults to the pod (and container) being followed.
    if (!binding.pod) return undefined;
    read.name = binding.pod;
    if (read.container === undefined && binding.container) read.container = binding.container;
  }
  const itemNamespace = binding.item?.metadata.namespace;
  if (itemNamespace && itemNamespace !== binding.namespace) read.namespace = itemNamespace;
  read.label = labelFor(spec, read);
  return read;
}

function labelFor(spec: ReadSpec, read?: Partial<ConcreteRead>): string {
  if (spec.kind === 'logs') {
    const pod = read?.namespace ? `${read.namespace}/${read.name}` : read?.name;
    const target = pod ? ` ${pod}${read?.container ? `/${read.container}` : ''}` : '';
    return `logs${target}${spec.previous ? ' (previous)' : ''}`;
  }
  const parts: string[] = [spec.kind];
  if (read?.name) parts[0] = `${spec.kind}/${read.name}`;
  if (read?.labelSelector) parts.push(`-l ${read.labelSelector}`);
  if (read?.fieldSelector) parts.push(`--field-selector ${read.fieldSelector}`);
  return parts.join(' ');
}
