import { classifyCommandLine } from '../diagnosis/commands/index.js';
import { canonicalKind, kindLabel } from '../diagnosis/kinds.js';
import { clip, isKubeName, NOTE_MAX } from '../limits.js';
import { type PlanEdit, parseReviewNote, type StepRef } from './note.js';
import { guardPlan, type PlanStep, type RemediationPlan } from './plan.js';
import { idFromCommand, StepIds } from './step-id.js';

/**
 * A revision made from a reviewer's note: each edit the note asks for is applied on its own and kept only when the
 * plan still passes the schema guard; what could not be applied (or read) becomes one specific question in the
 * revision, so the next plan never silently repeats the last one.
 */

export interface RevisionRequest {
  note: string;
  /** The revision number being produced (1 for the first revision). */
  number: number;
  requestedBy?: string;
  /** Objects the session's evidence shows exist (the envelope's findings, their owners and related objects). */
  known?: readonly { kind: string; name: string }[];
}

/** Objects a reviewer's command may name: what the evidence shows, what the plan already names, and what it creates. */
class KnownObjects {
  private readonly keys = new Set<string>();

  static of(plan: RemediationPlan, known: readonly { kind: string; name: string }[]): KnownObjects {
    const objects = new KnownObjects();
    for (const k of known) objects.add(k.kind, k.name);
    const steps = [...plan.steps, ...(plan.alternatives ?? []).flatMap((a) => a.steps)];
    for (const step of steps) {
      for (const t of step.targets ?? []) objects.add(t.kind, t.name);
      for (const text of [step.command, step.rollback ?? '']) {
        const r = classifyCommandLine(text)?.resource;
        if (r?.name && !r.name.startsWith('<')) objects.add(r.kind, r.name);
      }
    }
    return objects;
  }

  add(kind: string, name: string): void {
    this.keys.add(`${canonicalKind(kind)}/${name}`);
  }

  has(kind: string, name: string): boolean {
    return this.keys.has(`${canonicalKind(kind)}/${name}`);
  }

  /** Objects of a kind (for "the ConfigMap": the one the evidence names, when there is exactly one). */
  ofKind(kind: string): string[] {
    const prefix = `${canonicalKind(kind)}/`;
    return [...this.keys].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
  }
}

/** Verbs whose command brings its object into being, so a new name is fine. */
const CREATES = new Set(['create', 'expose', 'run']);

export interface RevisionResult {
  plan: RemediationPlan;
  /** What changed, in the words the view shows ("dropped step 4 (…)"). */
  applied: string[];
  question?: string;
}

type Resolved = { ok: true; id: string } | { ok: false; problem: string };

function resolve(ref: StepRef, original: RemediationPlan): Resolved {
  if ('number' in ref) {
    const step = original.steps[ref.number - 1];
    return step
      ? { ok: true, id: step.id }
      : { ok: false, problem: `there is no step ${ref.number} (the plan has ${original.steps.length} steps)` };
  }
  return original.steps.some((s) => s.id === ref.id)
    ? { ok: true, id: ref.id }
    : { ok: false, problem: `no step is called "${ref.id}"` };
}

/** "step 4 (kubectl rollout restart …)": how the original plan showed it. */
function describe(id: string, original: RemediationPlan): string {
  const index = original.steps.findIndex((s) => s.id === id);
  const step = original.steps[index];
  return step ? `step ${index + 1} (${clip(step.command, 120)})` : `step ${id}`;
}

/**
 * A step for a command the reviewer wrote, classified the way the gate classifies what people type, and held to
 * the names rule a synthesized plan is held to: the object it names is a valid Kubernetes name and exists (the
 * evidence or the plan names it) or the command itself creates it.
 */
function reviewerStep(
  command: string,
  rollback: string | undefined,
  description: string,
  ids: StepIds,
  known: KnownObjects,
): { step: PlanStep } | { problem: string; refusedName?: string } {
  const request = classifyCommandLine(command);
  const target = request?.resource;
  if (target?.name && !target.name.startsWith('<')) {
    const what = `${kindLabel(target.kind)} ${target.name}`;
    if (!isKubeName(target.name)) {
      return {
        problem: `\`${clip(command, 200)}\` names ${what}: "${target.name}" is not a valid Kubernetes name (lowercase letters, digits, "-" and "." only)`,
        refusedName: target.name,
      };
    }
    if (CREATES.has(request?.verb ?? '')) known.add(target.kind, target.name);
    else if (!known.has(target.kind, target.name)) {
      return {
        problem: `\`${clip(command, 200)}\` names ${what}, which the evidence does not show exists and no step creates`,
        refusedName: target.name,
      };
    }
  }
  const reads = request?.toolClass === 'read' && request.kind !== 'dangerous';
  const mode: PlanStep['mode'] = reads ? 'read' : 'write';
  if (mode === 'write' && !rollback) {
    return { problem: `\`${clip(command, 200)}\` changes the cluster and has no rollback` };
  }
  const safety: PlanStep['safety'] = reads
    ? 'SAFE'
    : request?.kind === 'dangerous' || request?.toolClass === 'destructive'
      ? 'DANGEROUS'
      : 'REQUIRES_APPROVAL';
  return {
    step: {
      id: ids.take(idFromCommand(command)),
      description,
      command,
      mode,
      safety,
      ...(rollback ? { rollback } : {}),
      needs: [],
      ...(target?.name && isKubeName(target.name)
        ? {
            targets: [
              {
                kind: kindLabel(target.kind),
                name: target.name,
                ...(request?.namespace ? { namespace: request.namespace } : {}),
              },
            ],
          }
        : {}),
    },
  };
}

type Applied = { plan: RemediationPlan; text: string } | { problem: string; refusedName?: string };

function withSteps(plan: RemediationPlan, steps: PlanStep[]): RemediationPlan {
  return { ...plan, steps };
}

/** The plan being edited, the plan as it was shown (which the reviewer's step numbers refer to), and the objects known. */
interface Editing {
  plan: RemediationPlan;
  original: RemediationPlan;
  known: KnownObjects;
  ids: StepIds;
  idOf: (ref: StepRef) => string | { problem: string };
}

/** Drops a step; whoever waited for it now waits for what it waited for. */
function dropStep(editing: Editing, edit: Extract<PlanEdit, { kind: 'drop' }>): Applied {
  const { plan, original, idOf } = editing;
  const id = idOf(edit.step);
  if (typeof id !== 'string') return id;
  const dropped = plan.steps.find((s) => s.id === id) as PlanStep;
  // Whoever waited for the dropped step now waits for what it waited for.
  const steps = plan.steps
    .filter((s) => s.id !== id)
    .map((s) =>
      s.needs.includes(id) ? { ...s, needs: [...new Set([...s.needs.filter((n) => n !== id), ...dropped.needs])] } : s,
    );
  return { plan: withSteps(plan, steps), text: `dropped ${describe(id, original)}` };
}

/** Replaces a step's command, keeping what it waited for; its dependents wait for the new step. */
function replaceStep(editing: Editing, edit: Extract<PlanEdit, { kind: 'replace' }>): Applied {
  const { plan, original, known, idOf } = editing;
  const id = idOf(edit.step);
  if (typeof id !== 'string') return id;
  const old = plan.steps.find((s) => s.id === id) as PlanStep;
  const rollback = edit.rollback ?? (old.mode === 'write' ? old.rollback : undefined);
  const made = reviewerStep(
    edit.command,
    rollback,
    `${old.description} Changed at review (was: ${clip(old.command, 300)}).`,
    new StepIds(plan.steps.filter((s) => s.id !== id).map((s) => s.id)),
    known,
  );
  if ('problem' in made) return { ...made, problem: `${describe(id, original)}: ${made.problem}` };
  const step = { ...made.step, needs: old.needs };
  const steps = plan.steps.map((s) =>
    s.id === id ? step : { ...s, needs: s.needs.map((n) => (n === id ? step.id : n)) },
  );
  return {
    plan: withSteps(plan, steps),
    text: `replaced ${describe(id, original)} with \`${clip(edit.command, 200)}\``,
  };
}

/** Moves a step to the start or the end, or before or after another step. */
function moveStep(editing: Editing, edit: Extract<PlanEdit, { kind: 'move' | 'move-to' }>): Applied {
  const { plan, original, idOf } = editing;
  const id = idOf(edit.step);
  if (typeof id !== 'string') return id;
  const step = plan.steps.find((s) => s.id === id) as PlanStep;
  const rest = plan.steps.filter((s) => s.id !== id);
  let at: number;
  let where: string;
  if (edit.kind === 'move-to') {
    at = edit.position === 'start' ? 0 : rest.length;
    where = edit.position === 'start' ? 'to the start' : 'to the end';
  } else {
    const anchor = idOf(edit.anchor);
    if (typeof anchor !== 'string') return anchor;
    if (anchor === id) return { problem: `${describe(id, original)} cannot move relative to itself` };
    at = rest.findIndex((s) => s.id === anchor) + (edit.position === 'after' ? 1 : 0);
    where = `${edit.position} ${describe(anchor, original).replace(/ \(.*$/, '')}`;
  }
  const steps = [...rest.slice(0, at), step, ...rest.slice(at)];
  return { plan: withSteps(plan, steps), text: `moved ${describe(id, original)} ${where}` };
}

/** Adds a reviewer's step at the end, or before or after another step. */
function addStep(editing: Editing, edit: Extract<PlanEdit, { kind: 'add' }>): Applied {
  const { plan, original, known, ids, idOf } = editing;
  const made = reviewerStep(edit.command, edit.rollback, 'Added at review.', ids, known);
  if ('problem' in made) return made;
  let at = plan.steps.length;
  let where = 'at the end';
  if (edit.anchor) {
    const anchor = idOf(edit.anchor);
    if (typeof anchor !== 'string') return anchor;
    at = plan.steps.findIndex((s) => s.id === anchor) + (edit.position === 'after' ? 1 : 0);
    where = `${edit.position} ${describe(anchor, original).replace(/ \(.*$/, '')}`;
  }
  const before = plan.steps[at - 1];
  // A change runs after what precedes it; a read needs nothing.
  const step = { ...made.step, needs: made.step.mode === 'write' && before ? [before.id] : [] };
  const steps = [...plan.steps.slice(0, at), step, ...plan.steps.slice(at)];
  return { plan: withSteps(plan, steps), text: `added \`${clip(edit.command, 200)}\` ${where}` };
}

/** Makes an alternative fix the plan, keeping the plan it replaces as an alternative. */
function chooseAlternative(editing: Editing, edit: Extract<PlanEdit, { kind: 'alternative' }>): Applied {
  const { plan } = editing;
  const alternatives = plan.alternatives ?? [];
  const chosen = alternatives[edit.index - 1];
  if (!chosen) {
    return {
      problem:
        alternatives.length === 0
          ? 'this plan has no alternative fix'
          : `there is no alternative ${edit.index} (the plan has ${alternatives.length})`,
    };
  }
  const previous = { id: 'previous-plan', summary: plan.summary, steps: plan.steps };
  return {
    plan: {
      ...plan,
      summary: chosen.summary,
      steps: chosen.steps,
      alternatives: [previous, ...alternatives.filter((a) => a !== chosen)].slice(0, 3),
    },
    text: `chose alternative ${edit.index}: ${chosen.summary}`,
  };
}

function applyEdit(plan: RemediationPlan, edit: PlanEdit, original: RemediationPlan, known: KnownObjects): Applied {
  const ids = new StepIds(plan.steps.map((s) => s.id));
  const idOf = (ref: StepRef): string | { problem: string } => {
    const r = resolve(ref, original);
    if (!r.ok) return { problem: r.problem };
    return plan.steps.some((s) => s.id === r.id) ? r.id : { problem: `${describe(r.id, original)} is already gone` };
  };
  const editing: Editing = { plan, original, known, ids, idOf };
  switch (edit.kind) {
    case 'drop':
      return dropStep(editing, edit);
    case 'replace':
      return replaceStep(editing, edit);
    case 'move':
    case 'move-to':
      return moveStep(editing, edit);
    case 'add':
      return addStep(editing, edit);
    case 'env-from':
      return envFrom(plan, edit, original, known);
    case 'alternative':
      return chooseAlternative(editing, edit);
  }
}

/**
 * "take DATABASE_URL from the ConfigMap": the step that sets the variable takes it from the ConfigMap (or Secret)
 * instead, `--from=configmap/NAME --keys=VAR`. Which ConfigMap: the one named, or the only one the evidence names;
 * otherwise the clause goes back to the reviewer, attributed to the step that sets the variable.
 */
function envFrom(
  plan: RemediationPlan,
  edit: Extract<PlanEdit, { kind: 'env-from' }>,
  original: RemediationPlan,
  known: KnownObjects,
): Applied {
  const setsVariable = new RegExp(String.raw`(^|\s)${edit.variable}=\S+`);
  const step = plan.steps.find(
    (s) => s.mode === 'write' && /\bset env\b/.test(s.command) && setsVariable.test(s.command),
  );
  const kind = edit.source === 'secret' ? 'Secret' : 'ConfigMap';
  if (!step) {
    return { problem: `"${clip(edit.said, 150)}": no step of the plan sets ${edit.variable}` };
  }
  const where = describe(step.id, original);
  const candidates = known.ofKind(kind);
  const name = edit.name ?? (candidates.length === 1 ? candidates[0] : undefined);
  if (name === undefined) {
    return {
      problem: `${where} sets ${edit.variable}; "${clip(edit.said, 150)}" names no ${kind}, and the evidence ${
        candidates.length === 0 ? `shows none` : `shows several (${candidates.join(', ')})`
      }: say which, e.g. "take ${edit.variable} from ${kind.toLowerCase()} <name>"`,
    };
  }
  if (!isKubeName(name)) {
    return { problem: `${where}: "${name}" is not a valid Kubernetes name`, refusedName: name };
  }
  if (!known.has(kind, name)) {
    return {
      problem: `${where}: ${kind} ${name} is not in the evidence and no step creates it`,
      refusedName: name,
    };
  }
  const command = step.command.replace(
    setsVariable,
    (_m, lead: string) => `${lead}--from=${kind.toLowerCase()}/${name} --keys=${edit.variable}`,
  );
  const steps = plan.steps.map((s) =>
    s.id === step.id
      ? {
          ...s,
          command,
          description: `${s.description} Changed at review: ${edit.variable} comes from ${kind} ${name}.`,
          targets: [
            ...(s.targets ?? []),
            { kind, name, ...(plan.namespace ? { namespace: plan.namespace } : {}) },
          ].slice(0, 10),
        }
      : s,
  );
  return { plan: withSteps(plan, steps), text: `${where} takes ${edit.variable} from ${kind} ${name}` };
}

/** A question that names what was not understood, with an example written with this plan's own steps. */
function questionFor(plan: RemediationPlan, problems: readonly string[], unparsed: readonly string[]): string {
  const write = plan.steps.findIndex((s) => s.mode === 'write');
  const n = write === -1 ? 1 : write + 1;
  const example = `for example "drop step ${n}", "replace step ${n} with \`kubectl …\`", "move step ${n} before step 1"${
    (plan.alternatives?.length ?? 0) > 0 ? ' or "use alternative 1"' : ''
  }`;
  if (problems.length > 0) {
    return clip(
      `I could not apply part of the note: ${problems.join('; ')}. What should I change instead (${example})?`,
      1000,
    );
  }
  const said = unparsed.map((u) => `"${clip(u, 150)}"`).join(', ');
  // A clause that names what a step's command names (a variable, an object) is about that step.
  const about = (clause: string) =>
    plan.steps.findIndex((s) =>
      (clause.match(/[A-Za-z][A-Za-z0-9_.-]{3,}/g) ?? []).some(
        (w) => /[_.-]|[A-Z]{2}/.test(w) && s.command.includes(w),
      ),
    );
  const attributed = unparsed.map(about).find((i) => i !== -1);
  const mentions =
    /\bstep\s+(\d+)/i.exec(unparsed.join(' ')) ?? (attributed !== undefined ? ['', String(attributed + 1)] : null);
  if (/\b(add|check|also|verify|another)\b/i.test(unparsed.join(' ')) && !mentions) {
    return clip(
      `I read ${said} as asking for another step: which command should it run, and where? Reply with, for example, "add \`kubectl get …\` after step ${plan.steps.length}".`,
      1000,
    );
  }
  if (mentions) {
    const m = mentions[1];
    return clip(
      `What should change in step ${m} (${said})? Reply with "drop step ${m}", "replace step ${m} with \`kubectl …\`" or "move step ${m} after step …".`,
      1000,
    );
  }
  return clip(
    `I could not turn ${said} into a change to the plan. Which step should change, and how (${example})?`,
    1000,
  );
}

export function revisePlan(plan: RemediationPlan, request: RevisionRequest): RevisionResult {
  const { edits, unparsed } = parseReviewNote(request.note);
  const original: RemediationPlan = plan;
  const known = KnownObjects.of(plan, request.known ?? []);
  const refusedNames: string[] = [];
  let current: RemediationPlan = { ...plan };
  delete current.revision;
  const applied: string[] = [];
  const problems: string[] = [];
  for (const edit of edits) {
    const result = applyEdit(current, edit, original, known);
    if ('problem' in result) {
      problems.push(result.problem);
      if (result.refusedName) refusedNames.push(result.refusedName);
      continue;
    }
    const guarded = guardPlan(result.plan);
    if (!guarded.ok) {
      problems.push(`${result.text} would break the plan (${clip(guarded.errors.join('; '), 300)})`);
      continue;
    }
    current = guarded.plan;
    applied.push(clip(result.text, 500));
  }
  const question =
    problems.length > 0 || unparsed.length > 0 || applied.length === 0
      ? questionFor(original, problems, unparsed.length > 0 || problems.length > 0 ? unparsed : [request.note])
      : undefined;
  const revised: RemediationPlan = {
    ...current,
    revision: {
      number: request.number,
      note: clip(request.note.trim() || '(no note)', NOTE_MAX),
      ...(request.requestedBy ? { requestedBy: request.requestedBy } : {}),
      applied: applied.slice(0, 20),
      ...(question ? { question } : {}),
      ...(refusedNames.length > 0 ? { refusedNames: [...new Set(refusedNames)].slice(0, 10) } : {}),
    },
  };
  const guarded = guardPlan(revised);
  if (!guarded.ok) {
    // Only the revision record itself can fail here (every edit was guarded): keep the edits, say so plainly.
    return { plan: { ...current }, applied, question: question ?? 'The revision could not be recorded.' };
  }
  return { plan: guarded.plan, applied, ...(question ? { question } : {}) };
}
