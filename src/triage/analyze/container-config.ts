import { conditionOf } from '../../cluster/conditions.js';
import type { KubeObject } from '../../cluster/types.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { containerGroups, worstFirst } from '../kube/container-groups.js';
import { canSee, describeEvent, type EventSummary, findEvents } from '../kube/events.js';
import { EvidenceList, nameList } from '../kube/evidence-list.js';
import { ownerOf } from '../kube/pod-owners.js';
import { type ContainerView, podRef, ref } from '../kube/pods.js';
import { previousReplicaSet, REVISION_ANNOTATION, revisionChanges, rolloutLine } from '../kube/revisions.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

const NAME = 'container-config';

const CONFIG_REASONS = new Set(['CreateContainerConfigError', 'CreateContainerError', 'RunContainerError']);

interface Missing {
  kind: 'ConfigMap' | 'Secret';
  name: string;
  key?: string;
}

/** What the kubelet could not find, from messages like `couldn't find key LOG_LEVEL in ConfigMap billing/app`. */
export function parseConfigError(message: string): Missing | undefined {
  const key = /couldn't find key (\S+) in (ConfigMap|Secret) (?:[^/\s]+\/)?([^\s"]+)/i.exec(message);
  if (key) return { kind: key[2] === 'Secret' ? 'Secret' : 'ConfigMap', name: key[3]!, key: key[1]! };
  const object = /(configmap|secret)s? "([^"]+)" not found/i.exec(message);
  if (object) return { kind: object[1]!.toLowerCase() === 'secret' ? 'Secret' : 'ConfigMap', name: object[2]! };
  return undefined;
}

/** Which env entries of the container point at the missing object or key (names only, never values). */
function referencingEnv(spec: { env?: unknown; envFrom?: unknown } | undefined, missing: Missing): string[] {
  const out: string[] = [];
  const env = Array.isArray(spec?.env) ? spec.env : [];
  const field = missing.kind === 'Secret' ? 'secretKeyRef' : 'configMapKeyRef';
  for (const e of env as { name?: string; valueFrom?: Record<string, { name?: string; key?: string }> }[]) {
    const r = e.valueFrom?.[field];
    if (r?.name === missing.name && (missing.key === undefined || r.key === missing.key)) out.push(`env ${e.name}`);
  }
  const envFrom = Array.isArray(spec?.envFrom) ? spec.envFrom : [];
  const fromField = missing.kind === 'Secret' ? 'secretRef' : 'configMapRef';
  for (const e of envFrom as Record<string, { name?: string }>[]) {
    if (e[fromField]?.name === missing.name) out.push(`envFrom ${missing.kind} ${missing.name}`);
  }
  return out;
}

function configMapLine(ctx: AnalyzerContext, missing: Missing, namespace: string): string | undefined {
  if (missing.kind !== 'ConfigMap' || !canSee(ctx, 'configmaps')) return undefined;
  const cm = ctx
    .objects('configmaps')
    .find((c) => c.metadata.name === missing.name && c.metadata.namespace === namespace);
  if (cm === undefined) return `ConfigMap ${missing.name} does not exist in ${namespace}`;
  const keys = [
    ...Object.keys((cm['data'] as object | undefined) ?? {}),
    ...Object.keys((cm['binaryData'] as object | undefined) ?? {}),
  ].sort();
  const shown = keys.slice(0, 10).join(', ') + (keys.length > 10 ? `, … (${keys.length})` : '');
  return `ConfigMap ${missing.name} has keys: ${shown || 'none'}${missing.key && !keys.includes(missing.key) ? ` (no ${missing.key})` : ''}`;
}

/**
 * The controller that writes a generated ConfigMap or Secret (an ExternalSecret, a SealedSecret, a Vault sync…):
 * such controllers name their target after themselves and record events on their own object saying they wrote it.
 * A key that vanished is then fixed in that object, since an edit to the target itself is overwritten.
 */
function generatorOf(ctx: AnalyzerContext, missing: Missing, namespace: string): EventSummary | undefined {
  const word = missing.kind === 'Secret' ? /secret/i : /config ?map/i;
  return findEvents(ctx, { name: missing.name, namespace }).find(
    (e) => e.involvedKind !== missing.kind && e.involvedKind !== 'Pod' && word.test(e.message),
  );
}

/**
 * Whether the pod's revision is the first to ask for the missing key: the revision before it (when read) runs the
 * same container without a reference to it. Then the Deployment's change, not the ConfigMap, broke the pods.
 */
function referenceIntroduced(
  ctx: AnalyzerContext,
  pod: KubeObject,
  c: ContainerView,
  missing: Missing,
): string | undefined {
  const before = previousReplicaSet(ctx, pod);
  const containers: Array<{ name?: string; env?: unknown; envFrom?: unknown }> = Array.isArray(
    before?.spec?.template?.spec?.containers,
  )
    ? before.spec.template.spec.containers
    : [];
  const earlier = containers.find((x) => x.name === c.name);
  if (before === undefined || earlier === undefined) return undefined;
  if (referencingEnv(c.spec, missing).length === 0 || referencingEnv(earlier, missing).length > 0) return undefined;
  const revision = (rs: KubeObject | undefined) => rs?.metadata.annotations?.[REVISION_ANNOTATION] ?? '?';
  const mine = pod.metadata.ownerReferences?.find((o) => o.kind === 'ReplicaSet')?.name;
  return `key ${missing.key} is asked for first by ReplicaSet ${mine}; the revision before it (ReplicaSet ${before.metadata.name}, revision ${revision(before)}) ran container ${c.name} without it`;
}

export const containerConfigAnalyzer: Analyzer = {
  name: NAME,
  domain: 'compute',
  description: 'Containers that cannot be created: missing ConfigMap/Secret or key (named, never read), bad config.',
  needs: ['pods', 'events', 'configmaps'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    const failing = (c: ContainerView) => c.waitingReason !== undefined && CONFIG_REASONS.has(c.waitingReason);
    for (const unordered of containerGroups(ctx, failing)) {
      const group = worstFirst(unordered);
      const { pod, c } = group[0]!;
      const namespace = pod.metadata.namespace ?? ctx.namespace;
      const events = findEvents(ctx, { kind: 'Pod', name: pod.metadata.name, namespace, reasons: ['Failed'] });
      const message = c.waitingMessage ?? events[0]?.message ?? '';
      const missing = parseConfigError(message);
      const owner = ownerOf(ctx, pod);
      const evidence = new EvidenceList()
        .add(0, `container ${c.name}: ${c.waitingReason}: ${message}`)
        .add(2, events[0] && describeEvent(events[0], ctx.now));
      const related: ResourceRef[] = owner ? [owner] : [];
      let what = message;
      let fix: ResourceRef | undefined;
      const alternatives: Array<{ resource: ResourceRef; change: string }> = [];
      if (missing) {
        const holder = ref(missing.kind, missing.name, namespace);
        related.push(holder);
        const refs = referencingEnv(c.spec, missing);
        if (refs.length > 0) evidence.add(1, `referenced by ${refs.join(', ')}`);
        const line = configMapLine(ctx, missing, namespace);
        evidence.add(1, line);
        what = missing.key
          ? `key ${missing.key} is missing from ${missing.kind} ${missing.name}`
          : `${missing.kind} ${missing.name} does not exist`;
        if (missing.key) {
          // The object exists and the workload asks for a key it lacks: the object is what changed.
          fix = holder;
          const generator = generatorOf(ctx, missing, namespace);
          if (generator) {
            related.push(ref(generator.involvedKind, generator.involvedName, namespace));
            evidence.add(
              1,
              `${missing.kind} ${missing.name} is written by ${generator.involvedKind} ${generator.involvedName}: ${describeEvent(generator, ctx.now)}`,
            );
            what += ` (written by ${generator.involvedKind} ${generator.involvedName})`;
            // What a controller writes is overwritten on its next sync: the controller's object is what to change.
            fix = ref(generator.involvedKind, generator.involvedName, namespace);
          }
        }
        const introduced = missing.key && fix === holder ? referenceIntroduced(ctx, pod, c, missing) : undefined;
        if (introduced && owner) {
          // The ConfigMap never had to hold the key before this revision asked for it: the rollout is what changed.
          evidence.add(1, introduced);
          fix = owner;
          alternatives.push({
            resource: holder,
            change: `add key ${missing.key} to ${missing.kind} ${missing.name}`,
          });
        }
        // A Secret an ExternalSecret produces is changed through the ExternalSecret, whether the key or all is missing.
        const producer =
          missing.kind === 'Secret'
            ? ctx
                .objects('externalsecrets')
                .find(
                  (es) =>
                    (es.metadata.namespace ?? ctx.namespace) === namespace &&
                    ((es.spec?.target?.name as string | undefined) ?? es.metadata.name) === missing.name,
                )
            : undefined;
        // A producer that does not sync has its own finding, which follows it to its store.
        const syncing = producer ? conditionOf(producer, 'Ready')?.status !== 'False' : false;
        if (producer && syncing) {
          fix = ref('ExternalSecret', producer.metadata.name, namespace);
          related.push(fix);
        }
      }
      if (group.length > 1) {
        evidence.add(3, `${group.length} pods affected: ${nameList(group.map((g) => g.pod.metadata.name))}`);
      }
      evidence.add(4, revisionChanges(ctx, pod)).add(5, rolloutLine(ctx, pod));
      findings.push({
        code: 'CONTAINER_CONFIG_ERROR',
        analyzer: NAME,
        domain: 'compute',
        severity: 'high',
        resource: podRef(pod),
        message: `Container ${c.name} of pod ${pod.metadata.name} cannot start (${c.waitingReason}): ${what}.`,
        evidence: evidence.lines(),
        confidence: missing ? 0.95 : 0.75,
        related,
        remediation: missing
          ? [missing.kind === 'Secret' ? 'create-secret-key' : 'create-configmap-key']
          : ['fix-pod-spec'],
        ...(fix ? { owner: fix } : {}),
        ...(alternatives.length > 0 ? { alternatives } : {}),
      });
    }
    return findings;
  },
};
