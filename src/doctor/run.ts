import { type ClusterEntry, ConfigError, loadConfig } from '../config.js';
import { loadTemplates } from '../triage/templates/index.js';
import { checkCluster, type KubeconfigLocation } from './cluster-check.js';
import { checkPolicy, checkPolicyReferences, type PolicyLocation, type ReadParameter } from './policy-check.js';
import { type CheckResult, type DoctorReport, fail, report } from './report.js';
import { checkSlack, type ReadSecret, type SlackSource } from './slack-check.js';

/**
 * `calmops doctor`: checks an install end to end from where it runs (the Slack token, the secrets, each cluster's
 * kubeconfig and RBAC, the channel policy), each check answering pass or fail with the fix.
 */

export interface DoctorTarget {
  slack: SlackSource | { kind: 'missing'; problem: string };
  /** Slack Web API base URL (SLACK_API_URL), for the local stand-in. */
  slackApiUrl?: string;
  clusters: Record<string, KubeconfigLocation> | { problem: string };
  policy: PolicyLocation;
  /** The namespace whose rules the RBAC check reviews (cluster-wide grants show in every namespace). */
  namespace: string;
}

export interface DoctorDeps {
  readSecret: ReadSecret;
  readParameter: ReadParameter;
}

/** The deployed stack's names: `<stack>/slack`, `<stack>/kubeconfig/<cluster>`, `/<stack>/policy`. */
export function stackTarget(
  stack: string,
  clusters: readonly string[],
  options: { policyFile?: string; slackApiUrl?: string; namespace: string },
): DoctorTarget {
  return {
    slack: { kind: 'secret', secretId: `${stack}/slack` },
    ...(options.slackApiUrl === undefined ? {} : { slackApiUrl: options.slackApiUrl }),
    clusters: Object.fromEntries(clusters.map((c) => [c, { kind: 'secret', secretId: `${stack}/kubeconfig/${c}` }])),
    policy:
      options.policyFile === undefined
        ? { kind: 'parameter', name: `/${stack}/policy` }
        : { kind: 'file', file: options.policyFile },
    namespace: options.namespace,
  };
}

type Env = Readonly<Record<string, string | undefined>>;

const location = (entry: ClusterEntry): KubeconfigLocation =>
  'kubeconfigFile' in entry
    ? { kind: 'file', file: entry.kubeconfigFile }
    : { kind: 'secret', secretId: entry.kubeconfigSecretArn };

/** The configuration the functions themselves would read from this environment (as `npm start` sets it). */
export function environmentTarget(env: Env, options: { policyFile?: string; namespace: string }): DoctorTarget {
  let slack: DoctorTarget['slack'];
  let slackApiUrl: string | undefined;
  try {
    const config = loadConfig(env, ['slack']).slack;
    slackApiUrl = config.apiUrl;
    slack =
      config.source === 'env'
        ? { kind: 'env', botToken: config.botToken }
        : { kind: 'secret', secretId: config.secretArn };
  } catch (error) {
    slack = { kind: 'missing', problem: error instanceof ConfigError ? error.problems.join('; ') : String(error) };
  }
  let clusters: DoctorTarget['clusters'];
  try {
    const config = loadConfig(env, ['clusters']).clusters.clusters;
    clusters = Object.fromEntries(Object.entries(config).map(([name, entry]) => [name, location(entry)]));
  } catch (error) {
    clusters = { problem: error instanceof ConfigError ? error.problems.join('; ') : String(error) };
  }
  const value = (name: string) => (env[name]?.trim() ? env[name]?.trim() : undefined);
  const policy: PolicyLocation =
    options.policyFile !== undefined
      ? { kind: 'file', file: options.policyFile }
      : value('CALMOPS_POLICY_JSON') !== undefined
        ? { kind: 'inline', text: value('CALMOPS_POLICY_JSON') as string, name: 'CALMOPS_POLICY_JSON' }
        : value('CALMOPS_POLICY') !== undefined
          ? { kind: 'file', file: value('CALMOPS_POLICY') as string }
          : value('CALMOPS_POLICY_PARAMETER') !== undefined
            ? { kind: 'parameter', name: value('CALMOPS_POLICY_PARAMETER') as string }
            : { kind: 'none' };
  return {
    slack,
    ...(slackApiUrl === undefined ? {} : { slackApiUrl }),
    clusters,
    policy,
    namespace: options.namespace,
  };
}

export async function runDoctor(target: DoctorTarget, deps: DoctorDeps): Promise<DoctorReport> {
  const checks: CheckResult[] = [];
  const slack =
    target.slack.kind === 'missing'
      ? {
          results: [
            fail(
              'slack-token',
              'configuration',
              target.slack.problem,
              'run with --stack <stack name> for a deployed stack, or set SLACK_BOT_TOKEN (and SLACK_API_URL locally)',
            ),
          ],
        }
      : await checkSlack(target.slack, {
          readSecret: deps.readSecret,
          ...(target.slackApiUrl === undefined ? {} : { apiUrl: target.slackApiUrl }),
        });
  checks.push(...slack.results);

  let clusterNames: string[] | undefined;
  if ('problem' in target.clusters) {
    checks.push(
      fail(
        'kubeconfig',
        'configuration',
        String(target.clusters.problem),
        'run with --stack <stack name> --clusters <names>, or set KUBECONFIG / CALMOPS_CLUSTERS',
      ),
    );
  } else {
    clusterNames = Object.keys(target.clusters);
    // One at a time: a person reads them in order, and a cluster that hangs shows where it hangs.
    for (const [name, where] of Object.entries(target.clusters)) {
      checks.push(...(await checkCluster(name, where, { readSecret: deps.readSecret, namespace: target.namespace })));
    }
  }

  const policy = await checkPolicy(target.policy, {
    readParameter: deps.readParameter,
    knownIntents: loadTemplates().ids(),
    ...(clusterNames === undefined ? {} : { clusters: clusterNames }),
  });
  checks.push(...policy.results);
  if (policy.policy !== undefined && 'client' in slack && slack.client !== undefined) {
    checks.push(...(await checkPolicyReferences(policy.policy, slack.client)));
  }
  return report(checks);
}

/**
 * Secrets Manager and SSM through Powertools Parameters: the doctor runs on an operator's machine, where there is no
 * Parameters and Secrets extension for it to ask as the functions do.
 */
export const awsDeps: DoctorDeps = {
  async readSecret(secretId) {
    const { getSecret } = await import('@aws-lambda-powertools/parameters/secrets');
    const value = await getSecret(secretId, { maxAge: 0 });
    if (typeof value === 'string') return value;
    if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
    throw new Error('the secret has no value');
  },
  async readParameter(name) {
    const { SSMProvider } = await import('@aws-lambda-powertools/parameters/ssm');
    const value = await new SSMProvider().get(name, { maxAge: 0 });
    if (typeof value !== 'string') throw new Error('the parameter has no value');
    return value;
  },
};
