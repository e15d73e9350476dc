import type { KubeObject } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import { scrubText } from '../scrub.js';
import { clip } from './events.js';
import { byName } from './pod-owners.js';

/** Where a pod sits in its Deployment's history, and what its revision changed from the one before. */

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';

interface ReplicaSetRevision {
  replicaSet: KubeObject;
  revision: number | undefined;
  deployment: string | undefined;
}

/** The ReplicaSet a pod belongs to and its Deployment revision, when both were read. */
function replicaSetOf(ctx: AnalyzerContext, pod: KubeObject): ReplicaSetRevision | undefined {
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
 * The ReplicaSet of the revision before the pod's own in its Deployment's history, when it was read: what the pod
 * template was before the change that made the pod's revision.
 */
export function previousReplicaSet(ctx: AnalyzerContext, pod: KubeObject): KubeObject | undefined {
  const mine = replicaSetOf(ctx, pod);
  if (mine?.deployment === undefined || mine.revision === undefined) return undefined;
  return ctx
    .objects('replicasets')
    .filter(
      (r) =>
        r.metadata.namespace === pod.metadata.namespace &&
        r.metadata.ownerReferences?.some((o) => o.kind === 'Deployment' && o.name === mine.deployment) &&
        (revisionNumber(r) ?? 0) < (mine.revision ?? 0),
    )
    .sort((a, b) => (revisionNumber(b) ?? 0) - (revisionNumber(a) ?? 0))[0];
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
  const earlier = previousReplicaSet(ctx, pod);
  if (mine === undefined || earlier === undefined) return undefined;
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
