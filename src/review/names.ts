import type { Finding, ResourceRef } from '../triage/envelope/index.js';
import {
  DETAIL_SLOTS,
  type DetailSlot,
  type NameSlot,
  OBJECT_SLOTS,
  type ObjectSlot,
  PLAN_TEMPLATE_VARS,
  REF_SLOTS,
  type RefSlot,
} from '../triage/templates/index.js';
import { WORKLOAD_KINDS } from './cause-change.js';

/**
 * The names a remediation plan is written with. Findings carry the objects involved (the resource that shows the
 * fault, the owner a person changes, related objects, and the root cause's chain from the entity to change to the
 * symptom); their messages and evidence name a few more things (the container, the missing key, the revision).
 * Templates refer to these as `{{slot}}` (the slots belong to the template format:
 * src/triage/templates/template-slots.ts); a slot the findings do not name is rendered as `<slot>` and gets a read
 * step that looks it up, so a plan never pretends to know a name it does not.
 */

/** The facts a plan's names come from. */
export interface NameFacts {
  namespace: string;
  rootCause: { code: string; resource: ResourceRef; chain?: readonly ResourceRef[] };
  /** The finding behind the root cause, when the envelope still has it. */
  finding?: Pick<Finding, 'resource' | 'owner' | 'related' | 'message' | 'evidence'>;
}

const CLUSTER_SCOPED: ReadonlySet<string> = new Set([
  'Node',
  'PersistentVolume',
  'StorageClass',
  'IngressClass',
  'VolumeAttachment',
  'CSIDriver',
  'Namespace',
]);

/** How a slot looks in a plan when its value is unknown: the rubric looks for these. */
function unknownPlaceholder(slot: NameSlot): string {
  return `<${slot}>`;
}

/** Placeholders that stand for an object name nobody looked up yet (values to choose are not among them). */
export const UNKNOWN_NAME_PLACEHOLDERS: readonly string[] = [
  ...REF_SLOTS.flatMap((s) => [`<${s}-kind>`, `<${s}>`]),
  ...Object.keys(OBJECT_SLOTS).map((s) => `<${s}>`),
  '<container>',
  '<selector>',
];

export interface ResolvedRef {
  kind: string;
  name: string;
  namespace?: string;
}

/** A read that finds a name the findings did not give. */
export interface NameLookup {
  slot: NameSlot;
  /** What to look for, in words (`the ConfigMap the workload reads`). */
  what: string;
  command: string;
  targets: ResolvedRef[];
}

export interface PlanNames {
  namespace: string;
  refs: Partial<Record<RefSlot | ObjectSlot, ResolvedRef>>;
  details: Partial<Record<DetailSlot, string>>;
}

export interface ResolveOptions {
  /** Names the schema guard refused on a previous attempt: treated as unknown, never written again. */
  rejected?: ReadonlySet<string>;
}

function lower(kind: string): string {
  return kind.toLowerCase();
}

function withNamespace(ref: ResourceRef, namespace: string): ResolvedRef {
  return CLUSTER_SCOPED.has(ref.kind)
    ? { kind: ref.kind, name: ref.name }
    : { kind: ref.kind, name: ref.name, namespace: ref.namespace ?? namespace };
}

/** Every object the facts mention, the entity to change first. */
function mentioned(facts: NameFacts): ResourceRef[] {
  const f = facts.finding;
  return [
    facts.rootCause.resource,
    ...(f?.owner ? [f.owner] : []),
    ...(facts.rootCause.chain ?? []),
    ...(f ? [f.resource, ...f.related] : []),
  ];
}

function textsOf(facts: NameFacts): string[] {
  return facts.finding ? [facts.finding.message, ...facts.finding.evidence] : [];
}

function firstMatch(texts: readonly string[], patterns: readonly RegExp[]): string | undefined {
  for (const pattern of patterns) {
    for (const text of texts) {
      const value = pattern.exec(text)?.[1];
      if (value) return value.replace(/[.,;:)]+$/, '');
    }
  }
  return undefined;
}

/** Names of objects the messages spell out when the refs do not carry them. */
const NAMED_IN_TEXT: Partial<Record<ObjectSlot, RegExp[]>> = {
  configmap: [/\bConfigMap ["']?(?:[a-z0-9-]+\/)?([a-z0-9][a-z0-9.-]*)/],
  secret: [/\bSecret ["']?(?:[a-z0-9-]+\/)?([a-z0-9][a-z0-9.-]*)/],
  pvc: [/\bPVC ([a-z0-9][a-z0-9.-]*)/, /\bPersistentVolumeClaim ([a-z0-9][a-z0-9.-]*)/],
  // Quoted, or as the claim's field: "no StorageClass is marked default" names none.
  storageclass: [/\bStorageClass ["']([a-z0-9][a-z0-9.-]*)["']/, /\bstorageClassName ([a-z0-9][a-z0-9.-]*)[,)]/],
  node: [/\bnode ([a-z0-9][a-z0-9.-]*[a-z0-9])\b/],
};

const DETAIL_PATTERNS: Record<DetailSlot, RegExp[]> = {
  container: [
    /^(?:Init )?[Cc]ontainer ([a-z0-9][a-z0-9-]*) of pod /,
    /\bof container ([a-z0-9][a-z0-9-]*) in pod /,
    /^(?:init )?container ([a-z0-9][a-z0-9-]*):/,
  ],
  key: [
    /\bkey ([A-Za-z0-9_.-]+) is missing\b/,
    /couldn't find key ([A-Za-z0-9_.-]+)/,
    /\bConfigMap [a-z0-9.-]+ key ([A-Za-z0-9_.-]+)/,
    /\brequired key ([A-Za-z_][A-Za-z0-9_]*)/,
    /\benvironment variable ([A-Za-z_][A-Za-z0-9_]*)/,
  ],
  selector: [/\bselector ([A-Za-z0-9_./-]+=[A-Za-z0-9_.-]+(?:,[A-Za-z0-9_./-]+=[A-Za-z0-9_.-]+)*)/],
  revision: [/\brevision (\d+) changed from revision \d+/, /\(revision (\d+)\)/],
};

/** Resolves every slot the facts can name; `rejected` names are dropped. */
export function resolvePlanNames(facts: NameFacts, options: ResolveOptions = {}): PlanNames {
  const rejected = options.rejected ?? new Set<string>();
  const usable = (ref: ResourceRef | undefined): ref is ResourceRef =>
    ref !== undefined && ref.name !== '' && !rejected.has(ref.name) && !rejected.has(ref.namespace ?? '');
  const all = mentioned(facts).filter(usable);
  const refs: PlanNames['refs'] = {};
  const f = facts.finding;
  const resource = [f?.resource, facts.rootCause.resource].find(usable);
  if (resource) refs.resource = withNamespace(resource, facts.namespace);
  const owner = [f?.owner, facts.rootCause.resource, f?.resource].find(usable);
  if (owner) refs.owner = withNamespace(owner, facts.namespace);
  // A ReplicaSet is a workload only when nothing above it is named: people edit the Deployment.
  const workload = all.find((r) => WORKLOAD_KINDS.has(r.kind)) ?? all.find((r) => r.kind === 'ReplicaSet');
  if (workload) refs.workload = withNamespace(workload, facts.namespace);
  const texts = textsOf(facts);
  for (const [slot, kind] of Object.entries(OBJECT_SLOTS) as [ObjectSlot, string][]) {
    const ref = all.find((r) => r.kind === kind);
    if (ref) {
      refs[slot] = withNamespace(ref, facts.namespace);
      continue;
    }
    const named = firstMatch(texts, NAMED_IN_TEXT[slot] ?? []);
    if (named && !rejected.has(named)) refs[slot] = withNamespace({ kind, name: named }, facts.namespace);
  }
  const details: PlanNames['details'] = {};
  // The messages name the container of the pod that shows the fault; when the workload to change runs other pods
  // (a neighbour that exhausted the node), that container is not one of its own.
  const pod = f?.resource.kind === 'Pod' ? f.resource : undefined;
  const foreignPod =
    pod !== undefined &&
    refs.workload !== undefined &&
    pod.name !== refs.workload.name &&
    !pod.name.startsWith(`${refs.workload.name}-`);
  for (const slot of DETAIL_SLOTS) {
    if (slot === 'container' && foreignPod) continue;
    const value = firstMatch(texts, DETAIL_PATTERNS[slot]);
    if (value && !rejected.has(value)) details[slot] = value;
  }
  return { namespace: facts.namespace, refs, details };
}

/** The value of `{{var}}`, or undefined when the findings do not name it. */
export function slotValue(names: PlanNames, variable: string): string | undefined {
  if (variable === 'namespace') return names.namespace;
  const [slot, field] = variable.split('.') as [string, string | undefined];
  if ((DETAIL_SLOTS as readonly string[]).includes(slot)) return names.details[slot as DetailSlot];
  const ref = names.refs[slot as RefSlot | ObjectSlot];
  // An object nobody named is looked for in the session's namespace.
  if (field === 'namespace') return ref?.namespace ?? names.namespace;
  if (!ref) return undefined;
  if (field === 'kind') return lower(ref.kind);
  return ref.name;
}

/** The slot a template variable belongs to (`workload.name` → `workload`). */
export function slotOf(variable: string): NameSlot | undefined {
  if (variable === 'namespace') return undefined;
  const slot = variable.split('.')[0] as NameSlot;
  return (PLAN_TEMPLATE_VARS as readonly string[]).some((v) => v === variable) ? slot : undefined;
}

/** What an unknown variable is written as in a plan. */
export function placeholderFor(variable: string): string {
  const [slot, field] = variable.split('.') as [NameSlot, string | undefined];
  return field === 'kind' ? `<${slot}-kind>` : unknownPlaceholder(slot);
}

/** The object a slot names, for a step's targets. */
export function targetOf(names: PlanNames, slot: NameSlot): ResolvedRef | undefined {
  if ((DETAIL_SLOTS as readonly string[]).includes(slot)) return undefined;
  return names.refs[slot as RefSlot | ObjectSlot];
}

/** What an unknown slot is called when the plan asks for it: an object slot by its kind, unless said better here. */
const KIND_WORDS: Record<NameSlot, string> = {
  ...OBJECT_SLOTS,
  resource: 'object that shows the fault',
  owner: 'object to change',
  workload: 'workload (Deployment, StatefulSet, DaemonSet or CronJob)',
  pod: 'failing pod',
  configmap: 'ConfigMap the workload reads',
  secret: 'Secret the workload reads',
  node: 'node',
  container: 'container',
  key: 'missing key or variable',
  selector: 'label selector',
  revision: 'current revision',
};

/** The read that finds an unknown slot, pointed at whatever related object is known. */
export function lookupFor(names: PlanNames, slot: NameSlot): NameLookup {
  const ns = names.namespace;
  const w = names.refs.workload;
  const pod = names.refs.pod ?? (names.refs.resource?.kind === 'Pod' ? names.refs.resource : undefined);
  const wRef = w ? `${lower(w.kind)} ${w.name} -n ${w.namespace ?? ns}` : undefined;
  const podRef = pod ? `pod ${pod.name} -n ${pod.namespace ?? ns}` : undefined;
  const on = (ref: ResolvedRef | undefined): ResolvedRef[] => (ref ? [ref] : []);
  const what = `the ${KIND_WORDS[slot]}`;
  const make = (command: string, targets: ResolvedRef[] = []): NameLookup => ({ slot, what, command, targets });
  switch (slot) {
    case 'workload':
    case 'owner':
      return podRef
        ? make(
            `kubectl get ${podRef} -o jsonpath='{.metadata.ownerReferences[*].kind}/{.metadata.ownerReferences[*].name}'`,
            on(pod),
          )
        : make(`kubectl get deployments,statefulsets,daemonsets,cronjobs -n ${ns}`);
    case 'resource':
    case 'pod':
      return make(`kubectl get pods -n ${ns} -o wide`);
    case 'container':
      return wRef
        ? make(
            `kubectl get ${wRef} -o jsonpath='{${w?.kind === 'CronJob' ? '.spec.jobTemplate' : ''}.spec.template.spec.containers[*].name}'`,
            on(w),
          )
        : podRef
          ? make(`kubectl get ${podRef} -o jsonpath='{.spec.containers[*].name}'`, on(pod))
          : make(`kubectl get pods -n ${ns} -o jsonpath='{.items[*].spec.containers[*].name}'`);
    case 'configmap':
      return wRef
        ? make(
            `kubectl get ${wRef} -o jsonpath='{..configMapRef.name} {..configMapKeyRef.name} {..configMap.name}'`,
            on(w),
          )
        : make(`kubectl get configmaps -n ${ns}`);
    case 'secret':
      return wRef
        ? make(`kubectl get ${wRef} -o jsonpath='{..secretRef.name} {..secretKeyRef.name} {..secretName}'`, on(w))
        : make(`kubectl get secrets -n ${ns}`);
    case 'pv':
      return names.refs.pvc
        ? make(
            `kubectl get pvc ${names.refs.pvc.name} -n ${names.refs.pvc.namespace ?? ns} -o jsonpath='{.spec.volumeName}'`,
            on(names.refs.pvc),
          )
        : make('kubectl get pv');
    case 'node':
      return podRef ? make(`kubectl get ${podRef} -o jsonpath='{.spec.nodeName}'`, on(pod)) : make('kubectl get nodes');
    case 'selector':
      return wRef
        ? make(`kubectl get ${wRef} -o jsonpath='{.spec.selector.matchLabels}'`, on(w))
        : names.refs.service
          ? make(
              `kubectl get service ${names.refs.service.name} -n ${names.refs.service.namespace ?? ns} -o jsonpath='{.spec.selector}'`,
              on(names.refs.service),
            )
          : make(`kubectl get deployments -n ${ns} -o wide`);
    case 'key':
      return podRef ? make(`kubectl describe ${podRef}`, on(pod)) : make(`kubectl get events -n ${ns}`);
    case 'revision':
      return wRef ? make(`kubectl rollout history ${wRef}`, on(w)) : make(`kubectl get replicasets -n ${ns}`);
    case 'pvc':
      return make(`kubectl get pvc -n ${ns}`);
    case 'storageclass':
      return make('kubectl get storageclass');
    case 'service':
      return make(`kubectl get services -n ${ns} -o wide`);
    case 'ingress':
      return make(`kubectl get ingress -n ${ns}`);
    case 'ingressclass':
      return make('kubectl get ingressclass');
    case 'route':
      return make(`oc get routes -n ${ns}`);
    case 'networkpolicy':
      return make(`kubectl get networkpolicy -n ${ns}`);
    case 'hpa':
      return make(`kubectl get hpa -n ${ns}`);
    case 'resourcequota':
      return make(`kubectl get resourcequota -n ${ns}`);
    case 'pdb':
      return make(`kubectl get pdb -n ${ns}`);
    case 'volumeattachment':
      return make('kubectl get volumeattachments -o wide');
  }
}

/** Whether a slot names an object (flagged by the rubric when unknown) rather than a detail. */
export function isNameSlot(slot: NameSlot): boolean {
  return slot !== 'key' && slot !== 'revision';
}
