import * as z from 'zod';
import { READABLE_KINDS } from '../../cluster/types.js';
import { DomainSchema } from '../envelope/findings.js';

/**
 * A triage template: one YAML file per intent under `templates/`, validated at load. Templates are data; the engine
 * gives them meaning. Values in `name`, `labelSelector`, `fieldSelector`, `container` and next-action commands may
 * use `{{namespace}}`, and inside `forEach` reads `{{item.<json path>}}` (an object from the earlier read) or, with
 * `each: container`, `{{pod}}` and `{{container}}`.
 */

const kebab = z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be kebab-case');

const ForEachSchema = z.object({
  /** Id of a read in an earlier round. */
  read: z.string(),
  /** Which of that read's objects to follow. */
  where: z
    .enum([
      'all',
      'pending',
      'not-running',
      'not-ready',
      'restarting',
      'waiting',
      'terminated-nonzero',
      'unbound',
      'one-per-workload',
      'second-of-workload',
    ])
    .default('all'),
  /** Iterate objects, or (for pods) each container of each selected pod. */
  each: z.enum(['object', 'container']).default('object'),
  /** Bound on fan-out so that one round never turns into hundreds of requests. */
  max: z.number().int().min(1).max(20).default(3),
});

export const ReadSpecSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9-]+$/),
    kind: z.union([z.enum(READABLE_KINDS), z.literal('logs')]),
    scope: z.enum(['namespace', 'cluster']).default('namespace'),
    /** A fixed namespace outside the triaged one (node Leases live in `kube-node-lease`). */
    namespace: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
      .optional(),
    /** Get one object by name instead of listing. */
    name: z.string().optional(),
    labelSelector: z.string().optional(),
    fieldSelector: z.string().optional(),
    maxItems: z.number().int().min(1).max(5000).default(500),
    /** The evidence type this read contributes to (completeness counts evidence types, not reads). */
    evidence: z.string(),
    forEach: ForEachSchema.optional(),
    /** For `kind: logs`. */
    container: z.string().optional(),
    previous: z.boolean().default(false),
    tailLines: z.number().int().min(1).max(1000).default(100),
  })
  .strict();
export type ReadSpec = z.infer<typeof ReadSpecSchema>;

const NextActionTemplateSchema = z
  .object({
    /** Finding code that makes this action relevant; `always` for actions that apply regardless. */
    when: z.string(),
    command: z.string(),
    type: z.enum(['read-only', 'mutating']),
    safety: z.enum(['SAFE', 'REQUIRES_APPROVAL', 'DANGEROUS']),
    description: z.string(),
    rationale: z.string().optional(),
  })
  .strict()
  .refine((a) => a.type === 'read-only' || a.safety !== 'SAFE', {
    message: 'a mutating action cannot be labelled SAFE',
  });

/** Remediation knowledge the plan synthesizer draws on, keyed by finding code. */
const RemediationSchema = z
  .object({
    when: z.string(),
    title: z.string(),
    steps: z
      .array(
        z
          .object({
            command: z.string(),
            mode: z.enum(['read', 'write']),
            rollback: z.string().optional(),
            description: z.string(),
            /** Files the person saves this read's output as; a later `-f FILE` may only use a file saved before it. */
            saves: z.array(z.string()).optional(),
          })
          .strict()
          .refine((s) => s.mode === 'read' || Boolean(s.rollback), { message: 'a write step needs a rollback' }),
      )
      .min(1),
  })
  .strict();

export const TemplateSchema = z
  .object({
    id: kebab,
    version: z.number().int().min(1),
    title: z.string(),
    domain: DomainSchema,
    description: z.string(),
    /** Phrases and words the entry dictionary matches against free text. */
    synonyms: z.array(z.string()).min(3),
    examples: z.array(z.string()).min(1),
    rounds: z
      .array(z.object({ name: z.string(), reads: z.array(ReadSpecSchema).min(1) }).strict())
      .min(1)
      .max(5),
    evidence: z
      .object({
        /** Evidence types that define completeness for this intent. */
        required: z.array(z.string()).min(1),
        threshold: z.number().min(0).max(1).default(0.8),
      })
      .strict(),
    analyzers: z.array(z.string()).min(1),
    nextActions: z.array(NextActionTemplateSchema),
    remediation: z.array(RemediationSchema).default([]),
    /** Other domains' specialists this intent commonly needs (ask-first handoff candidates). */
    relatedDomains: z.array(DomainSchema).default([]),
    promptSuggestions: z.array(z.string()).default([]),
    /** Names of the alert rules this intent explains (Alertmanager's `alertname`); an alert opens its session here. */
    alerts: z
      .array(
        z.string().regex(/^[A-Za-z_][A-Za-z0-9_:.-]{0,199}$/, 'must be an alert rule name such as KubePodCrashLooping'),
      )
      .default([]),
  })
  .strict();
export type TriageTemplate = z.infer<typeof TemplateSchema>;
