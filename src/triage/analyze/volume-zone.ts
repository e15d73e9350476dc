import type { KubeObject } from '../../cluster/types.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { canSee, describeEvent, findEvents, isRecent } from '../kube/events.js';
import { nameList } from '../kube/evidence-list.js';
import { ownerOf } from '../kube/pod-owners.js';
import { namespacePods, podRef, ref } from '../kube/pods.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

/**
 * A bound volume lives in one zone for good: its PersistentVolume's node affinity says which. When the scheduler
 * rejects every node for `volume node affinity conflict` and no node read is in that zone, the pod can only run once
 * a node exists there. Where Karpenter provisions nodes, a NodePool whose zone requirement leaves that zone out is
 * what keeps one from being launched: that NodePool is the object to change, and the pod's workload is what suffers.
 */

const NAME = 'volume-zone';
const CONFLICT = /volume node affinity conflict/i;

type Expression = { key?: string; operator?: string; values?: string[] };

/** Zone labels are spelled per provider (`topology.kubernetes.io/zone`, `topology.ebs.csi.aws.com/zone`, …). */
const isZoneKey = (key: string | undefined) => key !== undefined && /(^|\/)zone$/.test(key);

/** The zones a PersistentVolume's required node affinity allows, or undefined when it does not restrict zones. */
export function volumeZones(pv: KubeObject): string[] | undefined {
  const terms = (pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? []) as Array<{
    matchExpressions?: Expression[];
  }>;
  const zones = new Set<string>();
  for (const term of terms) {
    const zoneExpr = (term.matchExpressions ?? []).find((e) => isZoneKey(e.key) && e.operator === 'In');
    if (!zoneExpr) return undefined; // a term without a zone restriction allows every zone
    for (const v of zoneExpr.values ?? []) zones.add(v);
  }
  return zones.size > 0 ? [...zones] : undefined;
}

/** The zone a node is in, by whichever zone label it carries. */
function nodeZone(node: KubeObject): string | undefined {
  const labels = node.metadata.labels ?? {};
  return labels['topology.kubernetes.io/zone'] ?? Object.entries(labels).find(([k]) => isZoneKey(k))?.[1];
}

/**
 * Whether a NodePool's requirements let Karpenter launch a node in one of `zones`: undefined when they say nothing
 * about zones (the node class decides), else the verdict with the zones it allows.
 */
export function nodePoolZones(
  pool: KubeObject,
  zones: readonly string[],
): { allows: boolean; allowed: string[] } | undefined {
  const reqs = (pool.spec?.template?.spec?.requirements ?? []) as Expression[];
  const zoneReqs = reqs.filter((r) => isZoneKey(r.key));
  if (zoneReqs.length === 0) return undefined;
  let allows = true;
  const allowed: string[] = [];
  for (const r of zoneReqs) {
    const values = r.values ?? [];
    if (r.operator === 'In') {
      allowed.push(...values);
      if (!zones.some((z) => values.includes(z))) allows = false;
    } else if (r.operator === 'NotIn' && zones.every((z) => values.includes(z))) allows = false;
  }
  return { allows, allowed };
}

/** A NodePool that leaves out the zone of some Pending pods' volumes: the pods, their volumes and the evidence. */
interface PoolBlock {
  pool: KubeObject;
  allowed: string[];
  zones: Set<string>;
  pods: string[];
  lines: string[];
  related: Map<string, ResourceRef>;
}

/** Pending pods in a volume node affinity conflict whose volume's zone no node is in and no pool may launch in. */
function poolsLeavingOutVolumeZones(
  ctx: AnalyzerContext,
  pools: readonly KubeObject[],
  nodes: readonly KubeObject[],
): Map<string, PoolBlock> {
  const byPool = new Map<string, PoolBlock>();
  for (const pod of namespacePods(ctx)) {
    if (pod.status?.phase !== 'Pending') continue;
    const namespace = pod.metadata.namespace ?? ctx.namespace;
    const conflict = findEvents(ctx, {
      kind: 'Pod',
      name: pod.metadata.name,
      namespace,
      reasons: ['FailedScheduling'],
      message: CONFLICT,
    }).find((e) => isRecent(ctx.now, e.last));
    if (!conflict) continue;
    const claims = ((pod.spec?.volumes ?? []) as Array<{ persistentVolumeClaim?: { claimName?: string } }>)
      .map((v) => v.persistentVolumeClaim?.claimName)
      .filter((c): c is string => typeof c === 'string');
    for (const claimName of claims) {
      const claim = ctx
        .objects('persistentvolumeclaims')
        .find((c) => c.metadata.name === claimName && (c.metadata.namespace ?? namespace) === namespace);
      const pvName = claim?.spec?.volumeName as string | undefined;
      const pv = pvName ? ctx.objects('persistentvolumes').find((v) => v.metadata.name === pvName) : undefined;
      const zones = pv ? volumeZones(pv) : undefined;
      if (!pv || !zones) continue;
      // A node in the volume's zone means the conflict lies elsewhere (taints, capacity): not this fault.
      const present = [...new Set(nodes.map(nodeZone).filter((z): z is string => z !== undefined))].sort();
      if (present.some((z) => zones.includes(z))) continue;
      const verdicts = pools.map((pool) => ({ pool, verdict: nodePoolZones(pool, zones) }));
      // A pool that may launch in the zone (or does not restrict zones) will bring a node: nothing to blame.
      if (verdicts.some((v) => v.verdict === undefined || v.verdict.allows)) continue;
      const karpenter = findEvents(ctx, {
        kind: 'Pod',
        name: pod.metadata.name,
        namespace,
        message: /incompatible with nodepool/,
      }).find((e) => isRecent(ctx.now, e.last));
      for (const { pool, verdict } of verdicts) {
        const name = pool.metadata.name;
        const entry = byPool.get(name) ?? {
          pool,
          allowed: verdict?.allowed ?? [],
          zones: new Set<string>(),
          pods: [],
          lines: [
            describeEvent(conflict, ctx.now),
            `PersistentVolume ${pv.metadata.name} (claim ${namespace}/${claimName}) can only attach in zone ${zones.join(', ')}; the ${nodes.length} nodes are in ${present.join(', ') || 'no labelled zone'}`,
            `NodePool ${name} requires zone In [${(verdict?.allowed ?? []).join(', ')}]`,
            ...(karpenter ? [describeEvent(karpenter, ctx.now)] : []),
          ],
          related: new Map<string, ResourceRef>(),
        };
        for (const z of zones) entry.zones.add(z);
        entry.pods.push(pod.metadata.name);
        const owner = ownerOf(ctx, pod) ?? podRef(pod);
        entry.related.set(`${owner.kind}/${owner.name}`, owner);
        entry.related.set(`pvc/${claimName}`, ref('PersistentVolumeClaim', claimName, namespace));
        entry.related.set(`pv/${pv.metadata.name}`, ref('PersistentVolume', pv.metadata.name));
        byPool.set(name, entry);
      }
    }
  }
  return byPool;
}

/** One finding per pool; several pools are alternatives of one another. */
function poolFindings(byPool: Map<string, PoolBlock>): FindingInput[] {
  const out: FindingInput[] = [];
  const names = [...byPool.keys()];
  for (const [name, e] of byPool) {
    const zones = [...e.zones].join(', ');
    out.push({
      code: 'NODEPOOL_EXCLUDES_VOLUME_ZONE',
      analyzer: NAME,
      domain: 'storage',
      severity: 'high',
      resource: ref('NodePool', name),
      message: `NodePool ${name} cannot launch a node in ${zones}, where the volume of ${nameList(e.pods)} lives, and no node is there: the pod stays Pending with volume node affinity conflict.`,
      evidence: [
        ...e.lines.slice(0, 1),
        ...(e.pods.length > 1 ? [`${e.pods.length} pods wait the same way: ${nameList(e.pods)}`] : []),
        ...e.lines.slice(1),
      ].slice(0, 5),
      // Several pools that each leave the zone out are alternatives of one another.
      confidence: names.length === 1 ? 0.9 : 0.75,
      related: [...e.related.values()],
      remediation: ['fix-nodepool-zones'],
      change: `add ${zones} to the zone requirement of NodePool ${name} (it allows ${e.allowed.join(', ') || 'none'})`,
      ...(names.length > 1
        ? {
            alternatives: names
              .filter((n) => n !== name)
              .slice(0, 2)
              .map((n) => ({ resource: ref('NodePool', n), change: `add ${zones} to NodePool ${n}` })),
          }
        : {}),
    });
  }
  return out;
}

export const volumeZoneAnalyzer: Analyzer = {
  name: NAME,
  domain: 'storage',
  description:
    "Pods held by their volume's zone: the PersistentVolume's node affinity against the zones that have nodes, and the Karpenter NodePool that leaves that zone out.",
  needs: ['pods', 'persistentvolumeclaims', 'persistentvolumes', 'nodes', 'nodepools', 'events'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    // Without the nodes and the pools, "no node in that zone" and "no pool allows it" cannot be told.
    if (!canSee(ctx, 'nodes') || !canSee(ctx, 'persistentvolumes') || !canSee(ctx, 'nodepools')) return [];
    const pools = ctx.objects('nodepools');
    const nodes = ctx.objects('nodes');
    if (pools.length === 0 || nodes.length === 0) return [];
    return poolFindings(poolsLeavingOutVolumeZones(ctx, pools, nodes));
  },
};
