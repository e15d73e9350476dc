import type { KubeObject } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyzer.js';
import { namespacePods } from './pods.js';

/** Storage helpers shared by the PVC and volume analyzers. */

export function isDefaultStorageClass(sc: KubeObject): boolean {
  const a = sc.metadata.annotations ?? {};
  return (
    a['storageclass.kubernetes.io/is-default-class'] === 'true' ||
    a['storageclass.beta.kubernetes.io/is-default-class'] === 'true'
  );
}

/** The class a claim asks for: `undefined` when the field is absent (default class applies), `''` for static binding. */
export function claimClass(pvc: KubeObject): string | undefined {
  const spec = pvc.spec?.storageClassName;
  if (typeof spec === 'string') return spec;
  const legacy = pvc.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'];
  return typeof legacy === 'string' ? legacy : undefined;
}

export function pvClass(pv: KubeObject): string {
  const spec = pv.spec?.storageClassName;
  if (typeof spec === 'string') return spec;
  return pv.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? '';
}

/** Pods in the namespace that mount the claim, directly or through a StatefulSet-generated name. */
export function claimConsumers(ctx: AnalyzerContext, claim: string): KubeObject[] {
  return namespacePods(ctx).filter((pod) =>
    (Array.isArray(pod.spec?.volumes) ? pod.spec.volumes : []).some(
      (v: { persistentVolumeClaim?: { claimName?: string }; ephemeral?: unknown; name?: string }) =>
        v?.persistentVolumeClaim?.claimName === claim ||
        (v?.ephemeral !== undefined && `${pod.metadata.name}-${v.name}` === claim),
    ),
  );
}

export const ACCESS_MODE_SHORT: Readonly<Record<string, string>> = {
  ReadWriteOnce: 'RWO',
  ReadOnlyMany: 'ROX',
  ReadWriteMany: 'RWX',
  ReadWriteOncePod: 'RWOP',
};

export function shortModes(modes: unknown): string {
  return (Array.isArray(modes) ? modes : []).map((m) => ACCESS_MODE_SHORT[String(m)] ?? String(m)).join(',');
}
