import * as z from 'zod';
import { byCodePoint } from '../../code-point-order.js';

/** The envelope's text cut, kept here for the stages that read it from the findings' module. */

const DOMAINS = ['storage', 'compute', 'networking', 'platform'] as const;
export const DomainSchema = z.enum(DOMAINS);
export type Domain = z.infer<typeof DomainSchema>;

export const SeveritySchema = z.enum(['info', 'low', 'medium', 'high', 'critical']);
export type Severity = z.infer<typeof SeveritySchema>;

export const ResourceRefSchema = z.object({
  kind: z.string(),
  name: z.string(),
  namespace: z.string().optional(),
});
export type ResourceRef = z.infer<typeof ResourceRefSchema>;

/**
 * One fact an analyzer is sure enough to report. `code` is stable (UPPER_SNAKE) so memory fingerprints and
 * tests can rely on it; `evidence` holds the raw proof a human would want to see (reason strings, event counts,
 * exit codes, the decisive log line), already scrubbed of secrets.
 */
export const FindingSchema = z.object({
  code: z.string().regex(/^[A-Z][A-Z0-9_]*$/),
  analyzer: z.string(),
  domain: DomainSchema,
  severity: SeveritySchema,
  resource: ResourceRefSchema,
  message: z.string(),
  evidence: z.array(z.string()),
  confidence: z.number().min(0).max(1),
  /** Other resources this finding is causally tied to (the PVC a pod waits on, the Service a Route targets). */
  related: z.array(ResourceRefSchema).default([]),
  /** Short remediation hint keys the templates' next-action catalogue understands. */
  remediation: z.array(z.string()).default([]),
  /**
   * The entity a person must change to end this fault (the Deployment behind a crashing pod, the NetworkPolicy
   * behind a refused connection), when it is not `resource` itself.
   */
  owner: ResourceRefSchema.optional(),
  /** Set when the fault is history: its pod is gone, or its condition has cleared since. Never a root cause. */
  stale: z.string().optional(),
  /** What to change in the owner (or the resource) to end the fault, when the analyzer knows it precisely. */
  change: z.string().optional(),
  /** Other objects where the same fault could legitimately be fixed (lower the Deployment's limit, not the LimitRange). */
  alternatives: z.array(z.object({ resource: ResourceRefSchema, change: z.string() })).optional(),
});
export type Finding = z.infer<typeof FindingSchema>;
export type FindingInput = z.input<typeof FindingSchema>;

/** One order of severities for everything that sorts or compares findings. */
export const SEVERITY_ORDER: Readonly<Record<Severity, number>> = {
  info: 0,
  low: 1,
  medium: 2,
  high: 3,
  critical: 4,
};

export function refKey(ref: ResourceRef): string {
  return `${ref.kind}|${ref.namespace ?? ''}|${ref.name}`;
}

export function findingKey(f: Pick<Finding, 'code' | 'resource'>): string {
  return `${f.code}|${refKey(f.resource)}`;
}

/** Total order on findings: worst first, then most certain, then by code and resource so output never wobbles. */
export function compareFindings(a: Finding, b: Finding): number {
  return (
    SEVERITY_ORDER[b.severity] - SEVERITY_ORDER[a.severity] ||
    b.confidence - a.confidence ||
    byCodePoint(a.code, b.code) ||
    byCodePoint(refKey(a.resource), refKey(b.resource)) ||
    byCodePoint(a.message, b.message)
  );
}
