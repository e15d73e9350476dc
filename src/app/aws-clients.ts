import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import type { AwsConfig } from '../config.js';

export interface AwsClients {
  dynamo: DynamoDBClient;
  sfn: SFNClient;
}

/**
 * The SDK clients every function builds, in one place. In Lambda (env is process.env) the SDK's own defaults apply,
 * including `AWS_ENDPOINT_URL_*`; a local stack hands its own environment object, whose endpoints and placeholder
 * credentials are passed explicitly so several stacks can live in one process. Only the clients and the config type
 * are imported, so the Slack function's bundle does not pull in the workflow.
 */
export function createAwsClients(aws: AwsConfig, env: Readonly<Record<string, string | undefined>>): AwsClients {
  const explicit = env !== process.env;
  const credentials =
    explicit && env['AWS_ACCESS_KEY_ID'] && env['AWS_SECRET_ACCESS_KEY']
      ? {
          accessKeyId: env['AWS_ACCESS_KEY_ID'],
          secretAccessKey: env['AWS_SECRET_ACCESS_KEY'],
          ...(env['AWS_SESSION_TOKEN'] ? { sessionToken: env['AWS_SESSION_TOKEN'] } : {}),
        }
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
