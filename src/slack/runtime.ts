import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendTaskSuccessCommand, SFNClient } from '@aws-sdk/client-sfn';
import { type AwsConfig, loadConfig, resolveSlackCredentials } from '../config.js';
import { createDocumentClient } from '../store/client.js';
import { createStore } from '../store/index.js';
import { loadTemplates } from '../triage/templates.js';
import { deliverInput } from '../workflow/deliver-input.js';
import { startSession } from '../workflow/sessions.js';
import { createSlackClient } from './client.js';
import type { SlackAppDeps, SlackLogger } from './deps.js';
import { GroupMembership, parsePolicy } from './policy.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Our logger interface over Powertools' (structured JSON in CloudWatch). */
export function powertoolsSlackLogger(logger: Logger): SlackLogger {
  return {
    debug: (message, detail) => logger.debug(message, detail ?? {}),
    info: (message, detail) => logger.info(message, detail ?? {}),
    warn: (message, detail) => logger.warn(message, detail ?? {}),
    error: (message, detail) => logger.error(message, detail ?? {}),
  };
}

/**
 * The SDK clients. In Lambda (`env` is process.env) the SDK's own defaults apply, including `AWS_ENDPOINT_URL_*`;
 * a local stack passes its own environment object, whose endpoints and placeholder credentials are applied
 * explicitly so several stacks can share one process. Built here rather than with the workflow's helper, which would
 * pull the whole workflow (memory, synthesis, metrics) into the Slack function's bundle and cold start.
 */
function awsClients(aws: AwsConfig, env: Env): { dynamo: DynamoDBClient; sfn: SFNClient } {
  const explicit = env !== process.env;
  const accessKeyId = env['AWS_ACCESS_KEY_ID'];
  const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'];
  const sessionToken = env['AWS_SESSION_TOKEN'];
  const credentials =
    explicit && accessKeyId && secretAccessKey
      ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) }
      : undefined;
  const common = { region: aws.region, ...(credentials ? { credentials } : {}) };
  return {
    dynamo: new DynamoDBClient({
      ...common,
      ...(explicit && aws.dynamodbEndpoint ? { endpoint: aws.dynamodbEndpoint } : {}),
    }),
    sfn: new SFNClient({ ...common, ...(explicit && aws.sfnEndpoint ? { endpoint: aws.sfnEndpoint } : {}) }),
  };
}

/**
 * Everything the Slack function needs, from the environment: table, state machines, Slack credentials (environment
 * or Secrets Manager), the channel policy and timeouts. Endpoints come only from the SDK's standard
 * `AWS_ENDPOINT_URL_*` variables, and `SLACK_API_URL` points the Web API client at the local stand-in.
 */
export async function createSlackDepsFromEnv(
  env: Env = process.env,
  options: { now?: () => Date; logger?: Logger } = {},
): Promise<SlackAppDeps> {
  const config = loadConfig(env, ['table', 'stateMachines', 'slack', 'policy', 'timeouts', 'aws']);
  const credentials = await resolveSlackCredentials(config.slack);
  const clients = awsClients(config.aws, env);
  const store = createStore({ client: createDocumentClient(clients.dynamo), tableName: config.table.tableName });
  const client = createSlackClient({
    token: credentials.botToken,
    ...(config.slack.apiUrl === undefined ? {} : { slackApiUrl: config.slack.apiUrl }),
    timeoutMs: 2500,
    retries: 2,
  });
  // Without a policy file no channel is set up: every request is answered with how to configure one.
  const policy = config.policy.policy ?? parsePolicy({});
  const templates = loadTemplates();
  const powertools = options.logger ?? new Logger({ serviceName: 'calmops-slack' });
  const now = options.now ?? (() => new Date());
  const workflowDeps = {
    store,
    sfn: clients.sfn,
    stateMachines: config.stateMachines,
    timeouts: config.timeouts,
    templates,
    logger: powertools,
    now,
  };
  return {
    signingSecret: credentials.signingSecret,
    botToken: credentials.botToken,
    client,
    store,
    policy,
    membership: new GroupMembership(client, policy.membershipCacheSeconds),
    registry: templates,
    approvalTimeoutSeconds: config.timeouts.approvalTimeoutSeconds,
    now,
    logger: powertoolsSlackLogger(powertools),
    workflow: {
      startSession: (input) => startSession(workflowDeps, input),
      deliverInput: (input) => deliverInput(workflowDeps, input),
      async sendTaskSuccess(taskToken, output) {
        await clients.sfn.send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify(output) }));
      },
    },
  };
}
