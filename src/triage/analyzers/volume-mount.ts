import type { KubeObject } from '../../cluster/types.js';
import type { Analyzer, AnalyzerContext } from '../analyzer.js';
import type { FindingInput, ResourceRef } from '../findings.js';
import { canSee, describeEvent, type EventSummary, findEvents, isRecent } from './events.js';
import {
  containers,
  crashLog,
  decisiveLogLine,
  groupBy,
  isPodReady,
  namespacePods,
  ownerKey,
  ownerOf,
  podRef,
  ref,
} from './pods.js';

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

export const volumeMountAnalyzer: Analyzer = {
  name: NAME,
  domain: 'storage',
  description:
    'Pods stuck on volumes: missing ConfigMaps/Secrets, attach (Multi-Attach) and mount failures, permission denied.',
  needs: ['pods', 'events', 'configmaps', 'persistentvolumeclaims'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    // Only pods that are not up now: FailedMount events on a running, ready pod are history.
    const stuck = namespacePods(ctx).filter(
      (p) => !isPodReady(p) && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed',
    );
    const candidates = stuck
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
    for (const [, group] of groupBy(candidates, ({ pod }) => ownerKey(ctx, pod))) {
      const { pod, events } = group[0]!;
      const classified = events.map((e) => ({ e, c: classifyMountEvent(e, ctx.namespace) }));
      classified.sort((a, b) => b.c.confidence - a.c.confidence);
      const best = classified[0]!;
      const owner = ownerOf(ctx, pod);
      const evidence = [describeEvent(best.e, ctx.now)];
      const generic = classified.find((x) => x !== best && x.c.code === 'VOLUME_MOUNT_FAILED');
      if (generic) evidence.push(describeEvent(generic.e, ctx.now));
      const waiting = containers(pod).find((c) => c.waitingReason)?.waitingReason;
      evidence.push(
        `pod ${pod.metadata.name} ${pod.status?.phase ?? '?'}${waiting ? ` (${waiting})` : ''}${group.length > 1 ? `; ${group.length} pods affected` : ''}`,
      );
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
      if (best.c.code === 'VOLUME_ATTACH_FAILED') {
        const holder = /used by pod\(s\) (\S+)/.exec(best.e.message)?.[1];
        if (holder) evidence.push(`still held by pod(s) ${holder}`);
      }
      const related: ResourceRef[] = [...(owner ? [owner] : []), ...(best.c.object ? [best.c.object] : [])];
      findings.push({
        code: best.c.code,
        analyzer: NAME,
        domain: 'storage',
        severity: 'high',
        resource: podRef(pod),
        message: `Pod ${pod.metadata.name} cannot start: ${best.c.detail}.`,
        evidence,
        confidence: best.c.confidence,
        related,
        remediation:
          best.c.code === 'VOLUME_CONFIGMAP_MISSING'
            ? ['create-configmap']
            : best.c.code === 'VOLUME_ATTACH_FAILED'
              ? ['release-volume-attachment']
              : best.c.code === 'VOLUME_SECRET_MISSING'
                ? ['create-secret']
                : ['inspect-kubelet-mount'],
      });
    }

    // Permission denied on a mounted path, reported by the application itself.
    const seen = new Set<string>();
    for (const pod of namespacePods(ctx)) {
      for (const c of containers(pod)) {
        if (c.restartCount === 0 && c.waitingReason !== 'CrashLoopBackOff') continue;
        const key = `${ownerKey(ctx, pod)}/${c.name}`;
        if (seen.has(key)) continue;
        const log = crashLog(ctx, pod, c.name);
        const line = log?.split(/\r?\n/).find((l) => /permission denied|operation not permitted/i.test(l));
        if (!line) continue;
        const mounts: { name?: string; mountPath?: string }[] = Array.isArray(c.spec?.volumeMounts)
          ? c.spec.volumeMounts
          : [];
        const mount = mounts.find((m) => m.mountPath && line.includes(m.mountPath));
        if (!mount) continue;
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
      }
    }
    return findings;
  },
};
