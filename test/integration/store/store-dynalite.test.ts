import { afterAll, beforeAll } from 'vitest';
import { type LocalDynamo, startLocalDynamo } from '../../../local/dynamodb/index.js';
import { defineStoreConformance } from '../../support/store-conformance.js';

let dynamo: LocalDynamo | undefined;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
});

afterAll(async () => {
  await dynamo?.close();
});

defineStoreConformance('dynalite', () => {
  if (dynamo === undefined) throw new Error('dynalite did not start');
  return dynamo.endpoint;
});
