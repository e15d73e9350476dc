/**
 * The single table's definition. The CDK stack and the local stack both build from this object, so the keys,
 * indexes and TTL attribute cannot drift between production and `npm start`.
 */
export const TABLE_DEFINITION = {
  partitionKey: { name: 'PK', type: 'S' },
  sortKey: { name: 'SK', type: 'S' },
  ttlAttribute: 'expiresAtEpoch',
  globalSecondaryIndexes: [
    {
      // Lists by a shared attribute: open sessions per channel, approvals per approver, recent incidents.
      indexName: 'GSI1',
      partitionKey: { name: 'GSI1PK', type: 'S' },
      sortKey: { name: 'GSI1SK', type: 'S' },
      // Listing reads whole records from the index, so every attribute is projected.
      projectionType: 'ALL',
    },
  ],
} as const;

export const DEFAULT_TABLE_NAME = 'calmops';
