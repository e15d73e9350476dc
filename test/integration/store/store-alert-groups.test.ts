import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalDynamo, localClientOptions, startLocalDynamo } from '../../../local/dynamodb/index.js';
import {
  type AlertGroupRepository,
  createDocumentClient,
  createDynamoClient,
  createStore,
  ensureTable,
} from '../../../src/store/index.js';

describe('alert groups in the table', () => {
  let dynamo: LocalDynamo;
  let groups: AlertGroupRepository;
  let counter = 0;
  const at = (seconds: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, seconds));
  const group = () => ({
    groupId: `g${++counter}${'0'.repeat(40)}`,
    source: 'alertmanager',
    groupKey: '{}:{alertname="KubePodCrashLooping", namespace="orders"}',
    channelId: 'CINCIDENTS',
  });

  beforeAll(async () => {
    dynamo = await startLocalDynamo();
    const options = localClientOptions(dynamo.endpoint);
    await ensureTable(createDynamoClient(options), 'alert-groups');
    groups = createStore({ client: createDocumentClient(options), tableName: 'alert-groups' }).alertGroups;
  });
  afterAll(async () => {
    await dynamo?.close();
  });

  it('lets exactly one of many concurrent claims open the group', async () => {
    const input = group();
    const claims = await Promise.all(Array.from({ length: 8 }, () => groups.claim(input, { now: at(0) })));
    const won = claims.filter((c) => c.claimed);
    expect(won).toHaveLength(1);
    for (const lost of claims.filter((c) => !c.claimed)) {
      expect(lost).toMatchObject({ claimed: false, existing: { phase: 'opening', groupId: input.groupId } });
    }
    const winner = won[0];
    if (!winner?.claimed) throw new Error('no claim');
    const bound = await groups.bind(winner.record, { sessionId: 'S1', threadTs: '1700000000.000100' }, at(1));
    expect(bound).toMatchObject({ phase: 'bound', sessionId: 'S1', threadTs: '1700000000.000100' });
    expect(await groups.get(input.groupId)).toMatchObject({ phase: 'bound', sessionId: 'S1' });
    expect((await groups.get(input.groupId))?.leaseUntil).toBeUndefined();
    // A bound group is claimed again only by someone who saw its session closed.
    expect((await groups.claim(input, { now: at(3600) })).claimed).toBe(false);
    expect((await groups.claim(input, { now: at(3600), replacing: 'S0' })).claimed).toBe(false);
    const next = await groups.claim(input, { now: at(3600), replacing: 'S1' });
    expect(next.claimed).toBe(true);
    expect((await groups.claim(input, { now: at(3600), replacing: 'S1' })).claimed).toBe(false);
  });

  it('hands a claim whose delivery died to the next one after its lease, and not before', async () => {
    const input = group();
    const first = await groups.claim(input, { now: at(0), leaseSeconds: 30 });
    if (!first.claimed) throw new Error('no claim');
    expect((await groups.claim(input, { now: at(29) })).claimed).toBe(false);
    const second = await groups.claim(input, { now: at(30) });
    expect(second.claimed).toBe(true);
    // The first owner's late bind and release change nothing.
    expect(await groups.bind(first.record, { sessionId: 'S-late', threadTs: '1.1' }, at(31))).toBeUndefined();
    await groups.release(first.record);
    expect(await groups.get(input.groupId)).toMatchObject({ phase: 'opening' });
    if (!second.claimed) throw new Error('no claim');
    await groups.release(second.record);
    expect(await groups.get(input.groupId)).toBeUndefined();
    expect((await groups.claim(input, { now: at(32) })).claimed).toBe(true);
  });

  it('refuses ids that do not fit a key before writing', async () => {
    await expect(groups.claim({ ...group(), groupId: 'a#b' })).rejects.toThrow(/Invalid alert group claim/);
    await expect(groups.get('')).rejects.toThrow(/Invalid alert group id/);
  });
});
