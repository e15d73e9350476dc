import type { KubeObject } from '../../cluster/types.js';
import { EVIDENCE_PER_FINDING, EVIDENCE_TEXT_MAX } from '../../limits.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import type { ResourceRef } from '../envelope/findings.js';
import { scrubText } from '../scrub.js';
import { clip, describeEvent, type EventSummary } from './events.js';
import { namespacePods, ref } from './pods.js';

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

const ACCESS_MODE_SHORT: Readonly<Record<string, string>> = {
  ReadWriteOnce: 'RWO',
  ReadOnlyMany: 'ROX',
  ReadWriteMany: 'RWX',
  ReadWriteOncePod: 'RWOP',
};

export function shortModes(modes: unknown): string {
  return (Array.isArray(modes) ? modes : []).map((m) => ACCESS_MODE_SHORT[String(m)] ?? String(m)).join(',');
}

/**
 * An event as one evidence line that keeps the end of a long message. CSI and cloud errors nest causes
 * (`rpc error: … desc = could not attach …: operation error EC2: AttachVolume, …, api error InvalidVolume.ZoneMismatch:
 * …`) and the decisive one comes last, where plain clipping would cut it off.
 */
export function describeEventTail(event: EventSummary, now: Date): string {
  const head = describeEvent({ ...event, message: '' }, now);
  return elideMiddle(scrubText(`${head} ${event.message}`));
}

/** Head and tail of a long text with `…` in between. */
export function elideMiddle(text: string, max = EVIDENCE_TEXT_MAX): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const head = Math.floor(max * 0.4);
  return `${flat.slice(0, head).trimEnd()} … ${flat.slice(flat.length - (max - head - 3)).trimStart()}`;
}

/** A workload as `Deployment kube-system/ebs-csi-controller`. */
export function workloadName(o: KubeObject): string {
  return `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
}

export function workloadRef(o: KubeObject): ResourceRef {
  return ref(String(o.kind), o.metadata.name, o.metadata.namespace);
}

/** Desired and available replicas of a Deployment or StatefulSet, and whether it is short of pods. */
export function replicaState(o: KubeObject): { desired: number; available: number; text: string; down: boolean } {
  const desired = typeof o.spec?.replicas === 'number' ? o.spec.replicas : 1;
  const available = Number(
    (o.kind === 'StatefulSet' ? o.status?.readyReplicas : o.status?.availableReplicas) ?? o.status?.readyReplicas ?? 0,
  );
  if (desired === 0) return { desired, available, text: 'is scaled to 0 replicas', down: true };
  if (available === 0) return { desired, available, text: `has 0/${desired} replicas available`, down: true };
  return { desired, available, text: `has ${available}/${desired} replicas available`, down: false };
}

// biome-ignore lint/suspicious/noExplicitAny: raw container JSON
function templateContainers(o: KubeObject): any[] {
  const spec = o.spec?.template?.spec ?? {};
  return [...(Array.isArray(spec.initContainers) ? spec.initContainers : []), ...(spec.containers ?? [])];
}

/** The image's repository name without registry and tag: `public.ecr.aws/csi-components/csi-provisioner:v5` → `csi-provisioner`. */
function imageName(image: unknown): string {
  const path = String(image ?? '').split('@')[0] ?? '';
  const last = path.split('/').pop() ?? '';
  return last.split(':')[0] ?? '';
}

/** A pod template that runs the kubernetes-csi external-provisioner sidecar. */
function runsProvisionerSidecar(o: KubeObject): boolean {
  return templateContainers(o).some((c) => imageName(c?.image) === 'csi-provisioner' || c?.name === 'csi-provisioner');
}

function templateText(o: KubeObject): string {
  return JSON.stringify(o.spec?.template ?? {});
}

/** The name csi-lib-utils gives a driver's leader-election Lease: everything but [a-zA-Z0-9-] becomes `-`. */
export function leaseNameFor(driver: string): string {
  const name = driver.replace(/[^a-zA-Z0-9-]/g, '-');
  return name.endsWith('-') ? `${name}X` : name;
}

const SHARED_LABELS = ['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/part-of'] as const;

export interface ControllerMatch {
  workload: KubeObject;
  /** How the workload was tied to the driver, for the evidence. */
  how: string;
  /** Tied by name alone, not by a Lease, the pod template or the CSIDriver's labels. */
  weak?: boolean;
}

/**
 * The Deployment or StatefulSet that provisions volumes for a provisioner (CSI driver or external provisioner), among
 * the workloads read in any namespace. Ties, strongest first: the provisioner's leader-election Lease names one of
 * its pods; the name appears in the pod template (`--provisioner`, `PROVISIONER_NAME`, a socket path); the workload
 * runs the csi-provisioner sidecar and shares app.kubernetes.io labels with the CSIDriver; it is the workload running
 * that sidecar whose name shares most of the provisioner's distinctive words.
 */
export function provisionerController(ctx: AnalyzerContext, provisioner: string): ControllerMatch | undefined {
  const workloads = [...ctx.objects('deployments'), ...ctx.objects('statefulsets')];
  if (provisioner === '' || workloads.length === 0) return undefined;
  const lease = ctx.objects('leases').find((l) => l.metadata.name === leaseNameFor(provisioner));
  const holder = lease?.spec?.holderIdentity;
  if (typeof holder === 'string' && holder !== '') {
    const byHolder = workloads.find(
      (w) => w.metadata.namespace === lease?.metadata.namespace && holder.startsWith(`${w.metadata.name}-`),
    );
    if (byHolder)
      return {
        workload: byHolder,
        how: `its pod ${holder} last held the ${provisioner} leader Lease ${lease?.metadata.name}`,
      };
  }
  const literal = workloads.filter((w) => templateText(w).includes(provisioner));
  if (literal.length === 1) return { workload: literal[0]!, how: `its pod template names ${provisioner}` };
  const sidecars = workloads.filter(runsProvisionerSidecar);
  const driver = ctx.objects('csidrivers').find((d) => d.metadata.name === provisioner);
  if (driver) {
    const labels = driver.metadata.labels ?? {};
    const shared = sidecars.filter((w) =>
      SHARED_LABELS.some((k) => labels[k] !== undefined && w.metadata.labels?.[k] === labels[k]),
    );
    if (shared.length === 1) {
      const key = SHARED_LABELS.find((k) => labels[k] !== undefined && shared[0]!.metadata.labels?.[k] === labels[k]);
      return {
        workload: shared[0]!,
        how: `it runs csi-provisioner and shares ${key}=${labels[key!]} with CSIDriver ${provisioner}`,
      };
    }
  }
  // The provisioner's distinctive words (not its top-level domain, not the sidecar's own name) in a workload's name.
  const labels = provisioner.toLowerCase().split(/[^a-z0-9]+/);
  if (provisioner.includes('.')) labels.pop();
  const words = [...new Set(labels)].filter((w) => w.length >= 3 && !'csi-provisioner'.includes(w));
  const shares = (w: KubeObject) => words.filter((word) => w.metadata.name.toLowerCase().includes(word));
  const scored = sidecars
    .map((w) => ({ w, score: shares(w).length }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score);
  if (scored.length > 0 && (scored.length === 1 || scored[0]!.score > scored[1]!.score)) {
    const w = scored[0]!.w;
    return {
      workload: w,
      how: `it runs csi-provisioner and its name shares "${shares(w).join('", "')}" with ${provisioner}`,
      weak: true,
    };
  }
  return undefined;
}

/**
 * The DaemonSet that registers a CSI driver with the kubelet on each node: node-driver-registrar is told the plugin
 * socket under /var/lib/kubelet/plugins/<driver>/, so the driver name is in the pod template.
 */
export function nodePluginDaemonSet(ctx: AnalyzerContext, driver: string): KubeObject | undefined {
  const candidates = ctx.objects('daemonsets').filter((d) => templateText(d).includes(driver));
  return candidates.length === 1 ? candidates[0] : candidates.find((d) => templateText(d).includes(`/${driver}/`));
}

/** VolumeAttachments of a PersistentVolume, attached ones first. */
export function attachmentsOf(ctx: AnalyzerContext, pv: string): KubeObject[] {
  return ctx
    .objects('volumeattachments')
    .filter((va) => va.spec?.source?.persistentVolumeName === pv)
    .sort((a, b) => Number(b.status?.attached === true) - Number(a.status?.attached === true));
}

/** The claim a PersistentVolume is bound to, as `namespace/name`. */
export function claimOfVolume(pv: KubeObject): string | undefined {
  const c = pv.spec?.claimRef;
  return c?.name ? `${c.namespace ?? ''}/${c.name}` : undefined;
}

export function fitEvidence(lines: readonly string[]): string[] {
  return lines.slice(0, EVIDENCE_PER_FINDING).map((l) => clip(l));
}
