import { describe, expect, it } from 'vitest';
import {
  createDocumentClient,
  createDynamoClient,
  TABLE_NAME_ENV,
  tableNameFromEnv,
} from '../../../src/store/client.js';
import { DEFAULT_TABLE_NAME } from '../../../src/store/table.js';

describe('store client', () => {
  it('takes the table name from the environment', () => {
    expect(tableNameFromEnv({})).toBe(DEFAULT_TABLE_NAME);
    expect(tableNameFromEnv({ [TABLE_NAME_ENV]: '  ' })).toBe(DEFAULT_TABLE_NAME);
    expect(tableNameFromEnv({ [TABLE_NAME_ENV]: 'calmops-prod' })).toBe('calmops-prod');
  });

  it('reads the variable the CDK stack and the local stack set on every function', () => {
    expect(TABLE_NAME_ENV).toBe('CALMOPS_TABLE');
    expect(tableNameFromEnv({ CALMOPS_TABLE: 'calmops-live' })).toBe('calmops-live');
  });

  it('uses an explicit endpoint when given one', async () => {
    const base = createDynamoClient({ endpoint: 'http://127.0.0.1:1', region: 'eu-west-1' });
    const endpoint = await base.config.endpoint?.();
    expect(endpoint?.hostname).toBe('127.0.0.1');
    expect(endpoint?.port).toBe(1);
    expect(await base.config.region()).toBe('eu-west-1');
    const doc = createDocumentClient(base);
    expect(doc.config.translateConfig?.marshallOptions?.removeUndefinedValues).toBe(true);
    base.destroy();
  });

  it('leaves the endpoint to AWS_ENDPOINT_URL_DYNAMODB otherwise', () => {
    const base = createDynamoClient({ region: 'eu-west-1' });
    expect(base.config.endpoint).toBeUndefined();
    base.destroy();
  });
});
