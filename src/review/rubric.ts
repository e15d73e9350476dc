import { UNKNOWN_NAME_PLACEHOLDERS } from './names.js';
import { guardPlan, hasMutatingSteps } from './plan.js';

const COMPLETENESS_THRESHOLD = 0.8;

interface ReviewCheck {
  id: 'schema' | 'rollback' | 'evidence' | 'safety-labels' | 'names';
  passed: boolean;
  detail: string;
  /**
   * A check that informs the reviewer without failing the review: a plan that still has to look a name up is
   * worth reviewing, but never approved automatically.
   */
  advisory?: boolean;
}

export interface AutomatedReview {
  passed: boolean;
  checks: ReviewCheck[];
  /** The review loop's autonomous mode (docs/concepts.md): a plan of read-only steps skips human review. */
  humanReviewRequired: boolean;
}

/** The automated review rubric run before any human sees a plan. */
export function reviewPlan(
  candidate: unknown,
  context: { completeness: number; overrideActive: boolean },
): AutomatedReview {
  const guarded = guardPlan(candidate);
  const checks: ReviewCheck[] = [
    {
      id: 'schema',
      passed: guarded.ok,
      detail: guarded.ok ? 'the plan matches its contract' : guarded.errors.join('; '),
    },
  ];
  const steps = stepsOf(candidate);
  const writes = steps.filter((s) => s.mode === 'write');
  const withoutRollback = writes.filter((s) => typeof s.rollback !== 'string' || s.rollback.trim() === '');
  checks.push({
    id: 'rollback',
    passed: withoutRollback.length === 0,
    detail:
      withoutRollback.length === 0
        ? `${writes.length} mutating step(s), each with a rollback`
        : `no rollback for ${withoutRollback.map((s) => s.id ?? '?').join(', ')}`,
  });
  const evidenceOk = context.completeness >= COMPLETENESS_THRESHOLD || context.overrideActive;
  checks.push({
    id: 'evidence',
    passed: evidenceOk,
    detail: context.overrideActive
      ? `break-glass override active (completeness ${context.completeness.toFixed(2)})`
      : `evidence completeness ${context.completeness.toFixed(2)} (needs ≥ ${COMPLETENESS_THRESHOLD})`,
  });
  const unlabelled = steps.filter((s) => !['SAFE', 'REQUIRES_APPROVAL', 'DANGEROUS'].includes(String(s.safety)));
  checks.push({
    id: 'safety-labels',
    passed: unlabelled.length === 0 && steps.length > 0,
    detail:
      unlabelled.length === 0
        ? 'every step has a safety label'
        : `unlabelled: ${unlabelled.map((s) => s.id ?? '?').join(', ')}`,
  });
  const names = namesCheck(steps, refusedNamesOf(candidate));
  checks.push(names);
  const passed = checks.every((c) => c.passed || c.advisory);
  return {
    passed,
    checks,
    humanReviewRequired: !(passed && names.passed && guarded.ok && !hasMutatingSteps(guarded.plan)),
  };
}

/**
 * Names the findings did not give stay as `<configmap>`-style placeholders until someone looks them up; values a
 * person has to choose (`<larger-limit>`) are listed too, so the reviewer sees everything left to fill in.
 */
function refusedNamesOf(candidate: unknown): string[] {
  const revision = (candidate as { revision?: { refusedNames?: unknown } } | undefined)?.revision;
  return Array.isArray(revision?.refusedNames) ? revision.refusedNames.map(String) : [];
}

function namesCheck(steps: readonly LooseStep[], refused: readonly string[]): ReviewCheck {
  const unknown = new Map<string, number[]>();
  const choices = new Map<string, number[]>();
  steps.forEach((step, index) => {
    const text = `${typeof step.command === 'string' ? step.command : ''}\n${typeof step.rollback === 'string' ? step.rollback : ''}`;
    for (const match of text.matchAll(/<[a-z][a-z0-9-]*>/g)) {
      const into = UNKNOWN_NAME_PLACEHOLDERS.includes(match[0]) ? unknown : choices;
      const at = into.get(match[0]) ?? [];
      if (!at.includes(index + 1)) at.push(index + 1);
      into.set(match[0], at);
    }
  });
  const list = (m: Map<string, number[]>) =>
    [...m.entries()].map(([p, at]) => `${p} (step${at.length > 1 ? 's' : ''} ${at.join(', ')})`).join(', ');
  const parts = [
    unknown.size > 0 ? `names to look up first: ${list(unknown)}` : 'every object is named',
    ...(choices.size > 0 ? [`values to choose: ${list(choices)}`] : []),
    // A reviewer's edit refused for its names is not a plan whose names are all fine.
    ...(refused.length > 0 ? [`refused at review: ${refused.map((n) => `"${n}"`).join(', ')}`] : []),
  ];
  return { id: 'names', passed: unknown.size === 0 && refused.length === 0, detail: parts.join('; '), advisory: true };
}

interface LooseStep {
  id?: string;
  mode?: unknown;
  command?: unknown;
  rollback?: unknown;
  safety?: unknown;
}

function stepsOf(candidate: unknown): LooseStep[] {
  if (candidate && typeof candidate === 'object' && Array.isArray((candidate as { steps?: unknown }).steps)) {
    return ((candidate as { steps: unknown[] }).steps as unknown[]).filter(
      (s): s is LooseStep => typeof s === 'object' && s !== null,
    );
  }
  return [];
}
