import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** Whether the table a tool is about to read exists where it looks, before it reads anything. */
export type TableCheck = { ok: true } | { ok: false; reason: 'missing' | 'unreachable'; cause: unknown };

export async function checkTable(client: DynamoDBClient, tableName: string): Promise<TableCheck> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return { ok: true };
  } catch (error) {
    const missing = error instanceof Error && error.name === 'ResourceNotFoundException';
    return { ok: false, reason: missing ? 'missing' : 'unreachable', cause: error };
  }
}
