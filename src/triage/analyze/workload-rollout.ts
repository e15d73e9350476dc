import { conditionOf } from '../../cluster/conditions.js';
import type { KubeObject } from '../../cluster/types.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import {
  type Constraint,
  limitRangeBehind,
  podSecurityBehind,
  sccBindingBehind,
  webhookBehind,
} from '../kube/admission.js';
import { canSee, describeEvent, type EventSummary, findEvents, formatAge, isRecent } from '../kube/events.js';
import { ownerOf } from '../kube/pod-owners.js';
import { inNamespace, ref } from '../kube/pods.js';
import { type LabelSelector, matchesSelector } from '../kube/selectors.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

/**
 * Workloads that cannot create or roll out their pods. These faults leave no failing pod to look at: they show only
 * as events on the controllers (`FailedCreate` on a ReplicaSet, StatefulSet, DaemonSet or Job, refused by a quota,
 * a LimitRange or admission such as PodSecurity or OpenShift's SCCs), as a Deployment that stopped progressing, an
 * autoscaler pinned at its maximum, a Job that gave up, or a disruption budget that blocks a drain.
 */

/** A refusal longer than this loses its end in one evidence line: the end is quoted on a line of its own. */
const TAIL_AFTER = 220;
const TAIL_CHARS = 160;
const NAME = 'workload-rollout';
const CONTROLLERS = ['ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'ReplicationController'];

interface Refusal {
  code: string;
  /**
   * The object a person changes, when the message names it (the ResourceQuota). Otherwise the workload's pod
   * template is what changes: a LimitRange or an admission policy is met by the pods, not edited.
   */
  entity?: ResourceRef;
  what: string;
  remediation: string;
}

/** Read a FailedCreate message the way kube-controller-manager and the admission plugins write it. */
export function classifyFailedCreate(message: string, namespace: string): Refusal | undefined {
  const quota =
    /exceeded quota: ([a-z0-9.-]+)(?:, requested: ([^,]+(?:,[^,]+)*?), used: ([^,]+(?:,[^,]+)*?), limited: (.+))?$/.exec(
      message,
    );
  if (quota) {
    const detail = quota[2] ? ` (requested ${quota[2]}, used ${quota[3]}, limited ${quota[4]})` : '';
    return {
      code: 'WORKLOAD_QUOTA_EXCEEDED',
      entity: ref('ResourceQuota', quota[1] as string, namespace),
      what: `ResourceQuota ${quota[1]} refuses new pods${detail}`,
      remediation: 'raise-quota',
    };
  }
  // The LimitRanger names the bound and the value, never the LimitRange: "maximum cpu usage per Container is 2, but
  // limit is 4", "minimum memory usage per Pod is 64Mi.  No request is specified", "cpu max limit to request ratio
  // per Container is 2, but provided ratio is 4.000000".
  const limitRange =
    /(?:maximum|minimum) \S+ usage per \S+ is [^\s,]+?(?:, but (?:limit|request) is [^\s,\]]+?|\.? +No (?:limit|request) is specified)?(?=\.?(?:[\s,\]]|$))|\S+ max limit to request ratio per \S+ is [^\s,]+, but provided ratio is [^\s,\]]+|LimitRange/.exec(
      message,
    );
  if (limitRange) {
    const detail = limitRange[0] === 'LimitRange' ? '' : `: ${limitRange[0]}`;
    return {
      code: 'WORKLOAD_LIMITRANGE_REJECTED',
      what: `a LimitRange rejects the pods\u2019 resources${detail}`,
      remediation: 'fix-resources',
    };
  }
  const podSecurity = /violates PodSecurity "([^"]+)": (.+)$/.exec(message);
  if (podSecurity) {
    return {
      code: 'WORKLOAD_ADMISSION_DENIED',
      what: `PodSecurity "${podSecurity[1]}" admission refuses the pods: ${podSecurity[2]}`,
      remediation: 'fix-security-context',
    };
  }
  if (/unable to validate against any security context constraint/.test(message)) {
    return {
      code: 'WORKLOAD_ADMISSION_DENIED',
      what: 'no SecurityContextConstraints admits the pods',
      remediation: 'fix-security-context',
    };
  }
  const webhook = /admission webhook "([^"]+)" denied the request: (.+)$/.exec(message);
  if (webhook) {
    return {
      code: 'WORKLOAD_ADMISSION_DENIED',
      what: `admission webhook ${webhook[1]} denies the pods: ${webhook[2]}`,
      remediation: 'fix-admission',
    };
  }
  return undefined;
}

function controllerOwner(ctx: AnalyzerContext, kind: string, name: string): ResourceRef {
  const object = ctx
    .objects(
      kind === 'ReplicaSet'
        ? 'replicasets'
        : kind === 'StatefulSet'
          ? 'statefulsets'
          : kind === 'Job'
            ? 'jobs'
            : 'daemonsets',
    )
    .find((o) => o.metadata.name === name && (o.metadata.namespace ?? ctx.namespace) === ctx.namespace);
  if (object) {
    if (kind === 'StatefulSet' || kind === 'DaemonSet') return ref(kind, name, ctx.namespace);
    const owner = ownerOf(ctx, object);
    if (owner) return owner;
  }
  return ref(kind, name, ctx.namespace);
}

function failedCreates(ctx: AnalyzerContext, findings: FindingInput[]): void {
  const seen = new Set<string>();
  for (const kind of CONTROLLERS) {
    for (const event of findEvents(ctx, { kind, reasons: ['FailedCreate'], namespace: ctx.namespace })) {
      if (!isRecent(ctx.now, event.last)) continue;
      const refusal = classifyFailedCreate(event.message, ctx.namespace);
      const workload = controllerOwner(ctx, kind, event.involvedName);
      const key = `${refusal?.code ?? 'OTHER'}|${workload.kind}/${workload.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      let entity = refusal?.entity;
      // A quota named in the message that is no ResourceQuota of the namespace is OpenShift's ClusterResourceQuota.
      if (
        entity?.kind === 'ResourceQuota' &&
        !inNamespace(ctx, ctx.objects('resourcequotas')).some((q) => q.metadata.name === entity?.name) &&
        ctx.objects('clusterresourcequotas').some((q) => q.metadata.name === entity?.name)
      ) {
        entity = ref('ClusterResourceQuota', entity.name);
      }
      const quota = entity?.kind === 'ResourceQuota' ? quotaLine(ctx, entity.name) : undefined;
      const limits =
        refusal?.code === 'WORKLOAD_LIMITRANGE_REJECTED'
          ? inNamespace(ctx, ctx.objects('limitranges')).map((l) => ref('LimitRange', l.metadata.name, ctx.namespace))
          : [];
      const constraint = constraintBehind(ctx, event.message, refusal?.code, workload);
      findings.push({
        code: refusal?.code ?? 'WORKLOAD_CREATE_FAILED',
        analyzer: NAME,
        domain: 'compute',
        severity: 'high',
        resource: ref(kind, event.involvedName, ctx.namespace),
        owner: constraint?.owner ?? entity ?? workload,
        message: `${workload.kind} ${workload.name} cannot create its pods: ${refusal?.what ?? event.message}.`,
        // A long refusal keeps its head (what refused) and, on a line of its own, its end (why: the last cause).
        evidence: [
          describeEvent(event, ctx.now),
          ...(event.message.length > TAIL_AFTER ? [`… ${event.message.slice(-TAIL_CHARS).trimStart()}`] : []),
          ...(quota ? [quota] : []),
          ...(constraint?.evidence ?? []),
        ],
        confidence: refusal || constraint ? 0.9 : 0.7,
        related: [workload, ...(entity ? [entity] : []), ...limits, ...(constraint?.related ?? [])],
        remediation: refusal ? [refusal.remediation] : [],
        ...(constraint ? { change: constraint.change } : {}),
        ...(constraint && constraint.alternatives.length > 0 ? { alternatives: constraint.alternatives } : {}),
      });
    }
  }
}

/** The object that decides a refusal, followed from what the refusal says. */
function constraintBehind(
  ctx: AnalyzerContext,
  message: string,
  code: string | undefined,
  workload: ResourceRef,
): Constraint | undefined {
  if (code === 'WORKLOAD_LIMITRANGE_REJECTED') return limitRangeBehind(ctx, message, workload);
  const level = /violates PodSecurity "([^"]+)"/.exec(message)?.[1];
  if (level) return podSecurityBehind(ctx, level, workload);
  if (/unable to validate against any security context constraint/.test(message)) {
    const template = ctx
      .objects(
        workload.kind === 'Deployment'
          ? 'deployments'
          : workload.kind === 'StatefulSet'
            ? 'statefulsets'
            : 'daemonsets',
      )
      .find((w) => w.metadata.name === workload.name && (w.metadata.namespace ?? ctx.namespace) === ctx.namespace);
    return sccBindingBehind(ctx, workload, template);
  }
  return webhookBehind(ctx, message);
}

function quotaLine(ctx: AnalyzerContext, name: string): string | undefined {
  const quota = inNamespace(ctx, ctx.objects('resourcequotas')).find((q) => q.metadata.name === name);
  if (!quota) return undefined;
  const hard = (quota.status?.hard ?? quota.spec?.hard ?? {}) as Record<string, string>;
  const used = (quota.status?.used ?? {}) as Record<string, string>;
  const parts = Object.keys(hard)
    .slice(0, 6)
    .map((k) => `${k} ${used[k] ?? '?'}/${hard[k]}`);
  return `ResourceQuota ${name}: ${parts.join(', ')}`;
}

function stuckRollouts(ctx: AnalyzerContext, findings: FindingInput[]): void {
  for (const d of inNamespace(ctx, ctx.objects('deployments'))) {
    const progressing = conditionOf(d, 'Progressing');
    if (progressing?.status !== 'False' || progressing.reason !== 'ProgressDeadlineExceeded') continue;
    findings.push({
      code: 'WORKLOAD_ROLLOUT_STUCK',
      analyzer: NAME,
      domain: 'compute',
      severity: 'medium',
      resource: ref('Deployment', d.metadata.name, ctx.namespace),
      message: `Deployment ${d.metadata.name} stopped progressing: ${(progressing.message ?? 'progress deadline exceeded').replace(/\.+$/, '')}.`,
      evidence: [
        `replicas ${d.spec?.replicas ?? 1}, updated ${d.status?.updatedReplicas ?? 0}, available ${d.status?.availableReplicas ?? 0}, unavailable ${d.status?.unavailableReplicas ?? 0}`,
        `revision ${d.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? '?'}`,
      ],
      confidence: 0.6,
      related: [],
      remediation: ['rollback'],
    });
  }
}

function saturatedAutoscalers(ctx: AnalyzerContext, findings: FindingInput[]): void {
  for (const hpa of inNamespace(ctx, ctx.objects('horizontalpodautoscalers'))) {
    const max = hpa.spec?.maxReplicas;
    const current = hpa.status?.currentReplicas;
    if (typeof max !== 'number' || typeof current !== 'number' || current < max) continue;
    const limited = conditionOf(hpa, 'ScalingLimited');
    const metrics = metricLines(hpa);
    const over = metrics.some((m) => m.over);
    if (limited?.status !== 'True' && !over) continue;
    const target = hpa.spec?.scaleTargetRef as { kind?: string; name?: string } | undefined;
    findings.push({
      code: 'HPA_AT_MAX_REPLICAS',
      analyzer: NAME,
      domain: 'compute',
      severity: over ? 'high' : 'medium',
      resource: ref('HorizontalPodAutoscaler', hpa.metadata.name, ctx.namespace),
      message: `HorizontalPodAutoscaler ${hpa.metadata.name} is pinned at its maximum of ${max} replicas${over ? ' while its metrics stay above target' : ''}: ${target?.kind ?? 'the workload'} ${target?.name ?? ''} cannot scale to the load.`,
      evidence: [
        `currentReplicas ${current}, maxReplicas ${max}, minReplicas ${hpa.spec?.minReplicas ?? 1}`,
        ...metrics.map((m) => m.text),
        ...(limited?.message ? [`ScalingLimited: ${limited.reason ?? ''} ${limited.message}`] : []),
      ],
      confidence: over ? 0.8 : 0.6,
      related: target?.kind && target.name ? [ref(target.kind, target.name, ctx.namespace)] : [],
      remediation: ['raise-max-replicas'],
    });
  }
}

function metricLines(hpa: KubeObject): Array<{ text: string; over: boolean }> {
  const specs = (hpa.spec?.metrics ?? []) as Array<Record<string, { name?: string; target?: Record<string, unknown> }>>;
  const currents = (hpa.status?.currentMetrics ?? []) as Array<
    Record<string, { name?: string; current?: Record<string, unknown> }>
  >;
  const out: Array<{ text: string; over: boolean }> = [];
  for (const spec of specs) {
    const source = spec['resource'] ?? spec['containerResource'];
    if (!source?.name) continue;
    const current = currents.map((c) => c['resource'] ?? c['containerResource']).find((c) => c?.name === source.name);
    const target = Number(source.target?.['averageUtilization']);
    const now = Number(current?.current?.['averageUtilization']);
    if (!Number.isFinite(target) || !Number.isFinite(now)) continue;
    out.push({ text: `${source.name} ${now}% of requests against a target of ${target}%`, over: now > target });
  }
  return out;
}

function failedJobs(ctx: AnalyzerContext, findings: FindingInput[]): void {
  for (const job of inNamespace(ctx, ctx.objects('jobs'))) {
    const failed = conditionOf(job, 'Failed');
    if (failed?.status !== 'True') continue;
    const at = Date.parse(failed.lastTransitionTime ?? '');
    if (!Number.isNaN(at) && ctx.now.getTime() - at > 26 * 3600_000) continue;
    if (newerSuccessfulSibling(ctx, job)) continue;
    const owner = ownerOf(ctx, job);
    // A Job that failed because its pods were refused (a quota, a LimitRange, admission) is changed there.
    const refusedBy = [
      failed.message ?? '',
      ...findEvents(ctx, {
        kind: 'Job',
        name: job.metadata.name,
        reasons: ['FailedCreate'],
        namespace: ctx.namespace,
      }).map((e) => e.message),
    ]
      .map((m) => classifyFailedCreate(m, ctx.namespace))
      .find((r) => r?.entity !== undefined);
    findings.push({
      ...(refusedBy?.entity
        ? {
            owner: refusedBy.entity,
            change: `${refusedBy.what}: raise ${refusedBy.entity.kind} ${refusedBy.entity.name}, or lower what ${owner ? `${owner.kind} ${owner.name}` : `Job ${job.metadata.name}`} asks for`,
          }
        : {}),
      code: 'JOB_FAILED',
      analyzer: NAME,
      domain: 'compute',
      severity: 'medium',
      resource: ref('Job', job.metadata.name, ctx.namespace),
      ...(owner && !refusedBy?.entity ? { owner } : {}),
      message:
        `Job ${job.metadata.name}${owner ? ` of ${owner.kind} ${owner.name}` : ''} failed: ${failed.reason ?? ''} ${failed.message ?? ''}`.trim(),
      evidence: [
        `failed ${job.status?.failed ?? 0}, succeeded ${job.status?.succeeded ?? 0}, backoffLimit ${job.spec?.backoffLimit ?? 6}`,
        ...(Number.isNaN(at) ? [] : [`failed ${formatAge(ctx.now.getTime() - at)} ago`]),
      ],
      confidence: 0.75,
      related: owner && refusedBy?.entity ? [owner] : [],
      remediation: ['rerun-job'],
    });
  }
}

/** A CronJob whose later run succeeded has recovered: its earlier failure is history. */
function newerSuccessfulSibling(ctx: AnalyzerContext, job: KubeObject): boolean {
  const cron = job.metadata.ownerReferences?.find((o) => o.kind === 'CronJob')?.name;
  if (!cron) return false;
  const created = Date.parse(job.metadata.creationTimestamp ?? '');
  return inNamespace(ctx, ctx.objects('jobs')).some(
    (j) =>
      j.metadata.ownerReferences?.some((o) => o.kind === 'CronJob' && o.name === cron) &&
      Date.parse(j.metadata.creationTimestamp ?? '') > created &&
      conditionOf(j, 'Complete')?.status === 'True',
  );
}

function blockedDrains(ctx: AnalyzerContext, findings: FindingInput[]): void {
  // Every event of the namespace is searched, so only once a budget that allows no disruption asks.
  let events: EventSummary[] | undefined;
  for (const pdb of inNamespace(ctx, ctx.objects('poddisruptionbudgets'))) {
    if (pdb.status?.disruptionsAllowed !== 0) continue;
    events ??= findEvents(ctx, { message: /violate the pod's disruption budget|disruption budget/ });
    // A drain blocks on the budget only where its pods run; when they were not read, any cordoned node may be one.
    const guarded = inNamespace(ctx, ctx.objects('pods')).filter((p) =>
      matchesSelector(pdb.spec?.selector as LabelSelector | undefined, p.metadata.labels),
    );
    const hosts = new Set(
      guarded.map((p) => p.spec?.nodeName as string | undefined).filter((n): n is string => typeof n === 'string'),
    );
    const cordoned = ctx
      .objects('nodes')
      .filter((n) => n.spec?.unschedulable === true && (hosts.size === 0 || hosts.has(n.metadata.name)));
    const recent = events.filter((e) => isRecent(ctx.now, e.last));
    if (cordoned.length === 0 && recent.length === 0) continue;
    // The pods a drain of those nodes must evict, and cannot.
    const stuck = guarded
      .filter((p) => cordoned.some((n) => n.metadata.name === p.spec?.nodeName))
      .map((p) => `${p.metadata.name} on ${p.spec?.nodeName}`);
    findings.push({
      code: 'PDB_BLOCKS_DISRUPTION',
      analyzer: NAME,
      domain: 'compute',
      severity: recent.length > 0 ? 'medium' : 'low',
      resource: ref('PodDisruptionBudget', pdb.metadata.name, ctx.namespace),
      message: `PodDisruptionBudget ${pdb.metadata.name} allows no disruption (${pdb.status?.currentHealthy ?? '?'} healthy, ${pdb.status?.desiredHealthy ?? '?'} required)${cordoned.length > 0 ? `, so draining ${cordoned.map((n) => n.metadata.name).join(', ')} cannot evict its pods` : ''}.`,
      evidence: [
        ...(pdb.spec?.minAvailable !== undefined ? [`minAvailable ${pdb.spec.minAvailable}`] : []),
        ...(pdb.spec?.maxUnavailable !== undefined ? [`maxUnavailable ${pdb.spec.maxUnavailable}`] : []),
        ...cordoned.map((n) => `node ${n.metadata.name} is cordoned (SchedulingDisabled)`),
        ...(stuck.length > 0 ? [`pods the drain cannot evict: ${stuck.slice(0, 4).join(', ')}`] : []),
        ...recent.slice(0, 2).map((e) => describeEvent(e, ctx.now)),
      ],
      confidence: 0.7,
      related: cordoned.map((n) => ref('Node', n.metadata.name)),
      remediation: ['adjust-pdb'],
    });
  }
}

export const workloadRolloutAnalyzer: Analyzer = {
  name: NAME,
  domain: 'compute',
  description:
    'Workloads that cannot create or roll out pods: FailedCreate by quota, LimitRange or admission; stuck rollouts; autoscalers at their maximum; failed Jobs; disruption budgets that block drains.',
  needs: [
    'events',
    'deployments',
    'replicasets',
    'jobs',
    'pods',
    'resourcequotas',
    'limitranges',
    'horizontalpodautoscalers',
    'poddisruptionbudgets',
    'nodes',
  ],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    if (canSee(ctx, 'events')) failedCreates(ctx, findings);
    stuckRollouts(ctx, findings);
    saturatedAutoscalers(ctx, findings);
    failedJobs(ctx, findings);
    blockedDrains(ctx, findings);
    return findings;
  },
};
