import { classifyCommandLine } from '../diagnosis/commands/index.js';
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
}

export interface RevisionResult {
  plan: RemediationPlan;
  /** What changed, in the words the view shows ("dropped step 4 (…)"). */
  applied: string[];
  question?: string;
}

const NOTE_MAX = 2000;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
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

/** A step for a command the reviewer wrote, classified the way the gate classifies what people type. */
function reviewerStep(
  command: string,
  rollback: string | undefined,
  description: string,
  ids: StepIds,
): { step: PlanStep } | { problem: string } {
  const request = classifyCommandLine(command);
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
    },
  };
}

type Applied = { plan: RemediationPlan; text: string } | { problem: string };

function withSteps(plan: RemediationPlan, steps: PlanStep[]): RemediationPlan {
  return { ...plan, steps };
}

function applyEdit(plan: RemediationPlan, edit: PlanEdit, original: RemediationPlan): Applied {
  const ids = new StepIds(plan.steps.map((s) => s.id));
  const idOf = (ref: StepRef): string | { problem: string } => {
    const r = resolve(ref, original);
    if (!r.ok) return { problem: r.problem };
    return plan.steps.some((s) => s.id === r.id) ? r.id : { problem: `${describe(r.id, original)} is already gone` };
  };
  switch (edit.kind) {
    case 'drop': {
      const id = idOf(edit.step);
      if (typeof id !== 'string') return id;
      const dropped = plan.steps.find((s) => s.id === id) as PlanStep;
      // Whoever waited for the dropped step now waits for what it waited for.
      const steps = plan.steps
        .filter((s) => s.id !== id)
        .map((s) =>
          s.needs.includes(id)
            ? { ...s, needs: [...new Set([...s.needs.filter((n) => n !== id), ...dropped.needs])] }
            : s,
        );
      return { plan: withSteps(plan, steps), text: `dropped ${describe(id, original)}` };
    }
    case 'replace': {
      const id = idOf(edit.step);
      if (typeof id !== 'string') return id;
      const old = plan.steps.find((s) => s.id === id) as PlanStep;
      const rollback = edit.rollback ?? (old.mode === 'write' ? old.rollback : undefined);
      const made = reviewerStep(
        edit.command,
        rollback,
        `${old.description} Changed at review (was: ${clip(old.command, 300)}).`,
        new StepIds(plan.steps.filter((s) => s.id !== id).map((s) => s.id)),
      );
      if ('problem' in made) return made;
      const step = { ...made.step, needs: old.needs };
      const steps = plan.steps.map((s) =>
        s.id === id ? step : { ...s, needs: s.needs.map((n) => (n === id ? step.id : n)) },
      );
      return {
        plan: withSteps(plan, steps),
        text: `replaced ${describe(id, original)} with \`${clip(edit.command, 200)}\``,
      };
    }
    case 'move':
    case 'move-to': {
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
    case 'add': {
      const made = reviewerStep(edit.command, edit.rollback, 'Added at review.', ids);
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
    case 'alternative': {
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
  }
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
  const mentions = /\bstep\s+(\d+)/i.exec(unparsed.join(' '));
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
  let current: RemediationPlan = { ...plan };
  delete current.revision;
  const applied: string[] = [];
  const problems: string[] = [];
  for (const edit of edits) {
    const result = applyEdit(current, edit, original);
    if ('problem' in result) {
      problems.push(result.problem);
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
    },
  };
  const guarded = guardPlan(revised);
  if (!guarded.ok) {
    // Only the revision record itself can fail here (every edit was guarded): keep the edits, say so plainly.
    return { plan: { ...current }, applied, question: question ?? 'The revision could not be recorded.' };
  }
  return { plan: guarded.plan, applied, ...(question ? { question } : {}) };
}
