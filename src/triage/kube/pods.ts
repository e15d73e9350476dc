import { isConditionTrue } from '../../cluster/conditions.js';
import type { KubeObject } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import type { ResourceRef } from '../envelope/findings.js';

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

export function isPodReady(pod: KubeObject): boolean {
  return isConditionTrue(pod, 'Ready');
}

export function isTerminating(pod: KubeObject): boolean {
  return typeof pod.metadata.deletionTimestamp === 'string';
}

export function isoAge(now: Date, iso: unknown): number {
  if (typeof iso !== 'string') return Number.POSITIVE_INFINITY;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? Number.POSITIVE_INFINITY : Math.max(0, now.getTime() - t);
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

/** The node a pod runs on, when nodes were read. */
export function nodeOfPod(ctx: AnalyzerContext, pod: KubeObject): KubeObject | undefined {
  const name = pod.spec?.nodeName;
  return typeof name === 'string' ? ctx.objects('nodes').find((n) => n.metadata.name === name) : undefined;
}
