import { formatReport } from '../../doctor/report.js';
import { awsDeps, type DoctorDeps, environmentTarget, runDoctor, stackTarget } from '../../doctor/run.js';
import { isKubeLabel } from '../../limits.js';
import { type Paint, painterFor } from '../colour.js';
import { parseCommandLine } from '../flags.js';
import { type CliCommand, type CliIo, UsageError } from '../io.js';
import { OUTPUT_FLAGS, type OutputFormat, outputFormat, renderData } from '../output.js';
import { printable } from '../text.js';

export const USAGE = `Usage: calmops doctor [--stack NAME [--clusters a,b]] [--policy FILE] [--namespace NS] [-o text|json|yaml]

Checks an install from where it runs, and says for each check whether it passed and, if not, how to fix it:

  slack-secret       the Slack secret is readable and holds a signing secret and a bot token
  slack-token        Slack accepts the bot token (auth.test)
  kubeconfig         each cluster's kubeconfig loads under the cluster reader's safety rules
  rbac               each cluster's identity may get, list and watch what calmops reads, and nothing else:
                     no other verb, no Secrets (a SelfSubjectRulesReview)
  policy             the channel policy parses, names known intents and configured clusters, sets up a channel
  policy-references  Slack knows the policy's channels (with the bot in them) and user groups

  --stack NAME       check the deployed stack: secrets NAME/slack and NAME/kubeconfig/<cluster>, policy parameter
                     /NAME/policy (uses your AWS credentials and region)
  --clusters a,b     with --stack: the clusters deployed (default: default)
  --policy FILE      check this policy file instead of the configured one (before deploying it, say)
  --namespace NS     the namespace whose access the rbac check reviews (default: default)
  -o, --output F     text (default), json or yaml
  --json             the same as -o json

Without --stack it checks what this environment configures, as \`npm start\` does: SLACK_BOT_TOKEN or
CALMOPS_SLACK_SECRET_ARN (and SLACK_API_URL), KUBECONFIG or CALMOPS_CLUSTERS, CALMOPS_POLICY(_JSON|_PARAMETER).
Exit code 0 when every check passes, 1 when one fails.
`;

interface DoctorOptions {
  stack?: string;
  clusters: string[];
  policy?: string;
  namespace: string;
  output: OutputFormat;
}

function parse(args: string[]): DoctorOptions | 'help' {
  const { values } = parseCommandLine(
    args,
    {
      stack: { type: 'string' },
      clusters: { type: 'string' },
      policy: { type: 'string' },
      namespace: { type: 'string', short: 'n' },
      ...OUTPUT_FLAGS,
      help: { type: 'boolean', short: 'h' },
    },
    { command: 'doctor' },
  );
  if (values.help) return 'help';
  const output = outputFormat(values, ['text', 'json', 'yaml'], 'text');
  if (values.clusters !== undefined && values.stack === undefined) {
    throw new UsageError(
      '--clusters goes with --stack; without it the clusters come from KUBECONFIG or CALMOPS_CLUSTERS',
    );
  }
  if (values.stack !== undefined && !/^[A-Za-z][A-Za-z0-9-]{0,39}$/.test(values.stack)) {
    throw new UsageError('--stack: the stack name the deploy used (letters, digits and dashes)');
  }
  const clusters = (values.clusters ?? 'default')
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  if (clusters.some((c) => !/^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/.test(c))) {
    throw new UsageError('--clusters: cluster names as deployed (lowercase letters, digits and dashes)');
  }
  const namespace = values.namespace ?? 'default';
  if (!isKubeLabel(namespace)) throw new UsageError('--namespace: a namespace name');
  return {
    ...(values.stack === undefined ? {} : { stack: values.stack }),
    clusters,
    ...(values.policy === undefined ? {} : { policy: values.policy }),
    namespace,
    output,
  };
}

/** The command with its AWS access injectable, for tests. */
export async function doctor(args: string[], io: CliIo, deps: DoctorDeps): Promise<number> {
  const options = parse(args);
  if (options === 'help') {
    io.stdout(USAGE);
    return 0;
  }
  const common = {
    namespace: options.namespace,
    ...(options.policy === undefined ? {} : { policyFile: options.policy }),
  };
  const slackApiUrl = io.env['SLACK_API_URL']?.trim() || undefined;
  const target =
    options.stack === undefined
      ? environmentTarget(io.env, common)
      : stackTarget(options.stack, options.clusters, {
          ...common,
          ...(slackApiUrl === undefined ? {} : { slackApiUrl }),
        });
  const result = await runDoctor(target, deps);
  io.stdout(
    options.output === 'text'
      ? paintReport(printable(formatReport(result)), painterFor(io, 'stdout'))
      : renderData(options.output, result),
  );
  return result.ok ? 0 : 1;
}

/** The status word that opens each line of the report, coloured: PASS green, FAIL red, SKIP dim. */
function paintReport(text: string, paint: Paint): string {
  return text.replace(/^(PASS|FAIL|SKIP)(?= )/gm, (status) =>
    status === 'PASS'
      ? paint(status, 'green')
      : status === 'FAIL'
        ? paint(status, 'red', 'bold')
        : paint(status, 'dim'),
  );
}

/**
 * `calmops doctor`: is this install ready, and if not, what to do. Bad input is thrown as a UsageError, which the
 * command line answers with this usage and exit code 2.
 */
export const run: CliCommand = (args, io) => doctor(args, io, awsDeps);
