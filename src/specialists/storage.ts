import { ClusterReadError, type KubeObject } from '../cluster/types.js';
import { clipLine } from '../limits.js';
import { parseQuantity } from '../triage/kube/index.js';
import { names, onlyCheck, plural, refOf, withCheck } from './objects.js';
import type { AnalyzerResult, SpecialistAnalyzer, SpecialistContext, SpecialistFinding } from './types.js';

/**
 * The storage specialist: the classes and provisioners behind the namespace's claims, the provisioner's and
 * attacher's own logs, VolumeAttachments, the volumes' zones against the nodes', and capacity.
 */

const ZONE = 'topology.kubernetes.io/zone';

async function claims(ctx: SpecialistContext): Promise<KubeObject[]> {
  return ctx.reads.list({ kind: 'persistentvolumeclaims', namespace: ctx.namespace, maxItems: 200 });
}

const classesAndCapacity: SpecialistAnalyzer = {
  id: 'classes-and-capacity',
  domains: ['storage'],
  async run(ctx) {
    const pvcs = await claims(ctx);
    const classes = await ctx.reads.list({ kind: 'storageclasses', maxItems: 100 });
    const pvs = await ctx.reads.list({ kind: 'persistentvolumes', maxItems: 500 });
    const checks: AnalyzerResult['checks'] = [];
    const findings: SpecialistFinding[] = [];
    const defaults = classes.filter(
      (c) => c.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true',
    );
    const classList = classes.map((c) => `${c.metadata.name} (${String(c['provisioner'] ?? '?')})`);
    for (const pvc of pvcs.filter((p) => p.status?.phase === 'Pending')) {
      const wanted = pvc.spec?.storageClassName as string | undefined;
      const request = String(pvc.spec?.resources?.requests?.storage ?? '?');
      const exists = wanted === undefined || classes.some((c) => c.metadata.name === wanted);
      const fitting = pvs.filter(
        (pv) =>
          pv.status?.phase === 'Available' &&
          (pv.spec?.storageClassName ?? '') === (wanted ?? '') &&
          (parseQuantity(pv.spec?.capacity?.storage) ?? 0) >= (parseQuantity(request) ?? Number.POSITIVE_INFINITY),
      );
      checks.push({
        analyzer: this.id,
        what: `classes and volumes that could serve pending claim ${pvc.metadata.name} (${request}, class ${wanted ?? 'default'})`,
        outcome: exists ? 'ruled-out' : 'found',
        detail: exists
          ? `class ${wanted ?? defaults[0]?.metadata.name ?? 'none'} exists; ${plural(fitting.length, 'Available volume')} of that class fit`
          : `class ${wanted} does not exist; the cluster has ${names(classList, 6)}${
              defaults.length > 0 ? `, default ${defaults[0]?.metadata.name}` : ', none of them default'
            }; ${plural(fitting.length, 'Available volume')} name ${wanted}`,
      });
    }
    const bound = pvcs.filter((p) => p.status?.phase === 'Bound');
    const short = bound.filter((p) => {
      const have = parseQuantity(p.status?.capacity?.storage);
      const want = parseQuantity(p.spec?.resources?.requests?.storage);
      return have !== undefined && want !== undefined && have < want;
    });
    checks.push({
      analyzer: this.id,
      what: `capacity of ${plural(bound.length, 'bound claim')}`,
      outcome: short.length > 0 ? 'found' : 'ruled-out',
      detail:
        short.length > 0
          ? `smaller than requested (a resize in progress or failed): ${names(short.map((p) => p.metadata.name))}`
          : 'every bound claim has at least the capacity it requests',
    });
    return { findings, checks };
  },
};

const volumeAttachments: SpecialistAnalyzer = {
  id: 'volume-attachments',
  domains: ['storage'],
  async run(ctx) {
    const volumes = new Set((await claims(ctx)).map((p) => String(p.spec?.volumeName ?? '')).filter(Boolean));
    if (volumes.size === 0) {
      return onlyCheck(this.id, 'VolumeAttachments', 'ruled-out', 'no claim of the namespace is bound to a volume yet');
    }
    const attachments = (await ctx.reads.list({ kind: 'volumeattachments', maxItems: 500 })).filter((va) =>
      volumes.has(String(va.spec?.source?.persistentVolumeName ?? '')),
    );
    const findings: SpecialistFinding[] = [];
    for (const va of attachments) {
      const error = va.status?.attachError?.message ?? va.status?.detachError?.message;
      if (va.status?.attached === true && !error) continue;
      findings.push({
        code: 'VOLUME_ATTACHMENT_FAILED',
        domain: 'storage',
        severity: 'high',
        resource: refOf(va, 'VolumeAttachment'),
        related: [
          { kind: 'PersistentVolume', name: String(va.spec?.source?.persistentVolumeName) },
          { kind: 'Node', name: String(va.spec?.nodeName) },
        ],
        message: `Volume ${va.spec?.source?.persistentVolumeName} is not attached to node ${va.spec?.nodeName}${error ? `: ${clipLine(String(error), 200)}` : ''}`,
        evidence: [
          `VolumeAttachment ${va.metadata.name}: attached=${String(va.status?.attached ?? false)}${error ? `, ${clipLine(String(error), 200)}` : ''}`,
        ],
        confidence: 0.85,
        analyzer: this.id,
        explains: true,
      });
    }
    return withCheck(
      this.id,
      findings,
      `VolumeAttachments of ${plural(volumes.size, 'volume')}`,
      findings.length > 0
        ? `${plural(findings.length, 'attachment')} failing`
        : `${plural(attachments.length, 'attachment')}, all attached without errors`,
    );
  },
};

function zonesOf(pv: KubeObject): string[] {
  const terms = (pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? []) as Array<{
    matchExpressions?: Array<{ key: string; values?: string[] }>;
  }>;
  return terms.flatMap((t) =>
    (t.matchExpressions ?? [])
      .filter((e) => e.key === ZONE || e.key === 'failure-domain.beta.kubernetes.io/zone')
      .flatMap((e) => e.values ?? []),
  );
}

const volumeTopology: SpecialistAnalyzer = {
  id: 'volume-topology',
  domains: ['storage'],
  async run(ctx) {
    const bound = (await claims(ctx)).filter((p) => p.spec?.volumeName);
    const nodes = await ctx.reads.list({ kind: 'nodes', maxItems: 500 });
    const nodeZones = new Set(nodes.map((n) => n.metadata.labels?.[ZONE]).filter((z): z is string => Boolean(z)));
    const findings: SpecialistFinding[] = [];
    let compared = 0;
    for (const pvc of bound.slice(0, 10)) {
      const pv = await ctx.reads
        .get({ kind: 'persistentvolumes', name: String(pvc.spec.volumeName) })
        .catch((error: unknown) => {
          if (error instanceof ClusterReadError && error.reason === 'not-found') return undefined;
          throw error;
        });
      if (!pv) continue;
      const zones = zonesOf(pv);
      if (zones.length === 0) continue;
      compared += 1;
      if (zones.some((z) => nodeZones.has(z))) continue;
      findings.push({
        code: 'VOLUME_ZONE_WITHOUT_NODES',
        domain: 'storage',
        severity: 'high',
        resource: refOf(pv, 'PersistentVolume'),
        related: [refOf(pvc, 'PersistentVolumeClaim')],
        message: `Volume ${pv.metadata.name} of claim ${pvc.metadata.name} lives in ${zones.join(', ')}, where no node is (nodes are in ${names([...nodeZones]) || 'no labelled zone'})`,
        evidence: [`PV ${pv.metadata.name} node affinity ${ZONE} in ${zones.join(', ')}`],
        confidence: 0.85,
        analyzer: this.id,
        explains: true,
      });
    }
    return withCheck(
      this.id,
      findings,
      `zones of ${plural(compared, 'zonal volume')} against the nodes' zones`,
      compared === 0
        ? 'no bound volume of the namespace is pinned to a zone'
        : findings.length > 0
          ? `${plural(findings.length, 'volume')} in a zone without nodes`
          : `every volume's zone has nodes (${names([...nodeZones])})`,
    );
  },
};

/** CSI controllers run their sidecars under these container names. */
const SIDECARS = /^(csi-provisioner|csi-attacher|external-provisioner|provisioner)$/;

const provisionerLogs: SpecialistAnalyzer = {
  id: 'provisioner-logs',
  domains: ['storage'],
  async run(ctx) {
    const pvcs = await claims(ctx);
    const classes = await ctx.reads.list({ kind: 'storageclasses', maxItems: 100 });
    const wanted = new Set(pvcs.map((p) => String(p.spec?.storageClassName ?? '')).filter(Boolean));
    const provisioners = [
      ...new Set(classes.filter((c) => wanted.has(c.metadata.name)).map((c) => String(c['provisioner'] ?? ''))),
    ].filter(Boolean);
    if (provisioners.length === 0) {
      return onlyCheck(
        this.id,
        'provisioner and attacher logs',
        'ruled-out',
        `no existing class of the namespace's claims names a provisioner${wanted.size > 0 ? ` (claims ask for ${names([...wanted])})` : ''}, so no provisioner was asked`,
      );
    }
    const controllers = (await ctx.reads.list({ kind: 'pods', maxItems: 1000 })).filter((pod) =>
      ((pod.spec?.containers ?? []) as Array<{ name: string }>).some((c) => SIDECARS.test(c.name)),
    );
    const findings: SpecialistFinding[] = [];
    const read: string[] = [];
    for (const pod of controllers.slice(0, 3)) {
      for (const c of ((pod.spec?.containers ?? []) as Array<{ name: string }>).filter((x) => SIDECARS.test(x.name))) {
        const text = await ctx.reads.logs({
          namespace: String(pod.metadata.namespace),
          pod: pod.metadata.name,
          container: c.name,
          tailLines: 200,
        });
        read.push(`${pod.metadata.namespace}/${pod.metadata.name}/${c.name}`);
        const lines = text
          .split(/\r?\n/)
          .filter((l) => l.includes(`${ctx.namespace}/`) && /error|fail|denied|quota|timeout/i.test(l));
        const last = lines.at(-1);
        if (!last) continue;
        findings.push({
          code: 'PROVISIONER_REPORTS_ERROR',
          domain: 'storage',
          severity: 'high',
          resource: refOf(pod, 'Pod'),
          related: pvcs.filter((p) => last.includes(p.metadata.name)).map((p) => refOf(p, 'PersistentVolumeClaim')),
          message: `${c.name} in ${pod.metadata.namespace}/${pod.metadata.name} reports for ${ctx.namespace}: ${clipLine(last, 240)}`,
          evidence: lines.slice(-2).map((l) => clipLine(l, 240)),
          confidence: 0.8,
          analyzer: this.id,
          explains: true,
        });
      }
    }
    return {
      findings,
      checks: [
        {
          analyzer: this.id,
          what: `logs of the ${names(provisioners)} provisioner and attacher`,
          outcome: read.length === 0 ? 'not-read' : findings.length > 0 ? 'found' : 'ruled-out',
          detail:
            read.length === 0
              ? 'no CSI controller pod (csi-provisioner, csi-attacher) is visible to calmops'
              : findings.length > 0
                ? `${plural(findings.length, 'sidecar')} logged errors about the namespace`
                : `${names(read)}: no error about ${ctx.namespace}`,
        },
      ],
    };
  },
};

export const STORAGE_ANALYZERS: readonly SpecialistAnalyzer[] = [
  classesAndCapacity,
  volumeAttachments,
  volumeTopology,
  provisionerLogs,
];
