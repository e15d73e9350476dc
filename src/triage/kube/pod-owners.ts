import type { KubeObject, ResourceKind } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import type { ResourceRef } from '../envelope/findings.js';
import { entriesOf } from './entries.js';
import { ref } from './pods.js';

/** The workload that owns a pod, and the pods a workload owns, worked out once per context. */

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
export function byName(
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
