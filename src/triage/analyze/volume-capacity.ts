import type { KubeObject } from '../../cluster/types.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { ownerOf } from '../kube/pod-owners.js';
import { containers, namespacePods, podRef, ref } from '../kube/pods.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

/**
 * A volume that is full. The application says so in the kernel's words (`No space left on device`, `Disk quota
 * exceeded`); the claim mounted where it writes is what to change (expand it, when its StorageClass allows), and the
 * workload's retention the alternative.
 */

const NAME = 'volume-capacity';
const FULL = /no space left on device|disk quota exceeded/i;

type Volume = { name?: string; persistentVolumeClaim?: { claimName?: string } };
type Mount = { name?: string; mountPath?: string };

function fullLine(ctx: AnalyzerContext, pod: KubeObject): { line: string; container: string } | undefined {
  for (const c of containers(pod)) {
    for (const previous of [true, false]) {
      const text = ctx.log(pod.metadata.name, c.name, previous, pod.metadata.namespace);
      if (!text) continue;
      const line = text
        .split(/\r?\n/)
        .slice(-300)
        .reverse()
        .find((l) => FULL.test(l));
      if (line) return { line: line.trim(), container: c.name };
    }
  }
  return undefined;
}

/** The claim mounted at the path the line names, else the only claim the container mounts. */
function claimWritten(pod: KubeObject, container: string, line: string): string | undefined {
  const volumes = (pod.spec?.volumes ?? []) as Volume[];
  const spec = ((pod.spec?.containers ?? []) as Array<{ name?: string; volumeMounts?: Mount[] }>).find(
    (c) => c.name === container,
  );
  const mounts = (spec?.volumeMounts ?? [])
    .map((m) => ({
      path: m.mountPath ?? '',
      claim: volumes.find((v) => v.name === m.name)?.persistentVolumeClaim?.claimName,
    }))
    .filter((m): m is { path: string; claim: string } => m.claim !== undefined);
  const byPath = mounts
    .filter((m) => m.path !== '' && line.includes(m.path))
    .sort((a, b) => b.path.length - a.path.length)[0];
  if (byPath) return byPath.claim;
  const claims = [...new Set(mounts.map((m) => m.claim))];
  return claims.length === 1 ? claims[0] : undefined;
}

export const volumeCapacityAnalyzer: Analyzer = {
  name: NAME,
  domain: 'storage',
  description: 'Volumes that are full: the claim mounted where the application cannot write, its size and class.',
  needs: ['pods', 'persistentvolumeclaims', 'storageclasses'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    const seen = new Set<string>();
    for (const pod of namespacePods(ctx)) {
      const full = fullLine(ctx, pod);
      if (!full) continue;
      const namespace = pod.metadata.namespace ?? ctx.namespace;
      const claimName = claimWritten(pod, full.container, full.line);
      if (!claimName || seen.has(claimName)) continue;
      seen.add(claimName);
      const claim = ctx
        .objects('persistentvolumeclaims')
        .find((c) => c.metadata.name === claimName && (c.metadata.namespace ?? ctx.namespace) === namespace);
      const capacity = claim?.status?.capacity?.storage ?? claim?.spec?.resources?.requests?.storage;
      const className = claim?.spec?.storageClassName as string | undefined;
      const sc = className ? ctx.objects('storageclasses').find((s) => s.metadata.name === className) : undefined;
      const expandable = sc ? sc['allowVolumeExpansion'] === true : undefined;
      const workload: ResourceRef = ownerOf(ctx, pod) ?? podRef(pod);
      findings.push({
        code: 'VOLUME_FULL',
        analyzer: NAME,
        domain: 'storage',
        severity: 'high',
        resource: ref('PersistentVolumeClaim', claimName, namespace),
        message: `PersistentVolumeClaim ${claimName}${capacity ? ` (${capacity})` : ''} is full: ${workload.kind} ${workload.name} cannot write to it.`,
        evidence: [
          `${pod.metadata.name}/${full.container}: ${full.line}`,
          `claim ${claimName}: capacity ${capacity ?? 'unknown'}, StorageClass ${className ?? 'none'}${expandable === undefined ? '' : expandable ? ' (allowVolumeExpansion: true)' : ' (no volume expansion)'}`,
        ],
        confidence: 0.88,
        related: [workload],
        remediation: ['expand-volume'],
        change: `expand PersistentVolumeClaim ${claimName} beyond ${capacity ?? 'its size'}${expandable === false ? ` (StorageClass ${className} must allow volume expansion first)` : ''}, or free space on it`,
        alternatives: [
          {
            resource: workload,
            change: `lower what ${workload.kind} ${workload.name} keeps on the volume (retention, logs, WAL)`,
          },
        ],
      });
    }
    return findings;
  },
};
