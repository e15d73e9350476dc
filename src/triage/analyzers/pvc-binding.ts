import type { KubeObject } from '../../cluster/types.js';
import type { Analyzer, AnalyzerContext } from '../analyzer.js';
import type { FindingInput, ResourceRef } from '../findings.js';
import { canSee, describeEvent, type EventSummary, findEvents, formatAge, isRecent, MINUTE } from './events.js';
import { inNamespace, isoAge, podCondition, ref } from './pods.js';
import { parseQuantity } from './quantity.js';
import { formatSelector, matchesSelector } from './selectors.js';
import { claimClass, claimConsumers, isDefaultStorageClass, pvClass, shortModes } from './storage.js';

const NAME = 'pvc-binding';

/** Provisioning that has not finished after this long is no longer "just slow". */
const PROVISIONING_GRACE_MS = 5 * MINUTE;

interface Emit {
  code: string;
  severity: FindingInput['severity'];
  message: string;
  evidence: string[];
  confidence: number;
  related?: ResourceRef[];
  remediation?: string[];
}

function pvcState(pvc: KubeObject, ctx: AnalyzerContext): string {
  const requested = pvc.spec?.resources?.requests?.storage ?? '?';
  const cls = claimClass(pvc);
  const clsText =
    cls === undefined ? 'no storageClassName' : cls === '' ? 'storageClassName ""' : `storageClassName ${cls}`;
  return `PVC ${pvc.metadata.name} ${pvc.status?.phase ?? 'Pending'} for ${formatAge(isoAge(ctx.now, pvc.metadata.creationTimestamp))} (${clsText}, ${requested}, ${shortModes(pvc.spec?.accessModes)})`;
}

/** Pods anywhere in the read set that look like the given CSI/external provisioner. */
function provisionerPods(ctx: AnalyzerContext, provisioner: string): KubeObject[] {
  const token = provisioner.split(/[./]/)[0] ?? provisioner;
  return ctx.objects('pods').filter((pod) => {
    const text = JSON.stringify([pod.spec?.containers ?? [], pod.metadata.labels ?? {}]);
    if (text.includes(provisioner)) return true;
    return /csi-provisioner|external-provisioner/.test(text) && pod.metadata.name.includes(token);
  });
}

interface Mismatch {
  pv: KubeObject;
  codes: { code: string; detail: string }[];
}

/** Why each Available PV of the claim's class cannot bind it (static binding). */
function staticMismatches(pvc: KubeObject, pvs: readonly KubeObject[], cls: string): Mismatch[] {
  const requested = parseQuantity(pvc.spec?.resources?.requests?.storage) ?? 0;
  const wantModes: string[] = Array.isArray(pvc.spec?.accessModes) ? pvc.spec.accessModes : [];
  const volumeMode = pvc.spec?.volumeMode ?? 'Filesystem';
  const out: Mismatch[] = [];
  for (const pv of pvs) {
    if (pvClass(pv) !== cls) continue;
    if (pv.status?.phase !== 'Available') continue;
    const claimRef = pv.spec?.claimRef;
    if (
      claimRef?.name !== undefined &&
      (claimRef.name !== pvc.metadata.name || claimRef.namespace !== pvc.metadata.namespace)
    )
      continue;
    const codes: Mismatch['codes'] = [];
    const capacity = parseQuantity(pv.spec?.capacity?.storage) ?? 0;
    if (capacity < requested) {
      codes.push({
        code: 'PVC_PV_SIZE_MISMATCH',
        detail: `PV ${pv.metadata.name} capacity ${pv.spec?.capacity?.storage} < requested ${pvc.spec?.resources?.requests?.storage}`,
      });
    }
    const haveModes: string[] = Array.isArray(pv.spec?.accessModes) ? pv.spec.accessModes : [];
    if (!wantModes.every((m) => haveModes.includes(m))) {
      codes.push({
        code: 'PVC_PV_ACCESSMODE_MISMATCH',
        detail: `PV ${pv.metadata.name} offers ${shortModes(haveModes)}, claim wants ${shortModes(wantModes)}`,
      });
    }
    if (pvc.spec?.selector && !matchesSelector(pvc.spec.selector, pv.metadata.labels)) {
      const labels = Object.entries(pv.metadata.labels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      codes.push({
        code: 'PVC_PV_SELECTOR_MISMATCH',
        detail: `PV ${pv.metadata.name} labels {${labels}} do not match claim selector ${formatSelector(pvc.spec.selector)}`,
      });
    }
    if ((pv.spec?.volumeMode ?? 'Filesystem') !== volumeMode) {
      codes.push({
        code: 'PVC_NO_MATCHING_PV',
        detail: `PV ${pv.metadata.name} volumeMode ${pv.spec?.volumeMode} ≠ claim ${volumeMode}`,
      });
    }
    out.push({ pv, codes });
  }
  // The closest candidate first: fewest reasons, then the largest capacity.
  return out.sort(
    (a, b) =>
      a.codes.length - b.codes.length ||
      (parseQuantity(b.pv.spec?.capacity?.storage) ?? 0) - (parseQuantity(a.pv.spec?.capacity?.storage) ?? 0) ||
      a.pv.metadata.name.localeCompare(b.pv.metadata.name),
  );
}

function staticBinding(pvc: KubeObject, ctx: AnalyzerContext, cls: string, base: string[]): Emit[] {
  if (!canSee(ctx, 'persistentvolumes')) return [];
  const candidates = staticMismatches(pvc, ctx.objects('persistentvolumes'), cls);
  const classText = cls === '' ? 'without a class' : `of class ${cls}`;
  if (candidates.length === 0) {
    return [
      {
        code: 'PVC_NO_MATCHING_PV',
        severity: 'high',
        message: `PVC ${pvc.metadata.name} needs a pre-created PersistentVolume ${classText}, and no Available one exists.`,
        evidence: [...base, `0 Available PersistentVolumes ${classText}`],
        confidence: 0.85,
        remediation: ['create-matching-pv', 'set-storageclass'],
      },
    ];
  }
  const best = candidates[0]!;
  if (best.codes.length === 0) return [];
  return best.codes.map((c, i) => ({
    code: c.code,
    severity: 'high',
    message: `PVC ${pvc.metadata.name} cannot bind to PV ${best.pv.metadata.name}: ${c.detail}.`,
    evidence: [...base, c.detail, `${candidates.length} Available PV(s) ${classText}, none compatible`],
    confidence: i === 0 ? 0.9 : 0.8,
    related: [ref('PersistentVolume', best.pv.metadata.name)],
    remediation: [c.code === 'PVC_PV_SIZE_MISMATCH' ? 'resize-claim-or-pv' : 'fix-claim-spec', 'create-matching-pv'],
  }));
}

function analyzeClaim(pvc: KubeObject, ctx: AnalyzerContext): Emit[] {
  const events = findEvents(ctx, { kind: 'PersistentVolumeClaim', name: pvc.metadata.name, namespace: ctx.namespace });
  const recent = (e: EventSummary) => isRecent(ctx.now, e.last);
  const eventLines = events.filter((e) => e.type === 'Warning' || e.reason === 'ExternalProvisioning').slice(0, 2);
  const base = [pvcState(pvc, ctx), ...eventLines.map((e) => describeEvent(e, ctx.now))];
  const consumers = claimConsumers(ctx, pvc.metadata.name);
  const consumerRefs = consumers.map((p) => ref('Pod', p.metadata.name, p.metadata.namespace));
  const cls = claimClass(pvc);
  const classes = ctx.objects('storageclasses');
  const seeClasses = canSee(ctx, 'storageclasses');

  // A ProvisioningFailed for a missing class is conclusive even when StorageClasses could not be listed.
  const classMissingEvent = events.find((e) => /storageclass\.storage\.k8s\.io "[^"]+" not found/.test(e.message));

  if (cls === undefined) {
    if (!seeClasses) return [];
    const defaults = classes.filter(isDefaultStorageClass);
    if (defaults.length === 0) {
      const none = classes.length === 0;
      return [
        {
          code: none ? 'PVC_NO_STORAGECLASS' : 'PVC_NO_DEFAULT_STORAGECLASS',
          severity: 'high',
          message: none
            ? `PVC ${pvc.metadata.name} names no StorageClass and the cluster has none, so nothing can provision it.`
            : `PVC ${pvc.metadata.name} names no StorageClass and no StorageClass is marked default, so it waits for a matching static PV forever.`,
          evidence: [
            ...base,
            none
              ? '0 StorageClasses in the cluster'
              : `StorageClasses ${classes.map((c) => c.metadata.name).join(', ')}: none annotated storageclass.kubernetes.io/is-default-class=true`,
          ],
          confidence: 0.92,
          related: consumerRefs,
          remediation: ['set-storageclass', 'mark-default-storageclass'],
        },
      ];
    }
    return staticBinding(pvc, ctx, '', base);
  }

  if (cls === '') return staticBinding(pvc, ctx, '', base);

  const sc = classes.find((c) => c.metadata.name === cls);
  if (sc === undefined) {
    const staticPvs = ctx.objects('persistentvolumes').filter((pv) => pvClass(pv) === cls);
    if (staticPvs.length > 0) return staticBinding(pvc, ctx, cls, base);
    if (!seeClasses && classMissingEvent === undefined) return [];
    return [
      {
        code: 'PVC_STORAGECLASS_NOT_FOUND',
        severity: 'high',
        message: `PVC ${pvc.metadata.name} asks for StorageClass "${cls}", which does not exist.`,
        evidence: [
          ...base,
          seeClasses
            ? `existing StorageClasses: ${classes.map((c) => c.metadata.name).join(', ') || 'none'}`
            : `event: storageclass "${cls}" not found`,
        ],
        confidence: 0.95,
        related: consumerRefs,
        remediation: ['set-storageclass', 'create-storageclass'],
      },
    ];
  }

  const provisioner = String(sc.provisioner ?? '');
  if (provisioner === 'kubernetes.io/no-provisioner') return staticBinding(pvc, ctx, cls, base);

  const waitForConsumer = sc.volumeBindingMode === 'WaitForFirstConsumer';
  const selectedNode = pvc.metadata.annotations?.['volume.kubernetes.io/selected-node'];
  if (waitForConsumer && selectedNode === undefined) {
    if (consumers.length === 0) {
      return [
        {
          code: 'PVC_WAIT_FOR_FIRST_CONSUMER',
          severity: 'info',
          message: `PVC ${pvc.metadata.name} uses WaitForFirstConsumer class ${cls}: it binds when a pod uses it. No pod uses it yet, which is expected.`,
          evidence: [
            pvcState(pvc, ctx),
            `StorageClass ${cls} volumeBindingMode=WaitForFirstConsumer`,
            '0 pods reference the claim',
          ],
          confidence: 0.9,
          remediation: [],
        },
      ];
    }
    // The claim waits for its pod; whatever keeps the pod from scheduling is the real cause.
    const blocked = consumers.filter((p) => podCondition(p, 'PodScheduled')?.status === 'False');
    const why = blocked
      .map((p) => podCondition(p, 'PodScheduled')?.message)
      .find((m): m is string => typeof m === 'string' && m !== '');
    return [
      {
        code: 'PVC_WAIT_FOR_FIRST_CONSUMER',
        severity: blocked.length > 0 ? 'low' : 'info',
        message:
          blocked.length > 0
            ? `PVC ${pvc.metadata.name} waits for pod ${blocked[0]!.metadata.name}, which cannot be scheduled; fix the scheduling problem and the claim binds.`
            : `PVC ${pvc.metadata.name} waits for its first consumer to be scheduled.`,
        evidence: [
          pvcState(pvc, ctx),
          `StorageClass ${cls} volumeBindingMode=WaitForFirstConsumer`,
          ...(why ? [`pod ${blocked[0]!.metadata.name} unschedulable: ${why}`] : []),
        ],
        confidence: 0.8,
        related: consumerRefs,
        remediation: blocked.length > 0 ? ['fix-pod-scheduling'] : [],
      },
    ];
  }

  const failed = events.filter((e) => e.reason === 'ProvisioningFailed' && recent(e));
  if (failed.length > 0) {
    const first = failed[0]!;
    return [
      {
        code: 'PVC_PROVISIONING_FAILED',
        severity: 'high',
        message: `Provisioner ${provisioner} fails to create the volume for PVC ${pvc.metadata.name}.`,
        evidence: [pvcState(pvc, ctx), describeEvent(first, ctx.now), `StorageClass ${cls} provisioner ${provisioner}`],
        confidence: 0.9,
        related: [ref('StorageClass', cls), ...consumerRefs],
        remediation: ['check-provisioner-logs', 'check-storage-backend'],
      },
    ];
  }

  const waiting = events.filter(
    (e) => e.reason === 'ExternalProvisioning' || /waiting for a volume to be created/i.test(e.message),
  );
  const started = events.filter((e) => e.reason === 'Provisioning' && recent(e));
  const pendingFor = isoAge(ctx.now, pvc.metadata.creationTimestamp);
  if (waiting.length > 0 && started.length === 0 && pendingFor >= PROVISIONING_GRACE_MS) {
    const pods = provisionerPods(ctx, provisioner);
    const running = pods.filter((p) => p.status?.phase === 'Running');
    const waitCount = waiting.reduce((n, e) => n + e.count, 0);
    const podLine = !canSee(ctx, 'pods')
      ? 'provisioner pods could not be read'
      : running.length === 0
        ? pods.length === 0
          ? `no pod for provisioner ${provisioner} found in the pods read`
          : `provisioner pods not running: ${pods.map((p) => `${p.metadata.namespace}/${p.metadata.name} ${p.status?.phase}`).join(', ')}`
        : `provisioner pods running (${running.map((p) => p.metadata.name).join(', ')}) but it never picked the claim up`;
    return [
      {
        code: 'PVC_PROVISIONER_MISSING',
        severity: 'high',
        message: `Nothing is provisioning PVC ${pvc.metadata.name}: StorageClass ${cls} names external provisioner ${provisioner}, which has not acted on the claim in ${formatAge(pendingFor)}.`,
        evidence: [
          pvcState(pvc, ctx),
          describeEvent(waiting[0]!, ctx.now),
          `${waitCount} ExternalProvisioning events, 0 Provisioning events from ${provisioner}`,
          podLine,
        ],
        confidence: running.length === 0 ? 0.88 : 0.6,
        related: [ref('StorageClass', cls), ...consumerRefs],
        remediation: ['install-provisioner', 'set-storageclass'],
      },
    ];
  }

  if (pendingFor >= PROVISIONING_GRACE_MS) {
    return [
      {
        code: 'PVC_PROVISIONING_FAILED',
        severity: 'medium',
        message: `PVC ${pvc.metadata.name} has been Pending for ${formatAge(pendingFor)} with class ${cls} and no explanation in recent events.`,
        evidence: [...base, `StorageClass ${cls} provisioner ${provisioner}`],
        confidence: 0.5,
        related: [ref('StorageClass', cls), ...consumerRefs],
        remediation: ['check-provisioner-logs'],
      },
    ];
  }
  return [];
}

export const pvcBindingAnalyzer: Analyzer = {
  name: NAME,
  domain: 'storage',
  description:
    'PersistentVolumeClaims that do not bind: missing or default StorageClass, provisioner, static PV mismatch.',
  needs: ['persistentvolumeclaims', 'persistentvolumes', 'storageclasses', 'events', 'pods'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    for (const pvc of inNamespace(ctx, ctx.objects('persistentvolumeclaims'))) {
      const phase = pvc.status?.phase ?? 'Pending';
      const resource = ref('PersistentVolumeClaim', pvc.metadata.name, pvc.metadata.namespace ?? ctx.namespace);
      if (phase === 'Lost') {
        findings.push({
          code: 'PVC_LOST',
          analyzer: NAME,
          domain: 'storage',
          severity: 'critical',
          resource,
          message: `PVC ${pvc.metadata.name} lost its PersistentVolume ${pvc.spec?.volumeName ?? ''}; data may be gone.`,
          evidence: [pvcState(pvc, ctx)],
          confidence: 0.95,
          related: pvc.spec?.volumeName ? [ref('PersistentVolume', pvc.spec.volumeName)] : [],
          remediation: ['restore-pv'],
        });
        continue;
      }
      if (phase !== 'Pending') continue;
      for (const e of analyzeClaim(pvc, ctx)) {
        findings.push({ analyzer: NAME, domain: 'storage', resource, related: [], remediation: [], ...e });
      }
    }
    return findings;
  },
};
