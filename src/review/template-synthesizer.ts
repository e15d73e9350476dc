import type { ResourceRef } from '../triage/findings.js';
import type { TriageTemplate } from '../triage/template-schema.js';
import type { NameSlot } from '../triage/template-slots.js';
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
  rootCause: { code: string; summary: string; resource: ResourceRef; chain?: readonly ResourceRef[] };
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

/** Reads that show the fix took, chosen by what was changed; the last one sends the reader to "Mark resolved". */
function verificationTemplates(
  names: PlanNames,
  changed: ResolvedRef | undefined,
): { command: string; description: string }[] {
  const out: { command: string; description: string }[] = [];
  const kind = changed?.kind;
  const object: Record<string, { command: string; description: string }> = {
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
  if (workload && ['Deployment', 'StatefulSet', 'DaemonSet'].includes(workload.kind)) {
    out.push({
      command: 'kubectl rollout status {{workload.kind}}/{{workload.name}} -n {{workload.namespace}} --timeout=5m',
      description: 'Wait until every pod of {{workload.kind}} {{workload.name}} runs the fixed spec and is ready.',
    });
  } else if (workload && (workload.kind === 'CronJob' || workload.kind === 'Job')) {
    out.push({
      command: 'kubectl get jobs -n {{workload.namespace}} --sort-by=.metadata.creationTimestamp',
      description: 'Check that the newest job of {{workload.kind}} {{workload.name}} completes.',
    });
  }
  if (out.length === 0) {
    out.push({
      command: 'kubectl get pods -n {{namespace}} -o wide',
      description: 'Check that the pods of {{namespace}} run and are ready.',
    });
  }
  return out.slice(0, 2);
}

/** The steps of one fix: lookups for what the findings do not name, the template's steps, then verification. */
function buildSteps(entry: RemediationEntry | undefined, input: PlanSynthesisInput, names: PlanNames): PlanStep[] {
  const changed = names.refs.owner;
  const templates: {
    command: string;
    description: string;
    mode: 'read' | 'write';
    rollback?: string;
    saves?: string[];
  }[] = entry
    ? entry.steps.map((s) => ({ ...s }))
    : [
        {
          command: 'kubectl describe {{owner.kind}} {{owner.name}} -n {{owner.namespace}}',
          description: `Read the state and events of {{owner.kind}} {{owner.name}}: no known remediation for ${input.rootCause.code}.`,
          mode: 'read',
        },
        {
          command: 'kubectl get events -n {{namespace}} --field-selector involvedObject.name={{resource.name}}',
          description:
            'Read the recent events of {{resource.kind}} {{resource.name}}, then escalate to the owning team.',
          mode: 'read',
        },
      ];
  // A change with nothing read before it records the state of what it changes first (never a Secret's data).
  if (entry?.steps.some((s) => s.mode === 'write') && entry.steps[0]?.mode === 'write' && changed) {
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
  const rendered = templates.map((t) => ({
    mode: t.mode,
    command: renderWithNames(t.command, names),
    description: renderWithNames(t.description, names),
    rollback: t.rollback === undefined ? undefined : renderWithNames(t.rollback, names),
    saves: (t.saves ?? []).map((file) => renderWithNames(file, names).text),
  }));
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
  const reads: string[] = [];
  let previousWrite: string | undefined;
  for (const r of rendered) {
    const missing = [...new Set([...r.command.missing, ...(r.rollback?.missing ?? [])])];
    // A missing detail in a read is looked up only when a change depends on it.
    const lookups = lookupsFor(missing.filter((slot) => r.mode === 'write' || isNameSlot(slot)));
    const used = [...new Set([...r.command.used, ...(r.rollback?.used ?? [])])];
    const text = `${r.command.text}\n${r.rollback?.text ?? ''}`;
    const targets = targetsOf(names, used, text);
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
  const lastWrite = [...steps].reverse().find((s) => s.mode === 'write');
  const checks = verificationTemplates(names, changed);
  checks.forEach((check, index) => {
    const command = renderWithNames(check.command, names);
    if (command.missing.length > 0 || steps.some((s) => s.command === command.text)) return;
    const last = index === checks.length - 1;
    const description = `${renderWithNames(check.description, names).text}${
      last ? ' Then press "Mark resolved": calmops re-runs the triage to validate the fix.' : ''
    }`;
    const targets = targetsOf(names, command.used, command.text);
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

function sameRef(a: ResourceRef, b: ResourceRef): boolean {
  return a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');
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
    const codes = [input.rootCause.code, ...input.findingCodes];
    const code = codes.find((c) => input.remediation.some((r) => r.when === c));
    const entry = code
      ? mostCompleteEntry(
          input.remediation.filter((r) => r.when === code),
          names,
        )
      : undefined;
    const steps = buildSteps(entry, input, names);
    const alternatives: PlanAlternative[] = [];
    if (entry) {
      const sameEntity = (input.otherCauses ?? [])
        .filter((c) => c.code !== entry.when && sameRef(c.resource, input.rootCause.resource))
        .map((c) => c.code);
      const candidates = [
        ...input.remediation.filter((r) => r.when === entry.when && r !== entry),
        ...sameEntity.flatMap((code) => input.remediation.filter((r) => r.when === code).slice(0, 1)),
      ];
      const ids = new StepIds(['main']);
      for (const candidate of candidates) {
        if (alternatives.length >= MAX_ALTERNATIVES) break;
        // An alternative changes only objects the evidence names: editing a ConfigMap the workload may not even
        // reference is no fix the evidence supports.
        if (changesUnnamed(candidate, names)) continue;
        const altSteps = buildSteps(candidate, input, names);
        const same = (a: readonly PlanStep[]) => a.map((s) => s.command).join('\n');
        if (same(altSteps) === same(steps) || alternatives.some((a) => same(a.steps) === same(altSteps))) continue;
        alternatives.push({ id: ids.take(kebab(candidate.title, 40)), summary: candidate.title, steps: altSteps });
      }
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
