import * as z from 'zod';
import { type ResourceRef, ResourceRefSchema, type Severity } from '../triage/envelope/index.js';
import { canonicalKind, isClusterScoped } from './kinds.js';
import { describeResource } from './resource-text.js';

/** What must be gone for a fix to count: a finding code, on one resource when the resource is known. */
const ValidationTargetSchema = z.object({ code: z.string(), resource: ResourceRefSchema.optional() });
export type ValidationTarget = z.infer<typeof ValidationTargetSchema>;

/** The fix is being validated: after RESOLVING the session re-enters GATHERING and waits for a fresh triage. */
export const ValidationContextSchema = z.object({
  /** Only a triage newer than this judges the fix. */
  startedAt: z.iso.datetime({ offset: true }),
  /** Finding codes that must be gone for the fix to count. */
  codes: z.array(z.string()),
  /** The confirmed root cause (or, without one, the original symptoms) with the resource each was seen on. */
  targets: z.array(ValidationTargetSchema).optional(),
});
export type ValidationContext = z.infer<typeof ValidationContextSchema>;

/** A finding below this severity does not keep a fix from counting: what remains is noise, not the fault. */
const BLOCKING_SEVERITIES: ReadonlySet<Severity> = new Set<Severity>(['medium', 'high', 'critical']);

function sameResource(a: ResourceRef, b: ResourceRef): boolean {
  const kind = canonicalKind(a.kind);
  if (kind !== canonicalKind(b.kind) || a.name !== b.name) return false;
  // Ranked causes sometimes carry no namespace where the finding does: a missing namespace matches any.
  return isClusterScoped(kind) || !a.namespace || !b.namespace || a.namespace === b.namespace;
}

/**
 * Whether a finding (or a symptom recorded from one) is still the fault the fix was meant to remove: one of the
 * targets' codes, on the target's resource when it has one, at medium severity or worse. A symptom recorded
 * without a severity counts, so an old record can never let a fix pass.
 */
export function isStillPresent(
  targets: readonly ValidationTarget[],
  finding: {
    code?: string | undefined;
    resource?: ResourceRef | undefined;
    owner?: ResourceRef | undefined;
    severity?: Severity | undefined;
  },
): boolean {
  if (!finding.code) return false;
  if (finding.severity !== undefined && !BLOCKING_SEVERITIES.has(finding.severity)) return false;
  const on = (target: ResourceRef) =>
    !finding.resource ||
    sameResource(target, finding.resource) ||
    (finding.owner !== undefined && sameResource(target, finding.owner));
  return targets.some((t) => t.code === finding.code && (!t.resource || on(t.resource)));
}

/** The targets of a validation, also for contexts stored before targets existed. */
export function validationTargetsOf(context: ValidationContext): ValidationTarget[] {
  return context.targets ?? context.codes.map((code) => ({ code }));
}

export function describeTarget(target: ValidationTarget): string {
  return target.resource ? `${target.code} on ${describeResource(target.resource)}` : target.code;
}
