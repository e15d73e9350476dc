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

/** A comma-separated list on the command line, an array in cdk.json; each id must have its AWS shape. */
const idList = (pattern: RegExp, what: string) =>
  z
    .union([z.array(z.string()), z.string()])
    .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((id) => id.trim()).filter((id) => id !== ''))
    .pipe(
      z
        .array(z.string().regex(pattern, `must be ${what} ids such as ${what}-0123456789abcdef0`))
        .min(1, `name at least one ${what} id`)
        .max(16)
        .refine((ids) => new Set(ids).size === ids.length, `a ${what} id is listed twice`),
    );

/** Interface endpoints the stack may create for the cluster reader in a VPC. */
const VPC_ENDPOINT_SERVICES = ['secretsmanager', 'sts', 'logs'] as const;
export type VpcEndpointService = (typeof VPC_ENDPOINT_SERVICES)[number];
/** What the cluster reader itself calls: Secrets Manager, for its kubeconfigs (EKS tokens are signed in-process). */
export const DEFAULT_VPC_ENDPOINTS: readonly VpcEndpointService[] = ['secretsmanager'];

const endpointList = z
  .union([z.array(z.string()), z.string()])
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter((s) => s !== ''))
  .pipe(
    z.union([
      z.tuple([z.literal('none')]).transform((): VpcEndpointService[] => []),
      z
        .array(z.enum(VPC_ENDPOINT_SERVICES, { message: `each one of ${VPC_ENDPOINT_SERVICES.join(', ')}, or none` }))
        .min(1)
        .transform((list) => [...new Set(list)]),
    ]),
  );

const SettingsSchema = z.object({
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
  /** Runs the cluster reader in this VPC, for API servers reachable only from inside it (private EKS, OpenShift). */
  vpcId: z
    .string()
    .regex(/^vpc-[0-9a-f]{8}([0-9a-f]{9})?$/, 'must be a VPC id such as vpc-0123456789abcdef0')
    .optional(),
  /** The reader's subnets (private ones, with a route to the API servers); required with vpcId. */
  subnetIds: idList(/^subnet-[0-9a-f]{8}([0-9a-f]{9})?$/, 'subnet').optional(),
  /** The reader's security groups; without them the stack creates one that allows all outbound traffic. */
  securityGroupIds: idList(/^sg-[0-9a-f]{8}([0-9a-f]{9})?$/, 'sg').optional(),
  /**
   * Interface endpoints to create in the reader's subnets: `secretsmanager` (default), `sts`, `logs`, or `none`
   * when the VPC has them already (or reaches AWS through a NAT).
   */
  vpcEndpoints: endpointList.optional(),
  /**
   * CloudWatch alarms whose name starts with this open incident threads like Alertmanager's alerts (an EventBridge
   * rule on their state changes invokes the Slack function); other alarms in the account are not calmops' business.
   */
  alarmNamePrefix: z
    .string()
    .regex(/^[\x21-\x7e][\x20-\x7e]{0,199}$/, 'printable ASCII, not starting with a space (at most 200 characters)')
    .default('calmops-'),
});

export type Settings = z.infer<typeof SettingsSchema>;

/** Settings that only mean something together: the VPC ones. */
function crossChecks(settings: Settings): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  if (settings.vpcId !== undefined && settings.subnetIds === undefined) {
    problems.push({ path: 'subnetIds', message: 'required with vpcId: the subnets the cluster reader runs in' });
  }
  if (settings.vpcId === undefined) {
    for (const key of ['subnetIds', 'securityGroupIds', 'vpcEndpoints'] as const) {
      if (settings[key] !== undefined) problems.push({ path: key, message: 'only takes effect with vpcId' });
    }
  }
  return problems;
}

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
  const problems = crossChecks(parsed.data);
  if (problems.length > 0) {
    const lines = problems.map((p) => `  context ${p.path}: ${p.message}`);
    throw new SettingsError(`Invalid calmops deployment settings:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
