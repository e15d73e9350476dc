import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import * as z from 'zod';

/**
 * Deployment settings, read from CDK context (`cdk.json` or `-c key=value`). Values given on the command line
 * arrive as strings, so every field accepts its string spelling too. A bad value stops the synth with a message
 * that names the context key.
 */

const RETENTION_DAYS = new Set<number>(
  Object.values(RetentionDays).filter((v): v is number => typeof v === 'number' && v !== RetentionDays.INFINITE),
);

const CLUSTER_NAME = /^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/;

const booleanFlag = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);
const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const clusterList = z
  .union([z.array(z.string()), z.string()])
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((name) => name.trim()).filter((name) => name !== ''))
  .pipe(
    z
      .array(z.string().regex(CLUSTER_NAME, 'cluster names are lowercase letters, digits and dashes (at most 40)'))
      .min(1, 'name at least one cluster')
      .refine((names) => new Set(names).size === names.length, 'a cluster is listed twice'),
  );

export const SettingsSchema = z.object({
  /** The CloudFormation stack name; also the prefix of the secret and state machine names. */
  stackName: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9-]{0,39}$/, 'letters, digits and dashes, starting with a letter (at most 40)')
    .default('calmops'),
  /** Cluster names; each gets its own kubeconfig secret. Comma-separated on the command line. */
  clusters: clusterList.default(['default']),
  /** Path to the channel policy (YAML or JSON), validated at synth and passed to the functions. */
  policyFile: z.string().min(1).optional(),
  /** Refuse to delete the table (CloudFormation deletion protection). */
  tableDeletionProtection: booleanFlag.default(true),
  /** `aws-managed` (the DynamoDB-owned KMS key in the account) or `customer-managed` (a key this stack creates). */
  tableEncryption: z.enum(['aws-managed', 'customer-managed']).default('aws-managed'),
  /** Retention of every log group (functions, state machines, API access logs), in days. */
  logRetentionDays: integer(1, 3653)
    .refine((d) => RETENTION_DAYS.has(d), {
      message: `must be one of CloudWatch Logs' retention periods: ${[...RETENTION_DAYS].join(', ')}`,
    })
    .default(30),
  /** Email address subscribed to a new alarm topic. */
  alarmEmail: z.email().optional(),
  /** An existing SNS topic for alarm actions (instead of, or besides, alarmEmail). */
  alarmTopicArn: z
    .string()
    .regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/, 'must be an SNS topic ARN')
    .optional(),
  /** How long a quiet session keeps its execution before it ends (it resumes on the next message). */
  idleTimeoutSeconds: integer(60, 7 * 24 * 3600).default(14_400),
  /** How long an approval waits for a decision. */
  approvalTimeoutSeconds: integer(60, 7 * 24 * 3600).default(3_600),
});

export type Settings = z.infer<typeof SettingsSchema>;

/** Every context key the app reads; anything else under these names in cdk.json is a typo the user should see. */
export const CONTEXT_KEYS = Object.keys(SettingsSchema.shape) as (keyof Settings)[];

export class SettingsError extends Error {
  override readonly name = 'SettingsError';
}

/** Validate raw context values; `lookup` returns the value of one context key (undefined when unset). */
export function parseSettings(lookup: (key: string) => unknown): Settings {
  const raw: Record<string, unknown> = {};
  for (const key of CONTEXT_KEYS) {
    const value = lookup(key);
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = SettingsSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  context ${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new SettingsError(`Invalid calmops deployment settings:\n${lines.join('\n')}`, { cause: parsed.error });
  }
  return parsed.data;
}
