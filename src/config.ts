import { readFileSync } from 'node:fs';
import * as z from 'zod';
import {
  DEFAULT_EXTENSION_PORT,
  EXTENSION_PORT_VARIABLE,
  type ExtensionAccess,
  ParametersExtensionError,
  parametersExtension,
} from './aws-parameters/extension.js';
import { ENV } from './env-names.js';
import { parsePolicyText } from './policy/channel-policy.js';
import type { PolicyConfig } from './policy/policy-source.js';

/**
 * Configuration of every calmops function, read from the environment once at cold start. Each function parses only
 * the sections it needs, so the cluster reader (which has no table) never fails over a missing table name. Every bad
 * variable is reported in one ConfigError, so a broken deployment is fixed in one round instead of one per variable.
 */

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly problems: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(`Invalid calmops configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`, options);
  }
}

const CONFIG_SECTIONS = ['table', 'stateMachines', 'slack', 'clusters', 'policy', 'timeouts', 'aws', 'alerts'] as const;
export type ConfigSection = (typeof CONFIG_SECTIONS)[number];

const ArnSchema = z.string().regex(/^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:[A-Za-z0-9_-]{1,80}$/, {
  message: 'must be a Step Functions state machine ARN',
});
const SecretArnSchema = z.string().regex(/^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$/, {
  message: 'must be a Secrets Manager secret ARN',
});
const Seconds = (fallback: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, { message: 'must be a whole number of seconds' })
    .transform(Number)
    .pipe(z.number().int().min(1).max(31_536_000))
    .optional()
    .transform((v) => v ?? fallback);

const ClusterEntrySchema = z.union([
  z.strictObject({ kubeconfigFile: z.string().min(1) }),
  z.strictObject({ kubeconfigSecretArn: SecretArnSchema }),
]);
/** A cluster's kubeconfig: a file, or a secret read through the Parameters and Secrets extension. */
export type ClusterEntry = { kubeconfigFile: string } | { kubeconfigSecretArn: string; extension: ExtensionAccess };

/** SSM's own rule for parameter names (a path of at most 15 levels, or a plain name). */
const ParameterNameSchema = z
  .string()
  .max(1011)
  .regex(/^(\/[A-Za-z0-9_.-]+){1,15}$|^[A-Za-z0-9_.-]+$/, {
    message: 'must be an SSM parameter name such as /calmops/policy',
  })
  .refine((name) => !/^\/?(aws|ssm)/i.test(name), { message: 'names starting with aws or ssm are reserved by SSM' });

const ClusterNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,128}$/, { message: 'cluster names use letters, digits and . _ : -' });
const ClustersSchema = z.record(ClusterNameSchema, ClusterEntrySchema).refine((m) => Object.keys(m).length > 0, {
  message: 'name at least one cluster',
});

interface TableConfig {
  tableName: string;
}
export interface StateMachinesConfig {
  diagnosticArn: string;
  reviewArn: string;
  breakGlassArn: string;
}
/** Either credentials straight from the environment (local stacks) or the secret that holds them (AWS). */
export type SlackConfig = {
  apiUrl?: string;
} & (
  | { source: 'env'; signingSecret: string; botToken: string }
  | { source: 'secret'; secretArn: string; extension: ExtensionAccess }
);
interface ClustersConfig {
  clusters: Readonly<Record<string, ClusterEntry>>;
}
export interface TimeoutsConfig {
  idleTimeoutSeconds: number;
  approvalTimeoutSeconds: number;
  /** ADR-005's minimum time in a state before the evidence may move a session on; the diagnosis default when unset. */
  minTimeInStateSeconds?: number;
}
/**
 * The bearer token alert senders must present: straight from the environment (local stacks), from a secret (AWS), or
 * neither, and then the alert route refuses every request.
 */
export type AlertsConfig =
  | { source: 'none' }
  | { source: 'env'; token: string }
  | { source: 'secret'; secretArn: string; extension: ExtensionAccess };
/** Only the SDK's own standard variables; endpoints select the local stand-ins. */
export interface AwsConfig {
  region: string;
  dynamodbEndpoint?: string;
  sfnEndpoint?: string;
}

interface CalmopsConfig {
  table: TableConfig;
  stateMachines: StateMachinesConfig;
  slack: SlackConfig;
  clusters: ClustersConfig;
  policy: PolicyConfig;
  timeouts: TimeoutsConfig;
  aws: AwsConfig;
  alerts: AlertsConfig;
}

export type ConfigFor<S extends ConfigSection> = Pick<CalmopsConfig, S>;

type Env = Readonly<Record<string, string | undefined>>;

function issues(variable: string, error: z.ZodError): string[] {
  return error.issues.map((i) => `${variable}${i.path.length > 0 ? `.${i.path.join('.')}` : ''}: ${i.message}`);
}

function value(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

const PortSchema = z
  .string()
  .regex(/^\d+$/, { message: 'must be a port number' })
  .transform(Number)
  .pipe(z.number().int().min(1).max(65_535));

/**
 * Where the Parameters and Secrets extension listens: CALMOPS_PARAMETERS_SECRETS_ENDPOINT when set, otherwise the
 * extension's own port variable on localhost, as Lambda runs it. Read only by the sections that name a secret or a
 * parameter, so a stack whose credentials come from the environment never has to set it.
 */
function extensionAccess(env: Env, problems: string[]): ExtensionAccess {
  const sessionToken = value(env, 'AWS_SESSION_TOKEN');
  const withToken = (endpoint: string): ExtensionAccess =>
    sessionToken === undefined ? { endpoint } : { endpoint, sessionToken };
  const raw = value(env, ENV.parametersSecretsEndpoint);
  if (raw !== undefined) {
    const parsed = z.url({ protocol: /^https?$/ }).safeParse(raw);
    if (parsed.success) return withToken(parsed.data.replace(/\/+$/, ''));
    problems.push(`${ENV.parametersSecretsEndpoint}: must be an http(s) URL such as http://localhost:2773`);
    return withToken(raw);
  }
  const port = PortSchema.optional().safeParse(value(env, EXTENSION_PORT_VARIABLE));
  if (!port.success) problems.push(...issues(EXTENSION_PORT_VARIABLE, port.error));
  return withToken(`http://localhost:${(port.success ? port.data : undefined) ?? DEFAULT_EXTENSION_PORT}`);
}

const readers: { [S in ConfigSection]: (env: Env, problems: string[]) => CalmopsConfig[S] | undefined } = {
  table(env) {
    return { tableName: value(env, ENV.table) ?? 'calmops' };
  },
  stateMachines(env, problems) {
    const out: Partial<StateMachinesConfig> = {};
    const names = {
      diagnosticArn: ENV.diagnosticStateMachineArn,
      reviewArn: ENV.reviewStateMachineArn,
      breakGlassArn: ENV.breakGlassStateMachineArn,
    } as const;
    for (const [field, variable] of Object.entries(names) as [keyof StateMachinesConfig, string][]) {
      const raw = value(env, variable);
      if (raw === undefined) {
        problems.push(`${variable}: required (the ARN of the ${field.replace('Arn', '')} state machine)`);
        continue;
      }
      const parsed = ArnSchema.safeParse(raw);
      if (parsed.success) out[field] = parsed.data;
      else problems.push(...issues(variable, parsed.error));
    }
    return out as StateMachinesConfig;
  },
  slack(env, problems) {
    const apiUrlRaw = value(env, ENV.slackApiUrl);
    let apiUrl: string | undefined;
    if (apiUrlRaw !== undefined) {
      const parsed = z.url({ protocol: /^https?$/ }).safeParse(apiUrlRaw);
      if (parsed.success) apiUrl = parsed.data.endsWith('/') ? parsed.data : `${parsed.data}/`;
      else problems.push(`${ENV.slackApiUrl}: must be an http(s) URL such as https://slack.com/api/`);
    }
    const base = apiUrl === undefined ? {} : { apiUrl };
    const secretArn = value(env, ENV.slackSecretArn);
    const signingSecret = value(env, ENV.slackSigningSecret);
    const botToken = value(env, ENV.slackBotToken);
    if (signingSecret !== undefined || botToken !== undefined) {
      if (signingSecret === undefined)
        problems.push(`${ENV.slackSigningSecret}: required together with ${ENV.slackBotToken}`);
      if (botToken === undefined)
        problems.push(`${ENV.slackBotToken}: required together with ${ENV.slackSigningSecret}`);
      // The token itself is never echoed: only its shape is judged.
      else if (!/^xox[a-z]-/.test(botToken)) problems.push(`${ENV.slackBotToken}: must be a bot token (xoxb-…)`);
      return { ...base, source: 'env', signingSecret: signingSecret ?? '', botToken: botToken ?? '' };
    }
    if (secretArn !== undefined) {
      const parsed = SecretArnSchema.safeParse(secretArn);
      if (!parsed.success) problems.push(...issues(ENV.slackSecretArn, parsed.error));
      return { ...base, source: 'secret', secretArn, extension: extensionAccess(env, problems) };
    }
    problems.push(
      `${ENV.slackBotToken} and ${ENV.slackSigningSecret}, or ${ENV.slackSecretArn}: one of them is required`,
    );
    return undefined;
  },
  clusters(env, problems) {
    const raw = value(env, ENV.clusters);
    if (raw === undefined) {
      const kubeconfig = value(env, ENV.kubeconfig);
      if (kubeconfig === undefined) {
        problems.push(
          `${ENV.clusters}: required when ${ENV.kubeconfig} is not set (JSON map of cluster name to kubeconfig)`,
        );
        return undefined;
      }
      return { clusters: { default: { kubeconfigFile: kubeconfig } } };
    }
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      problems.push(`${ENV.clusters}: not valid JSON (expected {"name": {"kubeconfigFile": "..."}})`);
      return undefined;
    }
    const parsed = ClustersSchema.safeParse(json);
    if (!parsed.success) {
      problems.push(...issues(ENV.clusters, parsed.error));
      return undefined;
    }
    let extension: ExtensionAccess | undefined;
    const clusters = Object.entries(parsed.data).map(([name, entry]): [string, ClusterEntry] => {
      if ('kubeconfigFile' in entry) return [name, entry];
      extension ??= extensionAccess(env, problems);
      return [name, { ...entry, extension }];
    });
    return { clusters: Object.fromEntries(clusters) };
  },
  policy(env, problems) {
    const inline = value(env, ENV.policyJson);
    const file = value(env, ENV.policyFile);
    const parameter = value(env, ENV.policyParameter);
    if (parameter !== undefined) {
      if (inline !== undefined || file !== undefined) {
        problems.push(`${ENV.policyParameter}: set it or ${ENV.policyFile} / ${ENV.policyJson}, not both`);
        return undefined;
      }
      const parsed = ParameterNameSchema.safeParse(parameter);
      if (parsed.success) {
        return { policy: undefined, parameter: { name: parsed.data, extension: extensionAccess(env, problems) } };
      }
      problems.push(...issues(ENV.policyParameter, parsed.error));
      return undefined;
    }
    try {
      if (inline !== undefined) return { policy: parsePolicyText(inline, { source: ENV.policyJson }) };
      if (file !== undefined) return { policy: parsePolicyText(readFileSync(file, 'utf8'), { source: file }) };
    } catch (error) {
      const variable = inline !== undefined ? ENV.policyJson : ENV.policyFile;
      problems.push(`${variable}: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
    return { policy: undefined };
  },
  timeouts(env, problems) {
    const idle = Seconds(14_400).safeParse(value(env, ENV.idleTimeoutSeconds));
    const approval = Seconds(3_600).safeParse(value(env, ENV.approvalTimeoutSeconds));
    if (!idle.success) problems.push(...issues(ENV.idleTimeoutSeconds, idle.error));
    if (!approval.success) problems.push(...issues(ENV.approvalTimeoutSeconds, approval.error));
    const minTime = z
      .string()
      .trim()
      .regex(/^\d+$/, { message: 'must be a whole number of seconds' })
      .transform(Number)
      .pipe(z.number().int().min(0).max(3_600))
      .optional()
      .safeParse(value(env, ENV.minTimeInStateSeconds));
    if (!minTime.success) problems.push(...issues(ENV.minTimeInStateSeconds, minTime.error));
    if (!idle.success || !approval.success || !minTime.success) return undefined;
    return {
      idleTimeoutSeconds: idle.data,
      approvalTimeoutSeconds: approval.data,
      ...(minTime.data === undefined ? {} : { minTimeInStateSeconds: minTime.data }),
    };
  },
  aws(env, problems) {
    const region = value(env, 'AWS_REGION') ?? value(env, 'AWS_DEFAULT_REGION') ?? 'us-east-1';
    const out: AwsConfig = { region };
    for (const [field, variable] of [
      ['dynamodbEndpoint', 'AWS_ENDPOINT_URL_DYNAMODB'],
      ['sfnEndpoint', 'AWS_ENDPOINT_URL_SFN'],
    ] as const) {
      const raw = value(env, variable);
      if (raw === undefined) continue;
      if (z.url({ protocol: /^https?$/ }).safeParse(raw).success) out[field] = raw;
      else problems.push(`${variable}: must be an http(s) URL`);
    }
    return out;
  },
  alerts(env, problems) {
    const token = value(env, ENV.alertsToken);
    const secretArn = value(env, ENV.alertsTokenSecretArn);
    if (token !== undefined && secretArn !== undefined) {
      problems.push(`${ENV.alertsToken}: set it or ${ENV.alertsTokenSecretArn}, not both`);
      return undefined;
    }
    if (token !== undefined) {
      // The token itself is never echoed: only its shape is judged.
      const parsed = AlertsTokenSchema.safeParse(token);
      if (parsed.success) return { source: 'env', token: parsed.data };
      problems.push(...issues(ENV.alertsToken, parsed.error));
      return undefined;
    }
    if (secretArn !== undefined) {
      const parsed = SecretArnSchema.safeParse(secretArn);
      const extension = extensionAccess(env, problems);
      if (parsed.success) return { source: 'secret', secretArn: parsed.data, extension };
      problems.push(...issues(ENV.alertsTokenSecretArn, parsed.error));
      return undefined;
    }
    return { source: 'none' };
  },
};

/** Long enough that guessing is hopeless; Alertmanager sends it as `Authorization: Bearer <token>`. */
const AlertsTokenSchema = z
  .string()
  .min(32, { message: 'must be at least 32 characters' })
  .max(4096)
  .regex(/^[\x21-\x7e]+$/, { message: 'printable ASCII without spaces' });

/**
 * Parses the named sections from `env`. Throws ConfigError listing every problem in every requested section.
 * Secrets are not resolved here (that needs the network): see resolveSlackCredentials.
 */
export function loadConfig<const S extends ConfigSection>(env: Env, sections: readonly S[]): ConfigFor<S> {
  const problems: string[] = [];
  const out: Partial<CalmopsConfig> = {};
  for (const section of new Set(sections)) {
    const read = readers[section] as (env: Env, problems: string[]) => unknown;
    const result = read(env, problems);
    if (result !== undefined) (out as Record<string, unknown>)[section] = result;
  }
  // Every section that names a secret or a parameter judges the extension's endpoint: one mistake, one line.
  if (problems.length > 0) throw new ConfigError([...new Set(problems)]);
  return out as ConfigFor<S>;
}

export interface SlackCredentials {
  signingSecret: string;
  botToken: string;
}

const SlackSecretSchema = z.object({ signingSecret: z.string().min(1), botToken: z.string().min(1) });

/** A secret's text through the extension, or a ConfigError naming the variable that points at it and the reason. */
async function readSecret(variable: string, secretArn: string, extension: ExtensionAccess): Promise<string> {
  try {
    return await parametersExtension(extension).secret(secretArn);
  } catch (error) {
    const reason = error instanceof ParametersExtensionError ? error.message : 'the secret could not be read';
    throw new ConfigError([`${variable}: ${reason}`], { cause: error });
  }
}

/**
 * Parses a secret's text as JSON. The parser's own message quotes the text it choked on, so neither it nor the
 * parser's error goes anywhere: the caller says what shape was expected instead.
 */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The Slack credentials: from the environment locally, from Secrets Manager through the Parameters and Secrets
 * extension (which caches them for five minutes) in AWS.
 */
export async function resolveSlackCredentials(slack: SlackConfig): Promise<SlackCredentials> {
  if (slack.source === 'env') return { signingSecret: slack.signingSecret, botToken: slack.botToken };
  const text = await readSecret(ENV.slackSecretArn, slack.secretArn, slack.extension);
  const parsed = SlackSecretSchema.safeParse(parseJson(text));
  if (!parsed.success) {
    throw new ConfigError([`${ENV.slackSecretArn}: the secret must be JSON {"signingSecret": "…", "botToken": "…"}`]);
  }
  return parsed.data;
}

const AlertsSecretSchema = z.union([
  AlertsTokenSchema,
  z.object({ token: AlertsTokenSchema }).transform((o) => o.token),
]);

/**
 * The alert senders' token: from the environment locally, from Secrets Manager through the extension in AWS, where
 * the secret holds the token as plain text or as JSON {"token": "…"}. Undefined when none is configured. Resolved
 * when an alert arrives, not at start, so a secret that cannot be read affects the alert route only, never Slack's.
 */
export async function resolveAlertsToken(alerts: AlertsConfig): Promise<string | undefined> {
  if (alerts.source === 'none') return undefined;
  if (alerts.source === 'env') return alerts.token;
  const text = (await readSecret(ENV.alertsTokenSecretArn, alerts.secretArn, alerts.extension)).trim();
  const parsed = AlertsSecretSchema.safeParse(text.startsWith('{') ? (parseJson(text) ?? text) : text);
  if (!parsed.success) {
    throw new ConfigError([
      `${ENV.alertsTokenSecretArn}: the secret must hold the token (at least 32 printable characters), as text or as JSON {"token": "…"}`,
    ]);
  }
  return parsed.data;
}

/** A cluster's kubeconfig as the reader takes it: a file path, or the YAML held in a secret. */
export async function resolveKubeconfig(entry: ClusterEntry): Promise<{ file: string } | { yaml: string }> {
  if ('kubeconfigFile' in entry) return { file: entry.kubeconfigFile };
  const text = await readSecret(ENV.clusters, entry.kubeconfigSecretArn, entry.extension);
  if (text.trim() === '') {
    throw new ConfigError([`${ENV.clusters}: a kubeconfig secret must hold the kubeconfig YAML as text`]);
  }
  return { yaml: text };
}
