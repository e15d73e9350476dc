import { clipLine, isKubeName } from '../limits.js';
import type { ResourceRef } from '../triage/envelope/index.js';
import type { TriageTemplate } from '../triage/templates/index.js';
import { type NameSlot, OBJECT_SLOTS } from '../triage/templates/index.js';
import {
  changeAsSaid,
  kindWords,
  namesAsOtherKind,
  namesObject,
  validRollback,
  WORKLOAD_KINDS,
} from './cause-change.js';
import {
  isNameSlot,
  lookupFor,
  type NameFacts,
  type PlanNames,
  placeholderFor,
  type ResolvedRef,
  resolvePlanNames,
  slotOf,
  slotValue,
  targetOf,
} from './names.js';
import { PLAN_VERSION, type PlanAlternative, type PlanStep, type PlanTarget, rejectedNames } from './plan.js';
import { idFromCommand, kebab, StepIds } from './step-id.js';

export type RemediationEntry = TriageTemplate['remediation'][number];

export interface PlanSynthesisInput {
  sessionId: string;
  namespace: string;
  intent: string;
  /** Who the plan is attributed to; reviewers of a mutating plan must be someone else. */
  author: string;
  rootCause: {
    code: string;
    summary: string;
    /** The entity to change. */
    resource: ResourceRef;
    chain?: readonly ResourceRef[];
    /** What to change in `resource`, in the envelope's words. */
    change?: string;
    /** What fails because of the cause: the fix is verified there. */
    impact?: readonly { resource: ResourceRef; code: string }[];
    /** Other places the envelope says the fault can be fixed; fixes there are the plan's alternatives. */
    alternatives?: readonly { resource: ResourceRef; change: string }[];
  };
  /** The finding behind the root cause: its resource, owner, related objects, message and evidence name things. */
  finding?: NameFacts['finding'];
  /** Finding codes seen in the session, most important first; used when the root cause has no remediation. */
  findingCodes: readonly string[];
  /** Remediation knowledge, the session intent's template first, then the other templates'. */
  remediation: readonly RemediationEntry[];
  /** Other ranked causes; those on the same entity to change offer alternative fixes. */
  otherCauses?: readonly { code: string; resource: ResourceRef }[];
  /** The schema guard's errors on a regeneration. */
  feedback?: readonly string[];
}

/**
 * Produces a candidate plan. The output is `unknown` on purpose: whatever a synthesizer returns, deterministic or
 * model-backed, goes through the schema guard before anyone reviews it.
 */
export interface PlanSynthesizer {
  readonly name: string;
  synthesize(input: PlanSynthesisInput): Promise<unknown>;
}

const DANGEROUS = /\b(delete|drain|cordon|taint|exec)\b|--force\b|--grace-period=0\b/;
const VARIABLE = /\{\{\s*([\w.]+)\s*\}\}/g;
const MAX_ALTERNATIVES = 2;

/** A template text with its variables filled in, and the slots it used and could not fill. */
interface Rendered {
  text: string;
  used: NameSlot[];
  missing: NameSlot[];
}

function renderWithNames(text: string, names: PlanNames): Rendered {
  const used = new Set<NameSlot>();
  const missing = new Set<NameSlot>();
  const out = text.replace(VARIABLE, (match, variable: string) => {
    const slot = slotOf(variable);
    const value = slotValue(names, variable);
    if (slot && !variable.endsWith('.namespace')) (value === undefined ? missing : used).add(slot);
    if (value !== undefined) return value;
    return slot ? placeholderFor(variable) : match;
  });
  return { text: out, used: [...used], missing: [...missing] };
}

function toTarget(ref: ResolvedRef): PlanTarget {
  return { kind: ref.kind, name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) };
}

function targetsOf(names: PlanNames, slots: readonly NameSlot[], text: string): PlanTarget[] {
  const out: PlanTarget[] = [];
  for (const slot of slots) {
    const ref = targetOf(names, slot);
    if (!ref || !text.includes(ref.name)) continue;
    if (out.some((t) => t.kind === ref.kind && t.name === ref.name)) continue;
    out.push(toTarget(ref));
  }
  return out.slice(0, 10);
}

function safetyOf(mode: 'read' | 'write', command: string): PlanStep['safety'] {
  if (mode === 'read') return 'SAFE';
  return DANGEROUS.test(command) ? 'DANGEROUS' : 'REQUIRES_APPROVAL';
}

/** A read that shows a fix took: a template over the plan's names, or literal with the objects it names. */
interface Check {
  command: string;
  description: string;
  targets?: PlanTarget[];
}

/** The read that shows a workload or Service that suffered runs (or serves) again. */
function recoveryCheck(ref: ResourceRef): Check | undefined {
  const ns = ref.namespace ? ` -n ${ref.namespace}` : '';
  const target = { kind: ref.kind, name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) };
  if (['Deployment', 'StatefulSet', 'DaemonSet'].includes(ref.kind)) {
    return {
      command: `kubectl rollout status ${ref.kind.toLowerCase()}/${ref.name}${ns} --timeout=5m`,
      description: `Wait until every pod of ${ref.kind} ${ref.name} runs and is ready.`,
      targets: [target],
    };
  }
  if (ref.kind === 'CronJob' || ref.kind === 'Job') {
    return {
      command: `kubectl get jobs${ns} --sort-by=.metadata.creationTimestamp`,
      description: `Check that the newest job of ${ref.kind} ${ref.name} completes.`,
    };
  }
  if (ref.kind === 'Service') {
    return {
      command: `kubectl get endpoints ${ref.name}${ns}`,
      description: `Check that Service ${ref.name} lists ready endpoints.`,
      targets: [target],
    };
  }
  if (ref.kind === 'PersistentVolumeClaim') {
    return {
      command: `kubectl get pvc ${ref.name}${ns} -o jsonpath='{.status.phase}'`,
      description: `Check that PersistentVolumeClaim ${ref.name} is Bound.`,
      targets: [target],
    };
  }
  return undefined;
}

/**
 * Reads that show the fix took: the changed object's own state, then the workloads and Services the cause made
 * fail running again (the casualties a changed LimitRange, CronJob or NetworkPolicy left), then the workload the
 * findings name; the last one sends the reader to "Mark resolved".
 */
function verificationChecks(
  names: PlanNames,
  changed: ResolvedRef | undefined,
  impact: readonly { resource: ResourceRef; code: string }[],
): Check[] {
  const out: Check[] = [];
  const kind = changed?.kind;
  const object: Record<string, Check> = {
    PersistentVolumeClaim: {
      command: "kubectl get pvc {{pvc}} -n {{namespace}} -o jsonpath='{.status.phase}'",
      description: 'Check that PersistentVolumeClaim {{pvc}} is Bound.',
    },
    Node: { command: 'kubectl get node {{node}}', description: 'Check that node {{node}} reports Ready.' },
    Service: {
      command: 'kubectl get endpoints {{service}} -n {{namespace}}',
      description: 'Check that Service {{service}} lists ready endpoints.',
    },
    Ingress: {
      command: 'kubectl get ingress {{ingress}} -n {{namespace}}',
      description: 'Check that Ingress {{ingress}} has an address.',
    },
    Route: {
      command: 'oc get route {{route}} -n {{namespace}}',
      description: 'Check that Route {{route}} is admitted and serves again.',
    },
    HorizontalPodAutoscaler: {
      command: 'kubectl get hpa {{hpa}} -n {{namespace}}',
      description: 'Check that HorizontalPodAutoscaler {{hpa}} is below its new maximum.',
    },
    ResourceQuota: {
      command: 'kubectl describe resourcequota {{resourcequota}} -n {{namespace}}',
      description: 'Check that ResourceQuota {{resourcequota}} leaves room for the pods.',
    },
    PodDisruptionBudget: {
      command: 'kubectl get pdb {{pdb}} -n {{namespace}}',
      description: 'Check that PodDisruptionBudget {{pdb}} allows a disruption.',
    },
    StorageClass: {
      command: "kubectl get pvc {{pvc}} -n {{namespace}} -o jsonpath='{.status.phase}'",
      description: 'Check that PersistentVolumeClaim {{pvc}} is Bound.',
    },
    PersistentVolume: {
      command: "kubectl get pvc {{pvc}} -n {{namespace}} -o jsonpath='{.status.phase}'",
      description: 'Check that PersistentVolumeClaim {{pvc}} is Bound.',
    },
  };
  const own = kind ? object[kind] : undefined;
  if (own && (kind === 'StorageClass' || kind === 'PersistentVolume' ? names.refs.pvc : true)) out.push(own);
  const workload = names.refs.workload;
  const changedWorkload = changed && WORKLOAD_KINDS.has(changed.kind) ? changed : undefined;
  const suffering = [
    ...(changedWorkload ? [changedWorkload] : []),
    ...impact.filter((i) => WORKLOAD_KINDS.has(i.resource.kind)).map((i) => i.resource),
    ...impact.filter((i) => !WORKLOAD_KINDS.has(i.resource.kind)).map((i) => i.resource),
    ...(workload ? [workload] : []),
  ];
  for (const ref of suffering) {
    const check = recoveryCheck(ref);
    if (check && !out.some((c) => c.command === check.command)) out.push(check);
  }
  if (!out.some((c) => /rollout status|get (pvc|endpoints|node)|get pods/.test(c.command))) {
    out.push({
      command: 'kubectl get pods -n {{namespace}} -o wide',
      description: 'Check that the pods of {{namespace}} run and are ready.',
    });
  }
  return out.slice(0, 2);
}

/** A step as a template writes it, before the names are filled in. */
interface StepTemplate {
  command: string;
  description: string;
  mode: 'read' | 'write';
  rollback?: string;
  saves?: string[];
  /** Objects a literal command names (the template's `{{…}}` slots give their own). */
  targets?: PlanTarget[];
}

/** A template's steps; a change with nothing read before it first records the state of what it changes. */
function entrySteps(entry: RemediationEntry | undefined, input: PlanSynthesisInput, names: PlanNames): StepTemplate[] {
  const changed = names.refs.owner;
  if (!entry) {
    return [
      {
        command: 'kubectl describe {{owner.kind}} {{owner.name}} -n {{owner.namespace}}',
        description: `Read the state and events of {{owner.kind}} {{owner.name}}: no known remediation for ${input.rootCause.code}.`,
        mode: 'read',
      },
      {
        command: 'kubectl get events -n {{namespace}} --field-selector involvedObject.name={{resource.name}}',
        description: 'Read the recent events of {{resource.kind}} {{resource.name}}, then escalate to the owning team.',
        mode: 'read',
      },
    ];
  }
  const templates: StepTemplate[] = entry.steps.map((s) => ({ ...s }));
  // Never a Secret's data.
  if (entry.steps.some((s) => s.mode === 'write') && entry.steps[0]?.mode === 'write' && changed) {
    const scope = changed.namespace ? ' -n {{owner.namespace}}' : '';
    templates.unshift({
      command:
        changed.kind === 'Secret'
          ? `kubectl describe secret {{owner.name}}${scope}`
          : `kubectl get {{owner.kind}} {{owner.name}}${scope} -o yaml`,
      description: 'Record the current state of {{owner.kind}} {{owner.name}} before changing anything.',
      mode: 'read',
    });
  }
  return templates;
}

/** The steps of one fix: lookups for what the findings do not name, the template's steps, then verification. */
/** The templates' steps with the plan's names filled in, and what each leaves missing. */
function renderTemplates(templates: readonly StepTemplate[], names: PlanNames) {
  return templates.map((t) => ({
    mode: t.mode,
    command: renderWithNames(t.command, names),
    description: renderWithNames(t.description, names),
    rollback: t.rollback === undefined ? undefined : renderWithNames(t.rollback, names),
    saves: (t.saves ?? []).map((file) => renderWithNames(file, names).text),
    targets: t.targets ?? [],
  }));
}

type RenderedStep = ReturnType<typeof renderTemplates>[number];

/** Reads that save an object before a change whose rollback applies it again, put ahead of the steps. */
function saveBeforeRollbacks(rendered: RenderedStep[]): void {
  // `rollout undo` restores only a Deployment's, DaemonSet's or StatefulSet's pod template: a change to a CronJob,
  // Job or any other object is undone by applying it as a read saved it before the change.
  const savesFirst: RenderedStep[] = [];
  for (const [index, r] of rendered.entries()) {
    const fix = r.rollback ? validRollback(r.rollback.text) : undefined;
    if (!r.rollback || !fix) continue;
    r.rollback = { ...r.rollback, text: fix.rollback };
    const before = [...savesFirst, ...rendered.slice(0, index)];
    if (before.some((b) => b.saves.includes(fix.save.file))) continue;
    const same = before.find((b) => b.mode === 'read' && b.command.text === fix.save.command);
    if (same) {
      same.saves.push(fix.save.file);
      continue;
    }
    savesFirst.push({
      mode: 'read',
      command: { text: fix.save.command, used: [], missing: [] },
      description: {
        text: `Save ${fix.save.kind} ${fix.save.name} as ${fix.save.file}; the rollback applies it again.`,
        used: [],
        missing: [],
      },
      rollback: undefined,
      saves: [fix.save.file],
      targets: [],
    });
  }
  rendered.unshift(...savesFirst);
}

/** The rendered steps in order, each waiting for the lookups it uses, the reads before it and the change before it. */
function addTemplateSteps(
  rendered: readonly RenderedStep[],
  names: PlanNames,
  ids: StepIds,
  steps: PlanStep[],
  lookupsFor: (slots: readonly NameSlot[]) => string[],
): void {
  const reads: string[] = [];
  let previousWrite: string | undefined;
  for (const r of rendered) {
    const missing = [...new Set([...r.command.missing, ...(r.rollback?.missing ?? [])])];
    // A missing detail in a read is looked up only when a change depends on it.
    const lookups = lookupsFor(missing.filter((slot) => r.mode === 'write' || isNameSlot(slot)));
    const used = [...new Set([...r.command.used, ...(r.rollback?.used ?? [])])];
    const text = `${r.command.text}\n${r.rollback?.text ?? ''}`;
    const targets = [...r.targets, ...targetsOf(names, used, text)].filter(
      (t, i, all) => all.findIndex((o) => o.kind === t.kind && o.name === t.name) === i,
    );
    const id = ids.take(idFromCommand(r.command.text));
    steps.push({
      id,
      description: r.description.text,
      command: r.command.text,
      mode: r.mode,
      safety: safetyOf(r.mode, r.command.text),
      ...(r.rollback ? { rollback: r.rollback.text } : {}),
      // A change waits for the reads before it (they record what the rollback restores and save the files it
      // applies), the lookups it uses, and the change before it: a fix's changes build on one another in order.
      needs: [
        ...new Set([
          ...lookups,
          ...(r.mode === 'write' ? reads : []),
          ...(r.mode === 'write' && previousWrite ? [previousWrite] : []),
        ]),
      ],
      ...(targets.length > 0 ? { targets } : {}),
      ...(r.saves.length > 0 ? { saves: r.saves } : {}),
    });
    if (r.mode === 'read') reads.push(id);
    else previousWrite = id;
  }
}

/** Reads that check the change took, after the last change; the last one asks to mark the incident resolved. */
function addVerificationSteps(
  steps: PlanStep[],
  ids: StepIds,
  input: PlanSynthesisInput,
  names: PlanNames,
  changed: ResolvedRef | undefined,
): void {
  const lastWrite = [...steps].reverse().find((s) => s.mode === 'write');
  const checks = verificationChecks(names, changed, input.rootCause.impact ?? []);
  checks.forEach((check, index) => {
    const command = renderWithNames(check.command, names);
    if (command.missing.length > 0 || steps.some((s) => s.command === command.text)) return;
    const last = index === checks.length - 1;
    const description = `${renderWithNames(check.description, names).text}${
      last ? ' Then press "Mark resolved": calmops re-runs the triage to validate the fix.' : ''
    }`;
    const targets = check.targets ?? targetsOf(names, command.used, command.text);
    steps.push({
      id: ids.take(`verify-${idFromCommand(command.text).replace(/^(get|rollout-status|describe)-/, '')}`),
      description,
      command: command.text,
      mode: 'read',
      safety: 'SAFE',
      needs: lastWrite ? [lastWrite.id] : [],
      ...(targets.length > 0 ? { targets } : {}),
    });
  });
}

function buildSteps(
  templates: readonly StepTemplate[],
  input: PlanSynthesisInput,
  names: PlanNames,
  changed: ResolvedRef | undefined,
): PlanStep[] {
  const rendered = renderTemplates(templates, names);
  saveBeforeRollbacks(rendered);
  const ids = new StepIds();
  const steps: PlanStep[] = [];
  const lookupIds = new Map<NameSlot, string>();
  const lookupsFor = (slots: readonly NameSlot[]): string[] => {
    const needed: string[] = [];
    for (const slot of slots) {
      let id = lookupIds.get(slot);
      if (!id) {
        const lookup = lookupFor(names, slot);
        // The template may already read what the lookup would (`rollout history` before an undo).
        const same = steps.find((s) => s.command === lookup.command);
        if (same) {
          lookupIds.set(slot, same.id);
          needed.push(same.id);
          continue;
        }
        id = ids.take(`find-${slot}`);
        lookupIds.set(slot, id);
        steps.push({
          id,
          description: `Look up ${lookup.what}: the findings do not name it, and later steps need it.`,
          command: lookup.command,
          mode: 'read',
          safety: 'SAFE',
          needs: [],
          ...(lookup.targets.length > 0 ? { targets: lookup.targets.map(toTarget) } : {}),
        });
      }
      needed.push(id);
    }
    return needed;
  };
  addTemplateSteps(rendered, names, ids, steps, lookupsFor);
  addVerificationSteps(steps, ids, input, names, changed);
  return steps;
}

/** Object names an entry needs that the findings do not give, and whether it changes the root cause's entity. */
function entryFit(entry: RemediationEntry, names: PlanNames): { unknown: number; changesRoot: boolean } {
  const missing = new Set<NameSlot>();
  let changesRoot = false;
  const root = names.refs.owner?.name;
  for (const step of entry.steps) {
    for (const text of [step.command, step.rollback ?? '']) {
      const rendered = renderWithNames(text, names);
      for (const slot of rendered.missing) if (isNameSlot(slot)) missing.add(slot);
      if (step.mode === 'write' && root && text === step.command && rendered.text.includes(root)) changesRoot = true;
    }
  }
  return { unknown: missing.size, changesRoot };
}

/** Whether a fix deletes, drains or forces something: it comes after a fix that does not. */
function isDestructive(entry: RemediationEntry): boolean {
  return entry.steps.some((s) => s.mode === 'write' && DANGEROUS.test(s.command));
}

/**
 * Of several fixes for one fault, the least destructive leads (a delete is an alternative to a fix that creates or
 * edits), then the one the findings name completely, then the one that changes the entity the root cause names;
 * ties keep the template's order.
 */
function mostCompleteEntry(entries: readonly RemediationEntry[], names: PlanNames): RemediationEntry | undefined {
  let best: RemediationEntry | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  for (const entry of entries) {
    const { unknown, changesRoot } = entryFit(entry, names);
    const score = (isDestructive(entry) ? 100 : 0) + unknown * 2 + (changesRoot ? 0 : 1);
    if (score < bestScore) {
      best = entry;
      bestScore = score;
    }
  }
  return best;
}

/** Whether a fix's changes name an object the findings do not: one found only by a lookup. */
function changesUnnamed(entry: RemediationEntry, names: PlanNames): boolean {
  return entry.steps.some(
    (s) => s.mode === 'write' && renderWithNames(s.command, names).missing.some((slot) => isNameSlot(slot)),
  );
}

function withNamespaceOf(ref: ResourceRef): ResolvedRef {
  return { kind: ref.kind, name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) };
}

function sameRef(a: ResourceRef, b: ResourceRef): boolean {
  return a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');
}

/** Kinds a command's words may name: the template slots', the workloads', and every kind the cause mentions. */
function knownKinds(input: PlanSynthesisInput): string[] {
  const cause = input.rootCause;
  return [
    ...Object.values(OBJECT_SLOTS),
    ...WORKLOAD_KINDS,
    'Namespace',
    'ReplicaSet',
    'ServiceAccount',
    'RoleBinding',
    'ClusterRoleBinding',
    'LimitRange',
    cause.resource.kind,
    ...(cause.chain ?? []).map((r) => r.kind),
    ...(cause.impact ?? []).map((i) => i.resource.kind),
    ...(cause.alternatives ?? []).map((a) => a.resource.kind),
  ];
}

/** The rendered commands of a fix's changes. */
function writeCommands(entry: RemediationEntry, names: PlanNames): string[] {
  return entry.steps.filter((s) => s.mode === 'write').map((s) => renderWithNames(s.command, names).text);
}

/**
 * Where a template's fix lands for this cause: whether it changes the entity to change, only something that
 * suffers from it or lies between (a casualty, the Secret an ExternalSecret writes), or the entity as an object of
 * another kind (a Namespace fix for a RoleBinding cause), which makes it no fix for this cause at all.
 */
function fixPlace(
  entry: RemediationEntry,
  names: PlanNames,
  input: PlanSynthesisInput,
  kinds: readonly string[],
): 'root' | 'downstream' | 'elsewhere' | 'wrong-kind' | 'none' {
  const root = input.rootCause.resource;
  const writes = writeCommands(entry, names);
  if (writes.length === 0) return 'none';
  const between = [
    ...(input.rootCause.chain ?? []),
    ...(input.rootCause.impact ?? []).map((i) => i.resource),
    ...(input.rootCause.alternatives ?? []).map((a) => a.resource),
  ].filter((r) => !sameRef(r, root));
  if (writes.some((c) => namesObject(c, root, kinds))) return 'root';
  // The Secret an ExternalSecret of the same name writes is downstream of it, not a misreading of it.
  if (writes.some((c) => between.some((r) => namesObject(c, r, kinds)))) return 'downstream';
  if (writes.some((c) => namesAsOtherKind(c, root.name, root.kind, kinds))) return 'wrong-kind';
  return 'elsewhere';
}

/**
 * Whether the entity to change is a workload whose fault shows on another workload (a CronJob without a memory
 * limit whose neighbour the node's OOM killer chose): the template fixes for that fault are written for the
 * workload that shows it, so only the envelope's `change` says what to do.
 */
function faultShowsElsewhere(input: PlanSynthesisInput): boolean {
  const root = input.rootCause.resource;
  return (
    WORKLOAD_KINDS.has(root.kind) &&
    (input.rootCause.impact ?? []).some(
      (i) => WORKLOAD_KINDS.has(i.resource.kind) && !sameRef(i.resource, root) && i.code === input.rootCause.code,
    )
  );
}

/** Whether a read prints the whole object (`kubectl get pvc data -n ns -o yaml`), as the save step does. */
function recordsObject(command: string, ref: ResourceRef): boolean {
  return kindWords(ref.kind).some(
    (word) => command === `kubectl get ${word} ${ref.name}${ref.namespace ? ` -n ${ref.namespace}` : ''} -o yaml`,
  );
}

/** The envelope's words for a step description: one line, bounded. */
function oneLine(text: string): string {
  return clipLine(text, 300);
}

/** The envelope's words as a plan's summary. */
function sentence(text: string): string {
  const line = oneLine(text);
  return line.charAt(0).toUpperCase() + line.slice(1);
}

/**
 * Whether the plan changes the entity as the envelope says rather than by a template fix: the template fix changes
 * only what suffers or lies in between, the entity is a workload whose fault shows on another one (the fixes of
 * that fault were written for the one that shows it), or the entity is of a kind no template names.
 */
function changedAsSaid(
  input: PlanSynthesisInput,
  names: PlanNames,
  entry: RemediationEntry | undefined,
  place: ReturnType<typeof fixPlace>,
  rejected: ReadonlySet<string>,
): boolean {
  const root = input.rootCause.resource;
  if (input.rootCause.change === undefined || root.kind === 'Secret') return false;
  if (!isKubeName(root.name) || rejected.has(root.name)) return false;
  if (place === 'downstream' || faultShowsElsewhere(input)) return true;
  // Templates name the kinds of their slots: for those, a fix that only reads is deliberate (the fix lies outside
  // the cluster, or a person must look first). A cause of another kind (a RoleBinding, an ExternalSecret, a
  // ClusterResourceQuota) is changed as the envelope says, rather than read only or fixed by looking up an object
  // of a kind they can name (the namespace's ResourceQuota).
  const nameable = Object.values(OBJECT_SLOTS).some((kind) => kind === root.kind) || WORKLOAD_KINDS.has(root.kind);
  if (nameable) return false;
  return entry === undefined || place === 'none' || (place === 'elsewhere' && changesUnnamed(entry, names));
}

/** The steps that change an object as the envelope says, naming it as their target. */
function changeSteps(ref: ResourceRef, change: string): StepTemplate[] {
  return changeAsSaid(ref, oneLine(change)).map((t) => ({ ...t, targets: [toTarget(ref)] }));
}

interface AlternativeContext {
  input: PlanSynthesisInput;
  names: PlanNames;
  kinds: readonly string[];
  /** The template fixes that may apply to this cause. */
  usable: readonly RemediationEntry[];
  /** The template fix the plan uses, when it uses one. */
  entry: RemediationEntry | undefined;
  asSaid: boolean;
}

/**
 * Other ways to fix the fault. Beside a template fix: the template's other fixes for the fault and one for each
 * other fault of the same entity. Beside a change made as the envelope says: for each other place the envelope
 * names, the template fix for the cause's fault that changes it (for a node, which no edit gives more memory, the
 * first template fix that changes it). Any place left is changed as the envelope says.
 */
function alternativesOf(steps: readonly PlanStep[], ctx: AlternativeContext): PlanAlternative[] {
  const { input, names, kinds, usable, entry } = ctx;
  const alternatives: PlanAlternative[] = [];
  const ids = new StepIds(['main']);
  const same = (a: readonly PlanStep[]) => a.map((s) => s.command).join('\n');
  const offer = (summary: string, altSteps: PlanStep[]) => {
    if (alternatives.length >= MAX_ALTERNATIVES) return;
    if (same(altSteps) === same(steps) || alternatives.some((a) => same(a.steps) === same(altSteps))) return;
    alternatives.push({ id: ids.take(kebab(summary, 40)), summary, steps: altSteps });
  };
  const elsewhere = input.rootCause.alternatives ?? [];
  const fixesAt = (r: RemediationEntry, ref: ResourceRef) =>
    writeCommands(r, names).some((c) => namesObject(c, ref, kinds));
  const candidates: RemediationEntry[] = [];
  if (ctx.asSaid) {
    for (const alt of elsewhere) {
      const fixes = usable.filter((r) => fixesAt(r, alt.resource) && !changesUnnamed(r, names));
      const best =
        fixes.find((r) => r.when === input.rootCause.code) ?? (alt.resource.kind === 'Node' ? fixes[0] : undefined);
      if (best && !candidates.includes(best)) candidates.push(best);
    }
  } else if (entry) {
    const sameEntity = (input.otherCauses ?? [])
      .filter((c) => c.code !== entry.when && sameRef(c.resource, input.rootCause.resource))
      .map((c) => c.code);
    candidates.push(
      ...usable.filter((r) => r.when === entry.when && r !== entry),
      ...sameEntity.flatMap((code) => usable.filter((r) => r.when === code).slice(0, 1)),
    );
  }
  for (const candidate of candidates) {
    // An alternative changes only objects the evidence names: editing a ConfigMap the workload may not even
    // reference is no fix the evidence supports.
    if (changesUnnamed(candidate, names)) continue;
    const changed = elsewhere.find((a) => fixesAt(candidate, a.resource))?.resource;
    const verifyOn = changed ? withNamespaceOf(changed) : names.refs.owner;
    offer(candidate.title, buildSteps(entrySteps(candidate, input, names), input, names, verifyOn));
  }
  for (const alt of elsewhere) {
    if (['Node', 'Secret'].includes(alt.resource.kind) || !isKubeName(alt.resource.name)) continue;
    if (candidates.some((c) => fixesAt(c, alt.resource))) continue;
    offer(
      sentence(alt.change),
      buildSteps(changeSteps(alt.resource, alt.change), input, names, withNamespaceOf(alt.resource)),
    );
  }
  return alternatives;
}

/** Builds plans from the templates' remediation knowledge and the names the findings give: same findings, same plan. */
export class TemplateSynthesizer implements PlanSynthesizer {
  readonly name = 'template';

  async synthesize(input: PlanSynthesisInput): Promise<unknown> {
    const rejected = rejectedNames(input.feedback ?? []);
    const names = resolvePlanNames(
      {
        namespace: input.namespace,
        rootCause: input.rootCause,
        ...(input.finding ? { finding: input.finding } : {}),
      },
      { rejected },
    );
    const kinds = knownKinds(input);
    const root = input.rootCause.resource;
    // A fix that names the entity to change as an object of another kind was written for another kind of cause.
    const usable = input.remediation.filter((r) => fixPlace(r, names, input, kinds) !== 'wrong-kind');
    const codes = [input.rootCause.code, ...input.findingCodes];
    const code = codes.find((c) => usable.some((r) => r.when === c));
    const entry = code
      ? mostCompleteEntry(
          usable.filter((r) => r.when === code),
          names,
        )
      : undefined;
    const place = entry ? fixPlace(entry, names, input, kinds) : 'none';
    const asSaid = changedAsSaid(input, names, entry, place, rejected);
    const steps = asSaid
      ? buildSteps(
          [
            // The template's reads, but one that records the entity is the save step's to make.
            ...(entry && place === 'none'
              ? entrySteps(entry, input, names).filter(
                  (t) => !recordsObject(renderWithNames(t.command, names).text, root),
                )
              : []),
            ...changeSteps(root, input.rootCause.change ?? ''),
          ],
          input,
          names,
          withNamespaceOf(root),
        )
      : buildSteps(entrySteps(entry, input, names), input, names, names.refs.owner);
    const alternatives = alternativesOf(steps, { input, names, kinds, usable, entry, asSaid });
    if (asSaid) {
      return {
        plan_version: PLAN_VERSION,
        name: kebab(`fix-${input.rootCause.code}-${root.name}`),
        summary: sentence(input.rootCause.change ?? ''),
        rootCause: input.rootCause.summary,
        namespace: input.namespace,
        author: input.author,
        steps,
        ...(alternatives.length > 0 ? { alternatives } : {}),
      };
    }
    const owner = names.refs.owner;
    return {
      plan_version: PLAN_VERSION,
      name: kebab(`${entry ? 'fix' : 'investigate'}-${input.rootCause.code}-${owner?.name ?? 'unnamed'}`),
      summary: entry
        ? entry.title
        : `No known remediation for ${input.rootCause.code}; gather more evidence and escalate to the owning team`,
      rootCause: input.rootCause.summary,
      namespace: input.namespace,
      author: input.author,
      steps,
      ...(alternatives.length > 0 ? { alternatives } : {}),
    };
  }
}
