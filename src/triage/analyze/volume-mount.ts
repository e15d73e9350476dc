import { conditionOf } from '../../cluster/conditions.js';
import type { KubeObject } from '../../cluster/types.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { forEachCrashedContainer, groupBy } from '../kube/container-groups.js';
import { canSee, describeEvent, type EventSummary, findEvents, isRecent } from '../kube/events.js';
import { crashLog, decisiveLogLine } from '../kube/log-verdicts.js';
import { placementBlockers } from '../kube/placement.js';
import { ownerKey, ownerOf } from '../kube/pod-owners.js';
import { containers, isPodReady, namespacePods, podRef, ref } from '../kube/pods.js';
import {
  attachmentsOf,
  describeEventTail,
  elideMiddle,
  fitEvidence,
  nodePluginDaemonSet,
  workloadName,
  workloadRef,
} from '../kube/storage.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

const NAME = 'volume-mount';

interface Classified {
  code: string;
  confidence: number;
  object?: ResourceRef;
  detail: string;
}

export function classifyMountEvent(event: EventSummary, namespace: string): Classified {
  const m = event.message;
  const cm = /configmaps? "([^"]+)" not found/i.exec(m);
  if (cm)
    return {
      code: 'VOLUME_CONFIGMAP_MISSING',
      confidence: 0.95,
      object: ref('ConfigMap', cm[1]!, namespace),
      detail: `ConfigMap ${cm[1]} does not exist`,
    };
  const secret = /secrets? "([^"]+)" not found/i.exec(m);
  if (secret)
    return {
      code: 'VOLUME_SECRET_MISSING',
      confidence: 0.95,
      object: ref('Secret', secret[1]!, namespace),
      detail: `Secret ${secret[1]} does not exist`,
    };
  if (event.reason === 'FailedAttachVolume' || /Multi-Attach error|AttachVolume\.Attach failed/i.test(m)) {
    const pv = /volume "([^"]+)"/.exec(m)?.[1];
    return {
      code: 'VOLUME_ATTACH_FAILED',
      confidence: 0.92,
      ...(pv ? { object: ref('PersistentVolume', pv) } : {}),
      detail: /Multi-Attach/i.test(m)
        ? `volume ${pv ?? ''} is still attached to another node (ReadWriteOnce)`
        : `attach of ${pv ?? 'the volume'} fails`,
    };
  }
  const driver = /driver name (\S+) not found in the list of registered CSI drivers/.exec(m);
  if (driver)
    return {
      code: 'VOLUME_CSI_DRIVER_NOT_REGISTERED',
      confidence: 0.93,
      object: ref('CSIDriver', driver[1]!),
      detail: `CSI driver ${driver[1]} is not registered with the kubelet of its node`,
    };
  if (/permission denied|access denied/i.test(m))
    return { code: 'VOLUME_PERMISSION_DENIED', confidence: 0.8, detail: 'the mount is refused (permission denied)' };
  // "Unable to attach or mount volumes … timed out" only restates that something above failed.
  const generic = /Unable to attach or mount volumes|timed out waiting for the condition/i.test(m);
  return {
    code: 'VOLUME_MOUNT_FAILED',
    confidence: generic ? 0.55 : 0.8,
    detail: 'the kubelet cannot mount the volume',
  };
}

function configMapExists(ctx: AnalyzerContext, name: string, namespace: string): boolean | undefined {
  if (!canSee(ctx, 'configmaps')) return undefined;
  return ctx.objects('configmaps').some((c) => c.metadata.name === name && c.metadata.namespace === namespace);
}

function securityLine(pod: KubeObject, container: { spec?: { securityContext?: { runAsUser?: number } } }): string {
  const psc = pod.spec?.securityContext ?? {};
  const user = container.spec?.securityContext?.runAsUser ?? psc.runAsUser;
  return `runAsUser ${user ?? '(image default)'}, fsGroup ${psc.fsGroup ?? 'unset'}`;
}

/** What the cluster around a failing volume says: who holds it, where, and whom a person must change. */
interface Enrichment {
  evidence: string[];
  related: ResourceRef[];
  owner?: ResourceRef;
  change?: string;
  alternatives?: { resource: ResourceRef; change: string }[];
  detail?: string;
  confidence?: number;
}

function uniqueRefs(refs: readonly ResourceRef[]): ResourceRef[] {
  const seen = new Set<string>();
  return refs.filter((r) => {
    const k = `${r.kind}|${r.namespace ?? ''}|${r.name}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function nodeState(node: KubeObject): string {
  const ready = conditionOf(node, 'Ready');
  const parts = [`Ready=${ready?.status ?? '?'}`];
  if (node.spec?.unschedulable) parts.push('cordoned (unschedulable)');
  return parts.join(', ');
}

/** The name the kubelet reports an attached CSI volume under in node.status.volumesInUse. */
function uniqueVolumeName(pv: KubeObject): string | undefined {
  const csi = pv.spec?.csi;
  return csi?.driver && csi?.volumeHandle ? `kubernetes.io/csi/${csi.driver}^${csi.volumeHandle}` : undefined;
}

/**
 * An attach that fails. Multi-Attach: the VolumeAttachment that still holds the volume on another node, that node's
 * state, and the old pod there. Any other error: the VolumeAttachment's attachError in full, and a PV without
 * nodeAffinity when the error is about zones (the scheduler could not keep the pod where the volume lives).
 */
function attachContext(ctx: AnalyzerContext, pod: KubeObject, event: EventSummary, pvName: string): Enrichment {
  const out: Enrichment = { evidence: [], related: [ref('PersistentVolume', pvName)] };
  const pv = ctx.objects('persistentvolumes').find((v) => v.metadata.name === pvName);
  const podNode: string | undefined = pod.spec?.nodeName;
  const nodes = ctx.objects('nodes');
  const attachments = attachmentsOf(ctx, pvName);
  if (/Multi-Attach error/i.test(event.message)) {
    const held = attachments.find((va) => va.spec?.nodeName !== podNode && va.status?.attached !== false);
    if (held === undefined) return out;
    const heldOn = String(held.spec?.nodeName ?? '');
    const va = held.metadata.name;
    out.owner = ref('VolumeAttachment', va);
    out.related.push(ref('VolumeAttachment', va), ref('Node', heldOn));
    out.evidence.push(
      `VolumeAttachment ${va} still attaches PV ${pvName} to node ${heldOn} (attached=${held.status?.attached ?? '?'}, since ${held.metadata.creationTimestamp ?? '?'})`,
    );
    const node = nodes.find((n) => n.metadata.name === heldOn);
    if (node) {
      const inUse = pv ? uniqueVolumeName(pv) : undefined;
      const reported =
        inUse !== undefined && Array.isArray(node.status?.volumesInUse) && node.status.volumesInUse.includes(inUse);
      out.evidence.push(
        `node ${heldOn}: ${nodeState(node)}${reported ? '; it still reports the volume in status.volumesInUse, so the attach/detach controller will not detach it' : ''}`,
      );
    }
    const claim = pv?.spec?.claimRef?.name;
    const old = ctx
      .objects('pods')
      .filter(
        (p) =>
          p.spec?.nodeName === heldOn &&
          p.metadata.namespace === pod.metadata.namespace &&
          (Array.isArray(p.spec?.volumes) ? p.spec.volumes : []).some(
            (v: { persistentVolumeClaim?: { claimName?: string } }) => v?.persistentVolumeClaim?.claimName === claim,
          ),
      );
    for (const p of old.slice(0, 2)) {
      out.related.push(podRef(p));
      out.evidence.push(
        `old pod ${p.metadata.name} on ${heldOn}: ${p.metadata.deletionTimestamp ? `Terminating since ${p.metadata.deletionTimestamp}, ` : ''}phase ${p.status?.phase ?? '?'}`,
      );
    }
    out.detail = `volume ${pvName} (ReadWriteOnce) is still attached to node ${heldOn} by VolumeAttachment ${va}${old[0] ? `, where old pod ${old[0].metadata.name} still holds it` : ''}`;
    out.confidence = 0.93;
    // The holder is a live replica of the same workload on a Ready node: nothing is stuck, the workload's rollout
    // starts the new pod before the old one lets the volume go. Its update strategy is what to change.
    const workload = ownerOf(ctx, pod);
    const sibling = old.find(
      (p) =>
        !p.metadata.deletionTimestamp &&
        p.status?.phase === 'Running' &&
        workload !== undefined &&
        ownerOf(ctx, p)?.name === workload.name &&
        ownerOf(ctx, p)?.kind === workload.kind,
    );
    const nodeReady = node ? nodeState(node).startsWith('Ready=True') : false;
    if (workload && sibling && nodeReady && (workload.kind === 'Deployment' || workload.kind === 'StatefulSet')) {
      out.owner = workload;
      out.alternatives = [
        {
          resource: ref('VolumeAttachment', va),
          change: `let pod ${sibling.metadata.name} end so the volume detaches`,
        },
      ];
      out.change = `set spec.strategy.type: Recreate on ${workload.kind} ${workload.name} (or maxSurge: 0): its rolling update starts a new pod on another node while pod ${sibling.metadata.name} still has ReadWriteOnce claim ${claim ?? pvName} attached`;
      out.detail = `its ${workload.kind} ${workload.name} rolls out while pod ${sibling.metadata.name} of the previous revision still runs on node ${heldOn} with ReadWriteOnce claim ${claim ?? pvName} (volume ${pvName}) attached there`;
    }
    return out;
  }
  const here = attachments.find((va) => va.spec?.nodeName === podNode) ?? attachments[0];
  const error: string | undefined = here?.status?.attachError?.message;
  if (here) {
    out.related.push(ref('VolumeAttachment', here.metadata.name));
    // The attach event usually repeats the attachError; quote it only when it says more.
    if (error && !event.message.includes(error.slice(-80)))
      out.evidence.push(elideMiddle(`VolumeAttachment ${here.metadata.name} attachError: ${error}`));
  }
  const node = nodes.find((n) => n.metadata.name === podNode);
  if (podNode) out.related.push(ref('Node', podNode));
  const text = `${event.message} ${error ?? ''}`;
  if (pv && /\bzone\b|zonemismatch/i.test(text) && pv.spec?.nodeAffinity === undefined) {
    const zone = node?.metadata.labels?.['topology.kubernetes.io/zone'];
    out.owner = ref('PersistentVolume', pvName);
    out.evidence.push(
      `PV ${pvName} has no nodeAffinity, so nothing kept pod ${pod.metadata.name} in the volume's zone: it was scheduled to ${podNode ?? '?'}${zone ? ` in ${zone}` : ''}`,
    );
    out.detail = `the volume of PV ${pvName} is in another zone than node ${podNode ?? '?'}${zone ? ` (${zone})` : ''}, and the PV has no nodeAffinity to keep the pod next to it`;
    out.confidence = 0.92;
  }
  return out;
}

/**
 * "driver name X not found in the list of registered CSI drivers": the kubelet of the pod's node has no node plugin
 * for X. The DaemonSet that registers X is the thing to fix: say why it has no pod there (an untolerated taint, a
 * nodeSelector) or that its pod there is not running.
 */
function driverContext(ctx: AnalyzerContext, pod: KubeObject, driver: string): Enrichment {
  const nodeName: string | undefined = pod.spec?.nodeName;
  const out: Enrichment = { evidence: [], related: nodeName ? [ref('Node', nodeName)] : [] };
  const ds = nodePluginDaemonSet(ctx, driver);
  if (ds === undefined) {
    if (canSee(ctx, 'daemonsets') && ctx.objects('daemonsets').length > 0)
      out.evidence.push(`no DaemonSet among those read registers ${driver} on nodes`);
    return out;
  }
  const dsRef = workloadRef(ds);
  out.related.unshift(dsRef);
  out.owner = dsRef;
  const st = ds.status ?? {};
  out.evidence.push(
    `${workloadName(ds)} registers ${driver} on nodes: ${st.numberReady ?? '?'} ready of ${st.desiredNumberScheduled ?? '?'} scheduled`,
  );
  const node = ctx.objects('nodes').find((n) => n.metadata.name === nodeName);
  const blockers = node ? placementBlockers(ds.spec?.template?.spec, node, { daemonSet: true }) : [];
  if (blockers.length > 0) {
    out.evidence.push(`${workloadName(ds)} cannot run on node ${nodeName}: it ${blockers.join('; ')}`);
    out.detail = `the ${driver} node plugin (${workloadName(ds)}) has no pod on node ${nodeName}: it ${blockers.join('; ')}`;
    out.confidence = 0.94;
    return out;
  }
  const there = ctx
    .objects('pods')
    .find(
      (p) =>
        p.spec?.nodeName === nodeName &&
        p.metadata.namespace === ds.metadata.namespace &&
        ownerOf(ctx, p)?.name === ds.metadata.name,
    );
  if (there) {
    out.related.push(podRef(there));
    const waiting = containers(there).find((c) => c.waitingReason)?.waitingReason;
    out.evidence.push(
      `node plugin pod ${there.metadata.name} on ${nodeName}: ${there.status?.phase ?? '?'}${waiting ? ` (${waiting})` : ''}`,
    );
    out.detail = `the ${driver} node plugin pod ${there.metadata.name} on node ${nodeName} is not registered (${there.status?.phase ?? '?'}${waiting ? `, ${waiting}` : ''})`;
    out.confidence = 0.88;
    return out;
  }
  out.detail = `the ${driver} node plugin (${workloadName(ds)}) is not registered on node ${nodeName ?? '?'}`;
  out.confidence = 0.8;
  return out;
}

/** Pods that are not up now, with their recent FailedMount and FailedAttachVolume events. */
function stuckOnVolumes(ctx: AnalyzerContext): { pod: KubeObject; events: ReturnType<typeof findEvents> }[] {
  // Only pods that are not up now: FailedMount events on a running, ready pod are history.
  const stuck = namespacePods(ctx).filter(
    (p) => !isPodReady(p) && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed',
  );
  return stuck
    .map((pod) => ({
      pod,
      events: findEvents(ctx, {
        kind: 'Pod',
        name: pod.metadata.name,
        namespace: ctx.namespace,
        reasons: ['FailedMount', 'FailedAttachVolume'],
      }).filter((e) => isRecent(ctx.now, e.last)),
    }))
    .filter((x) => x.events.length > 0);
}

/** Replicas of one owner stuck on a volume, and what the cluster says about the failure. */
function mountFailure(
  ctx: AnalyzerContext,
  group: readonly { pod: KubeObject; events: ReturnType<typeof findEvents> }[],
): FindingInput {
  const { pod, events } = group[0]!;
  const classified = events.map((e) => ({ e, c: classifyMountEvent(e, ctx.namespace) }));
  classified.sort((a, b) => b.c.confidence - a.c.confidence);
  const best = classified[0]!;
  const owner = ownerOf(ctx, pod);
  const evidence = [describeEventTail(best.e, ctx.now)];
  const generic = classified.find((x) => x !== best && x.c.code === 'VOLUME_MOUNT_FAILED');
  const waiting = containers(pod).find((c) => c.waitingReason)?.waitingReason;
  const podLine = `pod ${pod.metadata.name} ${pod.status?.phase ?? '?'}${waiting ? ` (${waiting})` : ''}${pod.spec?.nodeName ? ` on node ${pod.spec.nodeName}` : ''}${group.length > 1 ? `; ${group.length} pods affected` : ''}`;
  if (best.c.code === 'VOLUME_CONFIGMAP_MISSING' && best.c.object) {
    const exists = configMapExists(ctx, best.c.object.name, ctx.namespace);
    if (exists !== undefined)
      evidence.push(
        `ConfigMap ${best.c.object.name} ${exists ? 'exists now (retry pending)' : `not found in ${ctx.namespace}`}`,
      );
    const cms = ctx
      .objects('configmaps')
      .filter((c) => c.metadata.namespace === ctx.namespace && !c.metadata.name.startsWith('kube-root-ca'));
    if (!exists && cms.length > 0)
      evidence.push(
        `ConfigMaps in ${ctx.namespace}: ${cms
          .map((c) => c.metadata.name)
          .slice(0, 8)
          .join(', ')}`,
      );
  }
  let context: Enrichment = { evidence: [], related: [] };
  if (best.c.code === 'VOLUME_ATTACH_FAILED') {
    const holder = /used by pod\(s\) (\S+)/.exec(best.e.message)?.[1];
    if (holder) evidence.push(`still held by pod(s) ${holder}`);
    if (best.c.object) context = attachContext(ctx, pod, best.e, best.c.object.name);
  }
  if (best.c.code === 'VOLUME_CSI_DRIVER_NOT_REGISTERED' && best.c.object)
    context = driverContext(ctx, pod, best.c.object.name);
  // What the cluster says about the failure comes right after the event; the generic "timed out" event last.
  evidence.push(...context.evidence, podLine, ...(generic ? [describeEvent(generic.e, ctx.now)] : []));
  const related: ResourceRef[] = [
    ...(owner ? [owner] : []),
    ...(best.c.object ? [best.c.object] : []),
    ...context.related,
  ];
  return {
    code: best.c.code,
    analyzer: NAME,
    domain: 'storage',
    severity: 'high',
    resource: podRef(pod),
    message: `Pod ${pod.metadata.name} cannot start: ${context.detail ?? best.c.detail}.`,
    evidence: fitEvidence(evidence),
    confidence: context.confidence ?? best.c.confidence,
    related: uniqueRefs(related),
    remediation:
      best.c.code === 'VOLUME_CONFIGMAP_MISSING'
        ? ['create-configmap']
        : best.c.code === 'VOLUME_ATTACH_FAILED'
          ? context.owner?.kind === 'PersistentVolume'
            ? ['fix-pv-node-affinity']
            : ['release-volume-attachment']
          : best.c.code === 'VOLUME_SECRET_MISSING'
            ? ['create-secret']
            : best.c.code === 'VOLUME_CSI_DRIVER_NOT_REGISTERED'
              ? ['fix-csi-node-plugin']
              : ['inspect-kubelet-mount'],
    ...(context.owner ? { owner: context.owner } : {}),
    ...(context.change ? { change: context.change } : {}),
    ...(context.alternatives ? { alternatives: context.alternatives } : {}),
  };
}

/** Permission denied on a mounted path, reported by the application itself. */
function permissionDenied(ctx: AnalyzerContext): FindingInput[] {
  const findings: FindingInput[] = [];
  const seen = new Set<string>();
  forEachCrashedContainer(ctx, (pod, c) => {
    const key = `${ownerKey(ctx, pod)}/${c.name}`;
    if (seen.has(key)) return;
    const log = crashLog(ctx, pod, c.name);
    const line = log?.split(/\r?\n/).find((l) => /permission denied|operation not permitted/i.test(l));
    if (!line) return;
    const mounts: { name?: string; mountPath?: string }[] = Array.isArray(c.spec?.volumeMounts)
      ? c.spec.volumeMounts
      : [];
    const mount = mounts.find((m) => m.mountPath && line.includes(m.mountPath));
    if (!mount) return;
    seen.add(key);
    const volume = (Array.isArray(pod.spec?.volumes) ? pod.spec.volumes : []).find(
      (v: { name?: string }) => v.name === mount.name,
    );
    const claim: string | undefined = volume?.persistentVolumeClaim?.claimName;
    const owner = ownerOf(ctx, pod);
    findings.push({
      code: 'VOLUME_PERMISSION_DENIED',
      analyzer: NAME,
      domain: 'storage',
      severity: 'high',
      resource: podRef(pod),
      message: `Container ${c.name} of pod ${pod.metadata.name} cannot write to its volume at ${mount.mountPath}: permission denied (the volume's owner does not match the container user).`,
      evidence: [
        `log: ${decisiveLogLine(line)?.line ?? line.trim()}`,
        `volume ${mount.name} mounted at ${mount.mountPath}${claim ? ` (PVC ${claim})` : ''}`,
        securityLine(pod, c),
        `container ${c.name}: ${c.waitingReason ?? 'restarting'}, ${c.restartCount} restarts`,
      ],
      confidence: 0.88,
      related: [...(owner ? [owner] : []), ...(claim ? [ref('PersistentVolumeClaim', claim, ctx.namespace)] : [])],
      remediation: ['set-fsgroup'],
    });
  });
  return findings;
}

export const volumeMountAnalyzer: Analyzer = {
  name: NAME,
  domain: 'storage',
  description:
    'Pods stuck on volumes: missing ConfigMaps/Secrets, attach (Multi-Attach) and mount failures, permission denied.',
  needs: ['pods', 'events', 'configmaps', 'persistentvolumeclaims'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    const candidates = stuckOnVolumes(ctx);
    for (const [, group] of groupBy(candidates, ({ pod }) => ownerKey(ctx, pod)))
      findings.push(mountFailure(ctx, group));
    findings.push(...permissionDenied(ctx));
    return findings;
  },
};
