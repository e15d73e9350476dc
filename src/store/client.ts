import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ENV } from '../env-names.js';
import { DEFAULT_TABLE_NAME } from './table.js';

export interface StoreClientOptions {
  /**
   * Only for tests and tools that start their own DynamoDB. Everything else leaves this unset: the SDK then reads
   * the standard `AWS_ENDPOINT_URL_DYNAMODB`, so production and local stacks differ by environment alone.
   */
  endpoint?: string;
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  maxAttempts?: number;
  /** For tools that report an endpoint that does not answer rather than wait on it. */
  timeouts?: { connectionMs: number; requestMs: number };
}

/** The environment variable naming the table; the CDK stack sets it on every function. */
export const TABLE_NAME_ENV = ENV.table;

export function tableNameFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const name = env[TABLE_NAME_ENV]?.trim();
  return name === undefined || name === '' ? DEFAULT_TABLE_NAME : name;
}

/** The SDK's DynamoDB client, named here so that code outside the store never imports the SDK itself. */
export type DynamoClient = DynamoDBClient;

export function createDynamoClient(options: StoreClientOptions = {}): DynamoDBClient {
  return new DynamoDBClient({
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(options.region === undefined ? {} : { region: options.region }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
    ...(options.timeouts === undefined
      ? {}
      : {
          requestHandler: {
            connectionTimeout: options.timeouts.connectionMs,
            requestTimeout: options.timeouts.requestMs,
          },
        }),
  });
}

/**
 * The document client every repository takes. Undefined attributes are dropped rather than rejected so optional
 * fields can be passed through; zod validation before each write is what guards the shape.
 */
export function createDocumentClient(options: StoreClientOptions | DynamoDBClient = {}): DynamoDBDocumentClient {
  const base = options instanceof DynamoDBClient ? options : createDynamoClient(options);
  return DynamoDBDocumentClient.from(base, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    unmarshallOptions: { wrapNumbers: false },
  });
}

/** What every repository is constructed with. */
export interface StoreContext {
  client: DynamoDBDocumentClient;
  tableName: string;
}
