import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { TABLE_ACCESS } from '../../cdk/table-access.js';

/**
 * Records every DynamoDB request a client sends, as the IAM action it needs, so a test that runs a function's real
 * code can compare what it did with what the stack grants that function.
 */

export interface TableCall {
  /** The IAM action, e.g. `dynamodb:DeleteItem`. */
  action: string;
  /** The index a Query ran on, if any. */
  index?: string;
  /** The partition key of a single-item request, if any. */
  partitionKey?: string;
}

export function recordTableCalls(client: DynamoDBClient): TableCall[] {
  const calls: TableCall[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      // At this step the document client has not marshalled yet: key values are plain strings.
      const input = args.input as { IndexName?: string; Key?: { PK?: unknown } };
      const name = String(context.commandName ?? '').replace(/Command$/, '');
      const pk = input.Key?.PK;
      calls.push({
        action: `dynamodb:${name}`,
        ...(input.IndexName === undefined ? {} : { index: input.IndexName }),
        ...(typeof pk === 'string' ? { partitionKey: pk } : {}),
      });
      return next(args);
    },
    { step: 'initialize', name: 'recordTableCalls' },
  );
  return calls;
}

/** The calls the function's grant in the stack does not cover: the answer must be empty. */
export function ungranted(fn: keyof typeof TABLE_ACCESS, calls: readonly TableCall[]): TableCall[] {
  const access = TABLE_ACCESS[fn];
  return calls.filter((call) => {
    if (call.index !== undefined) return !(access.index && call.action === 'dynamodb:Query');
    if ((access.table as readonly string[]).includes(call.action)) return false;
    if (call.action === 'dynamodb:DeleteItem') {
      const prefixes: readonly string[] = access.deleteUnder;
      return !prefixes.some((prefix) => call.partitionKey?.startsWith(prefix) === true);
    }
    return true;
  });
}
