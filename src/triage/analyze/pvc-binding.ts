import damerauLevenshtein from 'damerau-levenshtein';
import { conditionOf } from '../../cluster/conditions.js';
import type { KubeObject } from '../../cluster/types.js';
import { byCodePoint } from '../../code-point-order.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { canSee, describeEvent, type EventSummary, findEvents, formatAge, isRecent, MINUTE } from '../kube/events.js';
import { allowsNode, formatTopologies, topologyKeys } from '../kube/placement.js';
import { ownerOf } from '../kube/pod-owners.js';
import { inNamespace, isoAge, ref } from '../kube/pods.js';
import { parseQuantity } from '../kube/quantity.js';
import { formatSelector, matchesSelector } from '../kube/selectors.js';
import {
  claimClass,
  claimConsumers,
  describeEventTail,
  fitEvidence,
  isDefaultStorageClass,
  provisionerController,
  pvClass,
  replicaState,
  shortModes,
  workloadName,
  workloadRef,
} from '../kube/storage.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

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
  /** The object a person changes when it is not the claim: the PV, the StorageClass, the provisioner's controller. */
  owner?: ResourceRef;
}

/**
 * Claim events that explain a Pending claim besides warnings: the PV controller's FailedBinding ("no persistent volumes
 * available for this claim and no storage class is set") and ExternalProvisioning (waiting for a provisioner) are
 * Normal events.
 */
const EXPLAINING_REASONS = new Set(['FailedBinding', 'ExternalProvisioning', 'ProvisioningFailed']);

/** The scheduler's VolumeBinding reason when no PV matches and none can be provisioned for the node. */
const BIND_CONFLICT = "didn't find available persistent volumes to bind";

function pvcState(pvc: KubeObject, ctx: AnalyzerContext): string {
  const requested = pvc.spec?.resources?.requests?.storage ?? '?';
  const cls = claimClass(pvc);
  const clsText =
    cls === undefined ? 'no storageClassName' : cls === '' ? 'storageClassName ""' : `storageClassName ${cls}`;
  return `PVC ${pvc.metadata.name} ${pvc.status?.phase ?? 'Pending'} for ${formatAge(isoAge(ctx.now, pvc.metadata.creationTimestamp))} (${clsText}, ${requested}, ${shortModes(pvc.spec?.accessModes)})`;
}

/** Pods anywhere in the read set that look like the given CSI/external provisioner. */
function provisionerPods(ctx: AnalyzerContext, provisioner: string): KubeObject[] {
  return ctx.objects('pods').filter((pod) => runsProvisioner(pod, provisioner));
}

/** A pod (or a pod template) that runs the provisioner: its name in containers or labels, or a provisioner sidecar. */
function runsProvisioner(pod: KubeObject, provisioner: string): boolean {
  const token = provisioner.split(/[./]/)[0] ?? provisioner;
  const text = JSON.stringify([pod.spec?.containers ?? [], pod.metadata.labels ?? {}]);
  if (text.includes(provisioner)) return true;
  return /csi-provisioner|external-provisioner/.test(text) && pod.metadata.name.includes(token);
}

/** A cloud API refusing who the caller is, as AWS, Azure and Google word it. */
const IDENTITY_REFUSED =
  /AssumeRoleWithWebIdentity|InvalidIdentityToken|UnauthorizedOperation|AuthorizationFailed|AccessDenied|PERMISSION_DENIED|get credentials|failed to retrieve credentials|invalid_client|AADSTS\d+/;

/**
 * The ServiceAccount whose cloud identity a provisioner uses, when the cloud refused it: the account of the pod that
 * runs the provisioner; its annotations (the role it assumes) are what to change.
 */
function refusedIdentity(
  ctx: AnalyzerContext,
  event: EventSummary,
  provisioner: string,
): { account: ResourceRef; change: string; evidence: string } | undefined {
  if (!IDENTITY_REFUSED.test(event.message)) return undefined;
  // The provisioner's pods, else the controller workloads whose pod template runs it (kube-system's are read).
  const pod =
    provisionerPods(ctx, provisioner).find((p) => p.spec?.serviceAccountName) ??
    (['deployments', 'statefulsets'] as const)
      .flatMap((k) => ctx.objects(k))
      .map(
        (w) =>
          ({
            metadata: { ...w.spec?.template?.metadata, name: w.metadata.name, namespace: w.metadata.namespace },
            spec: w.spec?.template?.spec,
          }) as KubeObject,
      )
      .find((p) => p.spec?.serviceAccountName && runsProvisioner(p, provisioner));
  const name = pod?.spec?.serviceAccountName as string | undefined;
  if (!pod || !name) return undefined;
  const namespace = pod.metadata.namespace ?? '';
  return {
    account: ref('ServiceAccount', name, namespace),
    change: `point ServiceAccount ${namespace}/${name} (its cloud role annotation) at a cloud identity that exists and trusts it, then restart the provisioner's pods`,
    evidence: `provisioner pod ${namespace}/${pod.metadata.name} runs as ServiceAccount ${name}`,
  };
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
      byCodePoint(a.pv.metadata.name, b.pv.metadata.name),
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
  const pvName = best.pv.metadata.name;
  const madeFor = madeForClaim(pvc, best.pv);
  return best.codes.map((c, i) => {
    // A PV created for this very claim whose volume type can serve the requested modes has the wrong modes itself.
    const wanted: string[] = Array.isArray(pvc.spec?.accessModes) ? pvc.spec.accessModes : [];
    const serves = c.code === 'PVC_PV_ACCESSMODE_MISMATCH' ? sourceServes(best.pv, wanted) : undefined;
    const pvAtFault = madeFor !== undefined && serves?.ok === true;
    const detail = [
      c.detail,
      ...(madeFor ? [`PV ${pvName} was made for this claim (${madeFor})`] : []),
      ...(serves ? [serves.why] : []),
    ];
    return {
      code: c.code,
      severity: 'high',
      message: pvAtFault
        ? `PVC ${pvc.metadata.name} cannot bind to PV ${pvName}, which was made for it: ${c.detail}; the ${serves?.source} volume supports the requested mode, so the PV's accessModes are wrong.`
        : `PVC ${pvc.metadata.name} cannot bind to PV ${pvName}: ${c.detail}.`,
      evidence: [...base.slice(0, 2), ...detail, `${candidates.length} Available PV(s) ${classText}, none compatible`],
      confidence: i === 0 ? 0.9 : 0.8,
      related: [
        ref('PersistentVolume', pvName),
        ...claimConsumers(ctx, pvc.metadata.name).map((p) => ref('Pod', p.metadata.name, p.metadata.namespace)),
      ],
      remediation: [
        c.code === 'PVC_PV_SIZE_MISMATCH' ? 'resize-claim-or-pv' : pvAtFault ? 'fix-pv-spec' : 'fix-claim-spec',
        'create-matching-pv',
      ],
      ...(pvAtFault ? { owner: ref('PersistentVolume', pvName) } : {}),
    };
  });
}

/** How a PV is tied to one claim: the claim names it, the PV is pre-bound to the claim, or the claim's selector picks it. */
function madeForClaim(pvc: KubeObject, pv: KubeObject): string | undefined {
  if (pvc.spec?.volumeName === pv.metadata.name) return `the claim's volumeName is ${pv.metadata.name}`;
  const c = pv.spec?.claimRef;
  if (c?.name === pvc.metadata.name && c?.namespace === pvc.metadata.namespace) return 'its claimRef names the claim';
  if (pvc.spec?.selector && matchesSelector(pvc.spec.selector, pv.metadata.labels))
    return `it matches the claim's selector ${formatSelector(pvc.spec.selector)}`;
  return undefined;
}

/**
 * Access modes each in-tree volume type supports (the access-modes table of the Kubernetes documentation). CSI
 * volumes depend on the driver and are not judged.
 */
const SOURCE_MODES: Readonly<Record<string, readonly string[]>> = {
  nfs: ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany'],
  cephfs: ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany'],
  glusterfs: ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany'],
  azureFile: ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany'],
  quobyte: ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany'],
  portworxVolume: ['ReadWriteOnce', 'ReadWriteMany'],
  iscsi: ['ReadWriteOnce', 'ReadOnlyMany'],
  fc: ['ReadWriteOnce', 'ReadOnlyMany'],
  rbd: ['ReadWriteOnce', 'ReadOnlyMany'],
  gcePersistentDisk: ['ReadWriteOnce', 'ReadOnlyMany'],
  awsElasticBlockStore: ['ReadWriteOnce'],
  azureDisk: ['ReadWriteOnce'],
  cinder: ['ReadWriteOnce'],
  vsphereVolume: ['ReadWriteOnce'],
  hostPath: ['ReadWriteOnce'],
  local: ['ReadWriteOnce'],
};

function sourceServes(
  pv: KubeObject,
  wanted: readonly string[],
): { ok: boolean; source: string; why: string } | undefined {
  const source = Object.keys(SOURCE_MODES).find((k) => pv.spec?.[k] !== undefined);
  if (source === undefined || wanted.length === 0) return undefined;
  const supported = SOURCE_MODES[source]!;
  const ok = wanted.every((m) => supported.includes(m));
  return {
    ok,
    source,
    why: ok
      ? `a ${source} volume supports ${shortModes(wanted)}`
      : `a ${source} volume cannot provide ${shortModes(wanted.filter((m) => !supported.includes(m)))}`,
  };
}

const DEFAULT_CLASS_KEYS = [
  'storageclass.kubernetes.io/is-default-class',
  'storageclass.beta.kubernetes.io/is-default-class',
] as const;

/**
 * Which class should be the default when none is: one whose is-default-class annotation is set to something other
 * than "true" was switched off (a chart re-rendering it with "false"); failing that, the class that provisioned most
 * of the cluster's volumes is the one claims without a class used to get.
 */
function intendedDefault(
  ctx: AnalyzerContext,
  classes: readonly KubeObject[],
): { sc: KubeObject; why: string[] } | undefined {
  const switchedOff = classes.filter((c) =>
    DEFAULT_CLASS_KEYS.some((k) => {
      const v = c.metadata.annotations?.[k];
      return v !== undefined && v !== 'true';
    }),
  );
  if (switchedOff.length === 1) {
    const sc = switchedOff[0]!;
    const key = DEFAULT_CLASS_KEYS.find((k) => sc.metadata.annotations?.[k] !== undefined)!;
    const used = ctx.objects('persistentvolumes').filter((pv) => pvClass(pv) === sc.metadata.name).length;
    return {
      sc,
      why: [
        `StorageClass ${sc.metadata.name} (provisioner ${sc.provisioner}) is annotated ${key}="${sc.metadata.annotations?.[key]}"`,
        ...(used > 0 ? [`${used} existing PersistentVolume(s) use StorageClass ${sc.metadata.name}`] : []),
      ],
    };
  }
  const dynamic = classes.filter((c) => c.provisioner !== 'kubernetes.io/no-provisioner');
  const counts = dynamic
    .map((sc) => ({
      sc,
      n: ctx
        .objects('persistentvolumes')
        .filter(
          (pv) => pvClass(pv) === sc.metadata.name && pv.metadata.annotations?.['pv.kubernetes.io/provisioned-by'],
        ).length,
    }))
    .filter((x) => x.n > 0)
    .sort((a, b) => b.n - a.n);
  const top = counts[0];
  if (top === undefined || (counts[1] !== undefined && counts[1].n === top.n)) return undefined;
  return {
    sc: top.sc,
    why: [`StorageClass ${top.sc.metadata.name} provisioned ${top.n} of the cluster's dynamically provisioned volumes`],
  };
}

/** The existing name a mistyped one most likely meant: at least half alike (edits or shared prefix), and unique. */
function closestName(wanted: string, names: readonly string[]): string | undefined {
  const scored = names
    .map((name) => {
      const longest = Math.max(wanted.length, name.length);
      let prefix = 0;
      while (prefix < Math.min(wanted.length, name.length) && wanted[prefix] === name[prefix]) prefix++;
      const similarity = Math.max(1 - damerauLevenshtein(wanted, name).steps / longest, prefix / longest);
      return { name, similarity };
    })
    .filter((x) => x.similarity >= 0.5)
    .sort((a, b) => b.similarity - a.similarity);
  if (scored.length === 0 || scored[1]?.similarity === scored[0]!.similarity) return undefined;
  return scored[0]!.name;
}

/**
 * WaitForFirstConsumer with allowedTopologies: the scheduler's VolumeBinding filter rejects every node the class does
 * not allow ("N node(s) didn't find available persistent volumes to bind"), so a class restricted to zones or regions
 * the cluster has no nodes in leaves the pod unschedulable and the claim waiting forever.
 */
function topologyMismatch(
  ctx: AnalyzerContext,
  sc: KubeObject,
  cls: string,
  blocked: readonly KubeObject[],
  why: string | undefined,
): Emit | undefined {
  const allowed = sc.allowedTopologies;
  if (!Array.isArray(allowed) || allowed.length === 0 || blocked.length === 0) return undefined;
  const pod = blocked[0]!;
  const messages = [
    ...(why ? [why] : []),
    ...findEvents(ctx, {
      kind: 'Pod',
      name: pod.metadata.name,
      namespace: pod.metadata.namespace ?? ctx.namespace,
      reasons: ['FailedScheduling'],
    }).map((e) => e.message),
  ];
  const message = messages.find((m) => m.includes(BIND_CONFLICT));
  if (message === undefined) return undefined;
  const total = Number(/^0\/(\d+) nodes are available/.exec(message)?.[1] ?? Number.NaN);
  const conflicting = Number(
    /(\d+) node\(s\) didn't find available persistent volumes to bind/.exec(message)?.[1] ?? 0,
  );
  const nodes = canSee(ctx, 'nodes') ? ctx.objects('nodes') : [];
  const allowedText = `StorageClass ${cls} allowedTopologies: ${formatTopologies(allowed)}`;
  const scheduler = `pod ${pod.metadata.name} unschedulable: ${message}`;
  const base = {
    code: 'PVC_TOPOLOGY_MISMATCH',
    severity: 'high' as const,
    related: [ref('StorageClass', cls), ...blocked.map((p) => ref('Pod', p.metadata.name, p.metadata.namespace))],
    remediation: ['fix-allowed-topologies'],
    owner: ref('StorageClass', cls),
  };
  if (nodes.length > 0) {
    const matching = nodes.filter((n) => allowsNode(allowed, n));
    if (matching.length > 0) return undefined;
    const where = topologyKeys(allowed).map((key) => {
      const values = [...new Set(nodes.map((n) => n.metadata.labels?.[key] ?? '(unset)'))].sort();
      return `${key} ${values.join(', ')}`;
    });
    return {
      ...base,
      message: `StorageClass ${cls} only allows topologies no node is in, so the scheduler finds no node where it could provision the volume for pod ${pod.metadata.name}.`,
      evidence: [allowedText, `0 of ${nodes.length} nodes match; the nodes are in ${where.join('; ')}`, scheduler],
      confidence: 0.93,
    };
  }
  // Nodes not read: the scheduler's verdict on every node and the class's restriction still point at the class.
  if (!Number.isFinite(total) || conflicting !== total) return undefined;
  return {
    ...base,
    message: `No node can host a volume of StorageClass ${cls}: the scheduler rejects all ${total} nodes for pod ${pod.metadata.name}'s volume, and the class restricts where volumes may be provisioned.`,
    evidence: [allowedText, scheduler],
    confidence: 0.8,
  };
}

/** Whether the provisioner is a registered CSI driver, when CSIDrivers were read. */
function csiDriverLine(ctx: AnalyzerContext, provisioner: string): string | undefined {
  if (!canSee(ctx, 'csidrivers') || ctx.objects('csidrivers').length === 0) return undefined;
  return ctx.objects('csidrivers').some((d) => d.metadata.name === provisioner)
    ? `CSIDriver ${provisioner} is registered`
    : `no CSIDriver named ${provisioner} (CSIDrivers: ${ctx
        .objects('csidrivers')
        .map((d) => d.metadata.name)
        .join(', ')})`;
}

/** What every step of a claim's diagnosis reads: its first evidence lines, the pods that use it and the StorageClasses. */
interface Claim {
  pvc: KubeObject;
  base: string[];
  consumers: KubeObject[];
  consumerRefs: ResourceRef[];
  classes: readonly KubeObject[];
  seeClasses: boolean;
}

/** A claim that names no StorageClass: there is no class at all, or none is marked default. */
function noClassNamed(claim: Claim, ctx: AnalyzerContext): Emit[] {
  const { pvc, base, consumerRefs, classes, seeClasses } = claim;
  if (!seeClasses) return [];
  const defaults = classes.filter(isDefaultStorageClass);
  if (defaults.length === 0) {
    const none = classes.length === 0;
    const intended = none ? undefined : intendedDefault(ctx, classes);
    return [
      {
        code: none ? 'PVC_NO_STORAGECLASS' : 'PVC_NO_DEFAULT_STORAGECLASS',
        severity: 'high',
        message: none
          ? `PVC ${pvc.metadata.name} names no StorageClass and the cluster has none, so nothing can provision it.`
          : `PVC ${pvc.metadata.name} names no StorageClass and no StorageClass is marked default, so it waits for a matching static PV forever${intended ? `; StorageClass ${intended.sc.metadata.name} looks like the default that was lost` : ''}.`,
        evidence: [
          ...base,
          none
            ? '0 StorageClasses in the cluster'
            : `StorageClasses ${classes.map((c) => c.metadata.name).join(', ')}: none annotated storageclass.kubernetes.io/is-default-class=true`,
          ...(intended?.why ?? []),
        ],
        confidence: 0.92,
        related: [...(intended ? [ref('StorageClass', intended.sc.metadata.name)] : []), ...consumerRefs],
        remediation: ['set-storageclass', 'mark-default-storageclass'],
        ...(intended ? { owner: ref('StorageClass', intended.sc.metadata.name) } : {}),
      },
    ];
  }
  return staticBinding(pvc, ctx, '', base);
}

/** A claim that names a StorageClass which does not exist (and no static PV carries that class). */
function classNotFound(
  claim: Claim,
  ctx: AnalyzerContext,
  cls: string,
  classMissingEvent: EventSummary | undefined,
): Emit[] {
  const { pvc, base, consumerRefs, classes, seeClasses } = claim;
  const staticPvs = ctx.objects('persistentvolumes').filter((pv) => pvClass(pv) === cls);
  if (staticPvs.length > 0) return staticBinding(pvc, ctx, cls, base);
  if (!seeClasses && classMissingEvent === undefined) return [];
  const closest = closestName(
    cls,
    classes.map((c) => c.metadata.name),
  );
  return [
    {
      code: 'PVC_STORAGECLASS_NOT_FOUND',
      severity: 'high',
      message: `PVC ${pvc.metadata.name} asks for StorageClass "${cls}", which does not exist${closest ? ` (did you mean ${closest}?)` : ''}.`,
      evidence: [
        ...base,
        seeClasses
          ? `existing StorageClasses: ${classes.map((c) => c.metadata.name).join(', ') || 'none'}`
          : `event: storageclass "${cls}" not found`,
        ...(closest ? [`closest existing StorageClass: ${closest}`] : []),
      ],
      confidence: 0.95,
      related: consumerRefs,
      remediation: ['set-storageclass', 'create-storageclass'],
    },
  ];
}

/** A WaitForFirstConsumer claim with no node chosen yet: whatever keeps its pod from scheduling is the cause. */
function waitingForConsumer(claim: Claim, ctx: AnalyzerContext, sc: KubeObject, cls: string): Emit[] {
  const { pvc, consumers, consumerRefs } = claim;
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
  const blocked = consumers.filter((p) => conditionOf(p, 'PodScheduled')?.status === 'False');
  const why = blocked
    .map((p) => conditionOf(p, 'PodScheduled')?.message)
    .find((m): m is string => typeof m === 'string' && m !== '');
  const topology = topologyMismatch(ctx, sc, cls, blocked, why);
  if (topology) return [{ ...topology, evidence: [pvcState(pvc, ctx), ...topology.evidence] }];
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

/** The provisioner tried and failed: its own refusal of the class's parameters, or the cloud refusing its identity. */
function provisioningFailed(
  claim: Claim,
  ctx: AnalyzerContext,
  cls: string,
  provisioner: string,
  failed: readonly EventSummary[],
): Emit[] {
  const { pvc, consumerRefs } = claim;
  const first = failed[0]!;
  // The CSI driver refusing the request itself (gRPC InvalidArgument, an unknown parameter) refuses what the
  // StorageClass passes it: the class is what to change, not the claim or the storage backend.
  const invalid = /code = InvalidArgument|invalid parameter|unknown parameter|parameter [^ ]+ is invalid/i.test(
    first.message,
  );
  const identity = invalid ? undefined : refusedIdentity(ctx, first, provisioner);
  return [
    {
      code: 'PVC_PROVISIONING_FAILED',
      severity: 'high',
      ...(invalid && cls ? { owner: ref('StorageClass', cls) } : {}),
      ...(identity ? { owner: identity.account, change: identity.change } : {}),
      message: `Provisioner ${provisioner} fails to create the volume for PVC ${pvc.metadata.name}${invalid ? `: it refuses the parameters of StorageClass ${cls}` : identity ? `: the cloud refuses the credentials of its ServiceAccount ${identity.account.namespace}/${identity.account.name}` : ''}.`,
      evidence: [
        pvcState(pvc, ctx),
        describeEventTail(first, ctx.now),
        ...(identity ? [identity.evidence] : []),
        `StorageClass ${cls} provisioner ${provisioner}`,
      ],
      confidence: 0.9,
      related: [ref('StorageClass', cls), ...consumerRefs],
      remediation: ['check-provisioner-logs', 'check-storage-backend'],
    },
  ];
}

/** The claim waits for an external provisioner whose controller was found, down or not acting on it. */
function controllerNotActing(
  claim: Claim,
  ctx: AnalyzerContext,
  cls: string,
  provisioner: string,
  controller: NonNullable<ReturnType<typeof provisionerController>>,
  pending: { evidence: string[]; counts: string; driverLine: string | undefined; pendingFor: number },
): Emit[] {
  const { pvc, consumerRefs } = claim;
  const { evidence, counts, driverLine, pendingFor } = pending;
  const { workload, how } = controller;
  const state = replicaState(workload);
  const pods = ctx.objects('pods').filter((p) => {
    const o = ownerOf(ctx, p);
    return (
      o !== undefined &&
      o.kind === workload.kind &&
      o.name === workload.metadata.name &&
      p.metadata.namespace === workload.metadata.namespace
    );
  });
  const events = findEvents(ctx, {
    kind: String(workload.kind),
    name: workload.metadata.name,
    namespace: workload.metadata.namespace ?? '',
  }).filter((e) => e.reason === 'ScalingReplicaSet' || e.type === 'Warning');
  evidence.push(
    `${workloadName(workload)} ${state.text} (${how})`,
    ...events.slice(0, 1).map((e) => `${workloadName(workload)}: ${describeEvent(e, ctx.now)}`),
    ...(pods.length > 0
      ? [`controller pods: ${pods.map((p) => `${p.metadata.name} ${p.status?.phase ?? '?'}`).join(', ')}`]
      : []),
    counts,
    ...(driverLine ? [driverLine] : []),
  );
  const target = workloadRef(workload);
  return [
    {
      code: 'PVC_PROVISIONER_MISSING',
      severity: 'high',
      message: state.down
        ? `Nothing is provisioning PVC ${pvc.metadata.name}: StorageClass ${cls} names provisioner ${provisioner}, whose controller ${workloadName(workload)} ${state.text}.`
        : `PVC ${pvc.metadata.name} waits for provisioner ${provisioner}: its controller ${workloadName(workload)} ${state.text} but has not acted on the claim in ${formatAge(pendingFor)}.`,
      evidence,
      confidence: state.down ? (controller.weak ? 0.85 : 0.93) : 0.6,
      related: [target, ref('StorageClass', cls), ...consumerRefs],
      remediation: state.down ? ['scale-provisioner', 'install-provisioner'] : ['check-provisioner-logs'],
      ...(state.down ? { owner: target } : {}),
    },
  ];
}

/** The claim waits for an external provisioner that never picks it up. */
function provisionerSilent(
  claim: Claim,
  ctx: AnalyzerContext,
  cls: string,
  provisioner: string,
  waiting: readonly EventSummary[],
  pendingFor: number,
): Emit[] {
  const { pvc, consumerRefs } = claim;
  const waitCount = waiting.reduce((n, e) => n + e.count, 0);
  const evidence = [pvcState(pvc, ctx), describeEvent(waiting[0]!, ctx.now)];
  const counts = `${waitCount} ExternalProvisioning events, 0 Provisioning events from ${provisioner}`;
  const controller = provisionerController(ctx, provisioner);
  const driverLine = csiDriverLine(ctx, provisioner);
  if (controller)
    return controllerNotActing(claim, ctx, cls, provisioner, controller, { evidence, counts, driverLine, pendingFor });
  const pods = provisionerPods(ctx, provisioner);
  const running = pods.filter((p) => p.status?.phase === 'Running');
  const podLine = !canSee(ctx, 'pods')
    ? 'provisioner pods could not be read'
    : running.length === 0
      ? pods.length === 0
        ? `no workload or pod for provisioner ${provisioner} found in what was read`
        : `provisioner pods not running: ${pods.map((p) => `${p.metadata.namespace}/${p.metadata.name} ${p.status?.phase}`).join(', ')}`
      : `provisioner pods running (${running.map((p) => p.metadata.name).join(', ')}) but it never picked the claim up`;
  return [
    {
      code: 'PVC_PROVISIONER_MISSING',
      severity: 'high',
      message: `Nothing is provisioning PVC ${pvc.metadata.name}: StorageClass ${cls} names external provisioner ${provisioner}, which has not acted on the claim in ${formatAge(pendingFor)}.`,
      evidence: [...evidence, counts, podLine, ...(driverLine ? [driverLine] : [])],
      confidence: running.length === 0 ? 0.88 : 0.6,
      related: [ref('StorageClass', cls), ...consumerRefs],
      remediation: ['install-provisioner', 'set-storageclass'],
    },
  ];
}

function analyzeClaim(pvc: KubeObject, ctx: AnalyzerContext): Emit[] {
  const events = findEvents(ctx, { kind: 'PersistentVolumeClaim', name: pvc.metadata.name, namespace: ctx.namespace });
  const recent = (e: EventSummary) => isRecent(ctx.now, e.last);
  const eventLines = events.filter((e) => e.type === 'Warning' || EXPLAINING_REASONS.has(e.reason)).slice(0, 2);
  const base = [pvcState(pvc, ctx), ...eventLines.map((e) => describeEvent(e, ctx.now))];
  const consumers = claimConsumers(ctx, pvc.metadata.name);
  const consumerRefs = consumers.map((p) => ref('Pod', p.metadata.name, p.metadata.namespace));
  const cls = claimClass(pvc);
  const classes = ctx.objects('storageclasses');
  const seeClasses = canSee(ctx, 'storageclasses');
  const claim: Claim = { pvc, base, consumers, consumerRefs, classes, seeClasses };

  // A ProvisioningFailed for a missing class is conclusive even when StorageClasses could not be listed.
  const classMissingEvent = events.find((e) => /storageclass\.storage\.k8s\.io "[^"]+" not found/.test(e.message));

  if (cls === undefined) return noClassNamed(claim, ctx);

  if (cls === '') return staticBinding(pvc, ctx, '', base);

  const sc = classes.find((c) => c.metadata.name === cls);
  if (sc === undefined) return classNotFound(claim, ctx, cls, classMissingEvent);

  const provisioner = String(sc.provisioner ?? '');
  if (provisioner === 'kubernetes.io/no-provisioner') return staticBinding(pvc, ctx, cls, base);

  const waitForConsumer = sc.volumeBindingMode === 'WaitForFirstConsumer';
  const selectedNode = pvc.metadata.annotations?.['volume.kubernetes.io/selected-node'];
  const failed = events.filter((e) => e.reason === 'ProvisioningFailed' && recent(e));
  // A provisioner only tries once a node is chosen: a recent ProvisioningFailed means the wait for a consumer is over.
  if (waitForConsumer && selectedNode === undefined && failed.length === 0)
    return waitingForConsumer(claim, ctx, sc, cls);

  if (failed.length > 0) return provisioningFailed(claim, ctx, cls, provisioner, failed);

  const waiting = events.filter(
    (e) => e.reason === 'ExternalProvisioning' || /waiting for a volume to be created/i.test(e.message),
  );
  const started = events.filter((e) => e.reason === 'Provisioning' && recent(e));
  const pendingFor = isoAge(ctx.now, pvc.metadata.creationTimestamp);
  if (waiting.length > 0 && started.length === 0 && pendingFor >= PROVISIONING_GRACE_MS)
    return provisionerSilent(claim, ctx, cls, provisioner, waiting, pendingFor);

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
        findings.push({
          analyzer: NAME,
          domain: 'storage',
          resource,
          related: [],
          remediation: [],
          ...e,
          evidence: fitEvidence(e.evidence),
        });
      }
    }
    return findings;
  },
};
