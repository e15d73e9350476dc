import { z } from 'zod';

export const DOMAINS = ['storage', 'compute', 'networking', 'platform'] as const;
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
});
export type Finding = z.infer<typeof FindingSchema>;
export type FindingInput = z.input<typeof FindingSchema>;
