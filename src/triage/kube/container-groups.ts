import type { KubeObject } from '../../cluster/types.js';
import { byCodePoint } from '../../code-point-order.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import { ownerKey } from './pod-owners.js';
import { type ContainerView, containers, isPodReady, isTerminating, namespacePods } from './pods.js';

/** The namespace's containers grouped by owning workload, and the worst replica of a group first. */

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

/**
 * How bad a container looks right now, for choosing which replica a finding names: the one an engineer would open
 * first (waiting in a back-off, then not ready, then the most recent crash), not the first in name order.
 */
function currentBadness(pod: KubeObject, c: ContainerView): number {
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
