import { conditionOf } from '../../cluster/conditions.js';
import { RESOURCES } from '../../cluster/resources.js';
import type { KubeObject, ResourceKind } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import type { Finding, ResourceRef } from '../envelope/findings.js';
import { compareFindings, refKey } from '../envelope/findings.js';
import { entriesOf } from '../kube/entries.js';
import { eventsInvolving } from '../kube/events.js';
import { ownerOf, podsOwnedBy } from '../kube/pod-owners.js';
import { eventDate } from './root-cause.js';

/**
 * Findings are made on the objects that show a symptom (a pod), but people change the object that owns it (the
 * Deployment, the StatefulSet, the CronJob). This pass names that owner, folds the replicas of one workload that
 * show the same fault into one finding ("3 of 6 pods of Deployment payments: …"), and marks as stale what the
 * cluster has since left behind: a pod that no longer exists, or one that has been ready since its last warning.
 */

const MAX_NAMED_PODS = 4;
/** Owners whose replicas are folded into one finding; an analyzer's own owner (a ConfigMap, a Node) is not one. */
const WORKLOADS: ReadonlySet<string> = new Set([
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'ReplicaSet',
  'Job',
  'CronJob',
]);
/**
 * Analyzers whose findings describe a pod's own lifecycle (restarts, kills, pulls, mounts, placement): a pod that has
 * been ready since has left those behind. Findings read from what a pod logs now (DNS errors, refused connections)
 * are not history however long the pod has been ready.
 */
const LIFECYCLE_ANALYZERS: ReadonlySet<string> = new Set([
  'crashloop',
  'container-config',
  'liveness-probe',
  'oom-killed',
  'image-pull',
  'volume-mount',
  'scheduling',
  'node-health',
]);

export interface OwnerPassOptions {
  /** The analysed namespace's pods were listed in full: a pod missing from the list no longer exists. */
  podsComplete: boolean;
}

export function attributeOwners(findings: readonly Finding[], ctx: AnalyzerContext, opts: OwnerPassOptions): Finding[] {
  const index = new ObjectIndex(ctx);
  const attributed = findings.map((f) => withOwnerAndAge(f, index, ctx, opts));
  return groupReplicas(attributed, index, ctx.namespace);
}

/** The kinds whose objects findings are attributed through, by `kind`, with the list each is read into. */
const INDEXED_KINDS: ReadonlyMap<string, ResourceKind> = new Map<string, ResourceKind>(
  (['pods', 'replicasets', 'deployments', 'statefulsets', 'daemonsets', 'jobs', 'cronjobs'] as const).map((plural) => [
    RESOURCES[plural].kind,
    plural,
  ]),
);

type ByName<T> = Map<string, Map<string, T>>;

/**
 * Lookups for a handful of findings over thousands of objects: each table is made the first time it is asked for,
 * keyed by namespace and name, so no key is built per object.
 */
class ObjectIndex {
  private readonly byKind = new Map<string, ByName<KubeObject>>();

  constructor(private readonly ctx: AnalyzerContext) {}

  get(ref: ResourceRef, fallbackNamespace: string): KubeObject | undefined {
    const plural = INDEXED_KINDS.get(ref.kind);
    if (plural === undefined) return undefined;
    let named = this.byKind.get(ref.kind);
    if (named === undefined) {
      named = new Map();
      const objects = this.ctx.objects(plural);
      for (let i = 0; i < objects.length; i++) {
        const o = objects[i] as KubeObject;
        if (o.kind !== ref.kind) continue;
        let names = named.get(o.metadata.namespace ?? '');
        if (names === undefined) {
          names = new Map();
          named.set(o.metadata.namespace ?? '', names);
        }
        names.set(o.metadata.name, o);
      }
      this.byKind.set(ref.kind, named);
    }
    return named.get(ref.namespace ?? fallbackNamespace)?.get(ref.name);
  }

  /** The workload a person edits for this object; undefined when it has no owner. */
  topOwner(object: KubeObject): ResourceRef | undefined {
    return ownerOf(this.ctx, object);
  }

  /** Pods of the owner that have not run to completion. An owner reference is in its pod's namespace. */
  replicaCount(owner: ResourceRef): number {
    const namespace = owner.namespace ?? '';
    const pods = podsOwnedBy(this.ctx, owner.kind, owner.name);
    let count = 0;
    for (let i = 0; i < pods.length; i++) {
      const p = pods[i] as KubeObject;
      if ((p.metadata.namespace ?? '') === namespace && p.status?.phase !== 'Succeeded') count++;
    }
    return count;
  }

  /** When the newest event about the object happened. */
  newestEvent(kind: string, namespace: string, name: string): Date | undefined {
    let newest: Date | undefined;
    for (const e of eventsInvolving(this.ctx, kind, name)) {
      const io = (e as { involvedObject?: { kind?: string; name?: string; namespace?: string } }).involvedObject;
      const t = eventDate(e);
      if (!io?.kind || !io.name || !t) continue;
      if (
        `${io.kind}` !== kind ||
        `${io.name}` !== name ||
        `${io.namespace ?? e.metadata.namespace ?? ''}` !== namespace
      )
        continue;
      if (!newest || t > newest) newest = t;
    }
    return newest;
  }
}

function withOwnerAndAge(f: Finding, index: ObjectIndex, ctx: AnalyzerContext, opts: OwnerPassOptions): Finding {
  const { kind, name } = f.resource;
  const namespace = f.resource.namespace ?? ctx.namespace;
  if (kind !== 'Pod' && kind !== 'ReplicaSet' && kind !== 'Job') return f;
  const object = index.get(f.resource, ctx.namespace);
  if (!object) {
    if (kind === 'Pod' && opts.podsComplete && namespace === ctx.namespace && f.stale === undefined) {
      return { ...f, stale: `pod ${name} no longer exists` };
    }
    return f;
  }
  let result = f;
  const owner = f.owner ?? index.topOwner(object);
  if (owner && refKey(owner) !== refKey(f.resource)) result = { ...result, owner };
  const workloadRef = index.topOwner(object);
  if (kind === 'Pod' && result.stale === undefined && isFinished(object) && workloadRef) {
    // Judged by the pod's own workload, whatever owner the analyzer named.
    const workload = index.get(workloadRef, ctx.namespace);
    const replaced = workload ? fullyAvailable(workload) : undefined;
    if (replaced) {
      return { ...result, stale: `pod ${name} has finished and ${workloadRef.kind} ${workloadRef.name} ${replaced}` };
    }
  }
  if (kind === 'Pod' && result.stale === undefined && LIFECYCLE_ANALYZERS.has(f.analyzer)) {
    const since = settledSince(object, index.newestEvent('Pod', namespace, name), ctx.now);
    if (since) result = { ...result, stale: `pod ${name} has been running and ready since ${since.toISOString()}` };
  }
  return result;
}

function isFinished(pod: KubeObject): boolean {
  return pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';
}

/** "has 3/3 replicas available" when the workload has replaced what it lost; undefined while it is short. */
function fullyAvailable(workload: KubeObject): string | undefined {
  const spec = workload.spec ?? {};
  const status = workload.status ?? {};
  if (workload.kind === 'DaemonSet') {
    const want = status.desiredNumberScheduled;
    return typeof want === 'number' && want > 0 && status.numberAvailable === want
      ? `has all ${want} pods available`
      : undefined;
  }
  const want = typeof spec.replicas === 'number' ? spec.replicas : 1;
  const have = workload.kind === 'StatefulSet' ? status.readyReplicas : status.availableReplicas;
  return want > 0 && typeof have === 'number' && have >= want ? `has ${have}/${want} replicas available` : undefined;
}

/** A pod that has been ready for a while, with no warning and no restart since, shows history, not a fault. */
const SETTLED_MS = 30 * 60_000;

function settledSince(pod: KubeObject, lastEvent: Date | undefined, now: Date): Date | undefined {
  if (pod.status?.phase !== 'Running' || currentlyFailing(pod)) return undefined;
  const ready = conditionOf(pod, 'Ready');
  if (ready?.status !== 'True' || typeof ready.lastTransitionTime !== 'string') return undefined;
  // Settled since the latest of: becoming ready, the last restart, the current container's start.
  let since = Date.parse(ready.lastTransitionTime);
  const statuses = [...(pod.status?.containerStatuses ?? [])] as Array<{
    ready?: boolean;
    state?: { running?: { startedAt?: string } };
    lastState?: { terminated?: { finishedAt?: string } };
  }>;
  if (Number.isNaN(since) || statuses.some((s) => s.ready === false)) return undefined;
  for (const s of statuses) {
    for (const t of [s.lastState?.terminated?.finishedAt, s.state?.running?.startedAt]) {
      const at = Date.parse(t ?? '');
      if (!Number.isNaN(at) && at > since) since = at;
    }
  }
  if (now.getTime() - since < SETTLED_MS) return undefined;
  if (lastEvent && lastEvent.getTime() >= since) return undefined;
  return new Date(since);
}

function currentlyFailing(pod: KubeObject): boolean {
  const statuses = [
    ...entriesOf<{ state?: { waiting?: unknown } }>(pod.status?.containerStatuses),
    ...entriesOf<{ state?: { waiting?: unknown } }>(pod.status?.initContainerStatuses),
  ];
  return statuses.some((s) => s.state?.waiting !== undefined);
}

/** One finding per fault and workload: the replicas that show it are named in its message and evidence. */
function groupReplicas(findings: readonly Finding[], index: ObjectIndex, namespace: string): Finding[] {
  // Only replicas of the pod's own workload fold: an analyzer may name another owner (the DaemonSet that lacks a pod
  // on this node), and that owner's pods are not these.
  const ownWorkload = (f: Finding) => {
    const pod = index.get(f.resource, namespace);
    const own = pod ? index.topOwner(pod) : undefined;
    return own !== undefined && f.owner !== undefined && refKey(own) === refKey(f.owner);
  };
  const foldable = (f: Finding) =>
    f.resource.kind === 'Pod' &&
    f.owner !== undefined &&
    WORKLOADS.has(f.owner.kind) &&
    f.stale === undefined &&
    ownWorkload(f);
  const groups = new Map<string, Finding[]>();
  const out: Finding[] = [];
  for (const f of findings) {
    if (!foldable(f) || !f.owner) {
      out.push(f);
      continue;
    }
    const key = `${f.code}|${refKey(f.owner)}`;
    const group = groups.get(key);
    if (group) group.push(f);
    else {
      groups.set(key, [f]);
      out.push(f);
    }
  }
  return out
    .map((f) => {
      if (!f.owner || !foldable(f)) return f;
      const group = (groups.get(`${f.code}|${refKey(f.owner)}`) ?? [f]).slice().sort(compareFindings);
      const lead = group[0] as Finding;
      const total = index.replicaCount(f.owner);
      const names = group.map((g) => g.resource.name);
      const shown = names.slice(0, MAX_NAMED_PODS).join(', ') + (names.length > MAX_NAMED_PODS ? ', …' : '');
      const of =
        total >= names.length
          ? `${names.length} of ${total} pods`
          : `${names.length} pod${names.length > 1 ? 's' : ''}`;
      return {
        ...lead,
        message: `${lead.message} (${of} of ${f.owner.kind} ${f.owner.name}: ${shown})`,
        evidence: [...new Set(group.flatMap((g) => g.evidence))],
        related: dedupeRefs([...group.flatMap((g) => g.related), ...group.slice(1).map((g) => g.resource)]),
        confidence: Math.max(...group.map((g) => g.confidence)),
      };
    })
    .sort(compareFindings);
}

function dedupeRefs(refs: readonly ResourceRef[]): ResourceRef[] {
  const seen = new Set<string>();
  return refs.filter((r) => {
    const k = refKey(r);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
