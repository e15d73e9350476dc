import * as z from 'zod';
import { DomainSchema } from '../triage/envelope/index.js';
import { TOOL_CLASSES } from './state-machine.js';

/** What a message in the incident thread asks for, once classified. */
const REQUEST_KINDS = [
  'read',
  'write',
  'dangerous',
  'hypothesis',
  'confirm-root-cause',
  'resolved',
  'break-glass',
  'handoff',
  'chat',
] as const;
const RequestKindSchema = z.enum(REQUEST_KINDS);

const RequestTargetSchema = z.object({
  /** Canonical lowercase plural (`pods`, `persistentvolumeclaims`), or the word used for unknown kinds. */
  kind: z.string(),
  name: z.string().optional(),
});
export type RequestTarget = z.infer<typeof RequestTargetSchema>;

const UserRequestSchema = z.object({
  kind: RequestKindSchema,
  /** For read/write/dangerous: how the gate treats it. */
  toolClass: z.enum(TOOL_CLASSES).optional(),
  /** Normalised verb: `get`, `logs`, `rollout restart`, `adm drain`, `scale`, `delete`, `affirm`, … */
  verb: z.string(),
  resource: RequestTargetSchema.optional(),
  namespace: z.string().optional(),
  allNamespaces: z.boolean().default(false),
  domain: DomainSchema.optional(),
  source: z.enum(['command', 'natural-language']),
  /** Why the request got its class (`--force`, `compound command (&&)`, `scales to zero replicas`, …). */
  reasons: z.array(z.string()).default([]),
  /** Impersonation, sudo, RBAC grants, minting tokens, logging in, break-glass: permission escalation. */
  escalation: z.boolean().default(false),
  /** The command could not be read cleanly (unbalanced quotes); reads are not run until it is fixed. */
  malformed: z.boolean().default(false),
  /** Tokenised command words (credentials already redacted). */
  argv: z.array(z.string()).optional(),
  /** The single commands of a compound command line, each classified on its own. */
  parts: z.array(z.lazy((): z.ZodType<unknown> => UserRequestSchema)).optional(),
  hypothesisRank: z.number().int().min(1).optional(),
  hypothesisText: z.string().optional(),
  handoffDomain: DomainSchema.optional(),
  replicas: z.number().int().min(0).optional(),
  /** The request text with Slack markup decoded and credentials redacted. */
  raw: z.string(),
});
export type UserRequest = Omit<z.infer<typeof UserRequestSchema>, 'parts'> & { parts?: UserRequest[] };
