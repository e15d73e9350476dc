import type { ResourceRef } from '../triage/findings.js';
import type { TriageTemplate } from '../triage/template.js';
import { PLAN_VERSION, type PlanStep } from './plan.js';

export interface PlanSynthesisInput {
  sessionId: string;
  namespace: string;
  intent: string;
  /** Who the plan is attributed to; reviewers of a mutating plan must be someone else. */
  author: string;
  rootCause: { code: string; summary: string; resource: ResourceRef };
  /** Finding codes seen in the session, most important first; used when the root cause has no remediation. */
  findingCodes: readonly string[];
  remediation: TriageTemplate['remediation'];
  /** A reviewer's note from a "request changes" decision, or the schema guard's errors on a regeneration. */
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

/** Builds plans from the templates' remediation knowledge: same findings, same plan. */
export class TemplateSynthesizer implements PlanSynthesizer {
  readonly name = 'template';

  async synthesize(input: PlanSynthesisInput): Promise<unknown> {
    const codes = [input.rootCause.code, ...input.findingCodes];
    const entry = codes.map((code) => input.remediation.find((r) => r.when === code)).find(Boolean);
    const vars: Record<string, string> = {
      namespace: input.namespace,
      'resource.name': input.rootCause.resource.name,
      'resource.kind': input.rootCause.resource.kind.toLowerCase(),
      'resource.namespace': input.rootCause.resource.namespace ?? input.namespace,
      // The root cause already names the entity to change (the Deployment behind a crashing pod).
      'owner.name': input.rootCause.resource.name,
      'owner.kind': input.rootCause.resource.kind.toLowerCase(),
      'owner.namespace': input.rootCause.resource.namespace ?? input.namespace,
    };
    const inspect: PlanStep = {
      id: 'inspect-current-state',
      description: `Record the current state of ${input.rootCause.resource.kind} ${input.rootCause.resource.name} before changing anything`,
      command: render('kubectl get {{resource.kind}} {{resource.name}} -n {{namespace}} -o yaml', vars),
      mode: 'read',
      safety: 'SAFE',
      needs: [],
    };
    const steps: PlanStep[] = [inspect];
    if (entry) {
      entry.steps.forEach((step, index) => {
        const previous = steps[steps.length - 1];
        steps.push({
          id: `step-${index + 1}`,
          description: step.description,
          command: render(step.command, vars),
          mode: step.mode,
          safety: step.mode === 'read' ? 'SAFE' : DANGEROUS.test(step.command) ? 'DANGEROUS' : 'REQUIRES_APPROVAL',
          ...(step.rollback ? { rollback: render(step.rollback, vars) } : {}),
          needs: previous ? [previous.id] : [],
        });
      });
    }
    steps.push({
      id: 'verify-fix',
      description: 'Re-run triage to confirm the fault is gone (re-enters GATHERING to validate the fix)',
      command: `/triage ${input.intent} in ${input.namespace}`,
      mode: 'read',
      safety: 'SAFE',
      needs: [steps[steps.length - 1]?.id ?? inspect.id],
    });
    return {
      plan_version: PLAN_VERSION,
      name: kebab(`${entry ? 'fix' : 'investigate'}-${input.rootCause.code}-${input.rootCause.resource.name}`),
      summary: entry
        ? entry.title
        : `No known remediation for ${input.rootCause.code}; gather more evidence and escalate to the owning team`,
      rootCause: input.rootCause.summary,
      namespace: input.namespace,
      author: input.author,
      steps,
    };
  }
}

export function render(text: string, vars: Readonly<Record<string, string>>): string {
  return text.replace(/\{\{\s*([\w.]+)\s*\}\}/g, (match, key: string) => vars[key] ?? match);
}

function kebab(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60)
      .replace(/-+$/, '') || 'plan'
  );
}
