import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  type DescribeTableCommandOutput,
  type DynamoDBClient,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { request } from './dynamo.js';
import { StoreRequestError, TableDefinitionMismatchError } from './errors.js';
import { TABLE_DEFINITION } from './table.js';

/** CreateTable input built from TABLE_DEFINITION, so tools creating the table match the deployed one. */
export function createTableInput(tableName: string): CreateTableCommandInput {
  const def = TABLE_DEFINITION;
  const attributes = new Map<string, 'S' | 'N' | 'B'>();
  for (const attr of [
    def.partitionKey,
    def.sortKey,
    ...def.globalSecondaryIndexes.flatMap((g) => [g.partitionKey, g.sortKey]),
  ]) {
    attributes.set(attr.name, attr.type);
  }
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType })),
    KeySchema: [
      { AttributeName: def.partitionKey.name, KeyType: 'HASH' },
      { AttributeName: def.sortKey.name, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: def.globalSecondaryIndexes.map((gsi) => ({
      IndexName: gsi.indexName,
      KeySchema: [
        { AttributeName: gsi.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: gsi.sortKey.name, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: gsi.projectionType },
    })),
  };
}

/** Differences between an existing table and TABLE_DEFINITION, as readable sentences; empty when they match. */
export function tableDifferences(table: NonNullable<DescribeTableCommandOutput['Table']>, tableName: string): string[] {
  const want = createTableInput(tableName);
  const problems: string[] = [];
  const keyText = (ks: { AttributeName?: string | undefined; KeyType?: string | undefined }[] | undefined) =>
    (ks ?? []).map((k) => `${k.AttributeName}:${k.KeyType}`).join(',');
  if (keyText(table.KeySchema) !== keyText(want.KeySchema)) {
    problems.push(`key schema is ${keyText(table.KeySchema)}, expected ${keyText(want.KeySchema)}`);
  }
  for (const gsi of want.GlobalSecondaryIndexes ?? []) {
    const have = table.GlobalSecondaryIndexes?.find((g) => g.IndexName === gsi.IndexName);
    if (have === undefined) {
      problems.push(`index ${gsi.IndexName} is missing`);
      continue;
    }
    if (keyText(have.KeySchema) !== keyText(gsi.KeySchema)) {
      problems.push(`index ${gsi.IndexName} keys are ${keyText(have.KeySchema)}, expected ${keyText(gsi.KeySchema)}`);
    }
    if (have.Projection?.ProjectionType !== gsi.Projection?.ProjectionType) {
      problems.push(
        `index ${gsi.IndexName} projects ${have.Projection?.ProjectionType}, expected ${gsi.Projection?.ProjectionType}`,
      );
    }
  }
  return problems;
}

/**
 * Creates the table from TABLE_DEFINITION unless it exists, waits until it is active and enables TTL where the
 * endpoint supports it. An existing table with different keys or indexes is reported, never altered: it may hold
 * data. Returns whether the table was created.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<{ created: boolean }> {
  const existing = await describe(client, tableName);
  let created = false;
  if (existing === undefined) {
    try {
      await client.send(new CreateTableCommand(createTableInput(tableName)));
      created = true;
    } catch (error) {
      // Another process created it between our describe and create.
      if (!(error instanceof Error && error.name === 'ResourceInUseException')) {
        throw new StoreRequestError('CreateTable', tableName, { cause: error });
      }
    }
  }
  await request('DescribeTable', tableName, () =>
    waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 1, maxDelay: 2 }, { TableName: tableName }),
  );
  const table = await describe(client, tableName);
  if (table === undefined) throw new TableDefinitionMismatchError(`Table ${tableName} vanished while being created`);
  const problems = tableDifferences(table, tableName);
  if (problems.length > 0) {
    throw new TableDefinitionMismatchError(
      `Table ${tableName} does not match the calmops table definition: ${problems.join('; ')}. ` +
        'Delete it (or point CALMOPS_TABLE elsewhere) so it can be created afresh.',
    );
  }
  if (created) await enableTtl(client, tableName);
  return { created };
}

async function describe(
  client: DynamoDBClient,
  tableName: string,
): Promise<NonNullable<DescribeTableCommandOutput['Table']> | undefined> {
  try {
    const out = await client.send(new DescribeTableCommand({ TableName: tableName }));
    return out.Table;
  } catch (error) {
    if (error instanceof Error && error.name === 'ResourceNotFoundException') return undefined;
    throw new StoreRequestError('DescribeTable', tableName, { cause: error });
  }
}

async function enableTtl(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TABLE_DEFINITION.ttlAttribute, Enabled: true },
      }),
    );
  } catch (error) {
    // Emulators without TTL support reject the operation; nothing depends on sweeping, because every expiry is
    // checked inside the write conditions.
    if (error instanceof Error && /UnknownOperation|not supported/i.test(`${error.name} ${error.message}`)) return;
    throw new StoreRequestError('UpdateTimeToLive', tableName, { cause: error });
  }
}
