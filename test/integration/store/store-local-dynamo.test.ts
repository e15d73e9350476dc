import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureTable, type LocalDynamo, localClientOptions, startLocalDynamo } from '../../../local/dynamodb/index.js';
import {
  createDocumentClient,
  createDynamoClient,
  createStore,
  TableDefinitionMismatchError,
} from '../../../src/store/index.js';

const started: LocalDynamo[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((d) => d.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function start(dataDir?: string) {
  const dynamo = await startLocalDynamo(dataDir === undefined ? {} : { dataDir });
  started.push(dynamo);
  const base = createDynamoClient(localClientOptions(dynamo.endpoint));
  return { dynamo, base, store: createStore({ client: createDocumentClient(base), tableName: 'calmops' }) };
}

describe('startLocalDynamo', () => {
  it('listens on loopback on an ephemeral port and closes cleanly', async () => {
    const { dynamo, base } = await start();
    expect(dynamo.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await ensureTable(base, 'calmops')).toEqual({ created: true });
    base.destroy();
    await dynamo.close();
    await dynamo.close();
  });

  it('is reached through AWS_ENDPOINT_URL_DYNAMODB alone, as the handlers reach it', async () => {
    const { dynamo } = await start();
    const previous = process.env['AWS_ENDPOINT_URL_DYNAMODB'];
    process.env['AWS_ENDPOINT_URL_DYNAMODB'] = dynamo.endpoint;
    try {
      const { endpoint: _, ...withoutEndpoint } = localClientOptions(dynamo.endpoint);
      const base = createDynamoClient(withoutEndpoint);
      expect(await ensureTable(base, 'via-env')).toEqual({ created: true });
      base.destroy();
    } finally {
      if (previous === undefined) delete process.env['AWS_ENDPOINT_URL_DYNAMODB'];
      else process.env['AWS_ENDPOINT_URL_DYNAMODB'] = previous;
    }
  });

  it('keeps sessions across restarts when given a data directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'calmops-dynamo-'));
    dirs.push(dir);
    const first = await start(join(dir, 'dynamodb'));
    await ensureTable(first.base, 'calmops');
    const session = await first.store.sessions.create({
      intent: 'pods-pending',
      namespace: 'payments',
      channelId: 'C1',
      requester: 'U1',
    });
    first.base.destroy();
    await first.dynamo.close();
    started.splice(0);

    const second = await start(join(dir, 'dynamodb'));
    expect(await ensureTable(second.base, 'calmops')).toEqual({ created: false });
    expect(await second.store.sessions.get(session.id)).toEqual(session);
    second.base.destroy();
  });

  it('refuses a data directory another running instance holds', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'calmops-dynamo-'));
    dirs.push(dir);
    const { base } = await start(dir);
    await expect(startLocalDynamo({ dataDir: dir })).rejects.toThrow(new RegExp(`in use by process ${process.pid}`));
    base.destroy();
    await Promise.all(started.splice(0).map((d) => d.close()));
    const again = await start(dir);
    expect(await ensureTable(again.base, 'calmops')).toEqual({ created: true });
    again.base.destroy();
  });

  it('takes over a lock whose process is gone, or whose pid now names another process', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'calmops-dynamo-'));
    dirs.push(dir);
    // A process that was killed: its pid is free (or a zombie) by the time the lock is read.
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const gone = new Promise((done) => child.once('exit', done));
    child.kill('SIGKILL');
    await gone;
    await writeFile(join(dir, 'calmops.lock'), `${child.pid} 1`);
    const first = await startLocalDynamo({ dataDir: dir });
    await first.close();
    // A running, unrelated process whose pid the lock names, with another start time: the lock is not its.
    await writeFile(join(dir, 'calmops.lock'), `${process.pid} 1`);
    const second = await startLocalDynamo({ dataDir: dir });
    await second.close();
  });

  it('refuses to use a table whose keys differ from the shared definition', async () => {
    const { base } = await start();
    await base.send(
      new CreateTableCommand({
        TableName: 'legacy',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      }),
    );
    const error = await ensureTable(base, 'legacy').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TableDefinitionMismatchError);
    expect((error as Error).message).toMatch(/key schema is id:HASH.*index GSI1 is missing/);
    base.destroy();
  });
});

describe('startLocalDynamo on a taken port', () => {
  it('fails with a clear error and releases the data directory', async () => {
    const first = await startLocalDynamo();
    const port = Number(new URL(first.endpoint).port);
    const dir = await mkdtemp(join(tmpdir(), 'calmops-dynamo-'));
    try {
      await expect(startLocalDynamo({ port, dataDir: dir })).rejects.toThrow(
        /Could not start dynalite on 127.0.0.1:\d+: listen EADDRINUSE/,
      );
      const again = await startLocalDynamo({ dataDir: dir });
      const base = createDynamoClient(localClientOptions(again.endpoint));
      expect(await ensureTable(base, 'calmops')).toEqual({ created: true });
      base.destroy();
      await again.close();
    } finally {
      await first.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('startLocalDynamo in a worker thread', () => {
  it('serves the same API, keeps data on disk across restarts and closes cleanly', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'calmops-dynamo-'));
    try {
      const first = await startLocalDynamo({ dataDir: dir, worker: true });
      expect(first.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      await expect(startLocalDynamo({ dataDir: dir, worker: true })).rejects.toThrow(/in use by process/);
      const base = createDynamoClient(localClientOptions(first.endpoint));
      expect(await ensureTable(base, 'calmops')).toEqual({ created: true });
      const store = createStore({ client: createDocumentClient(base), tableName: 'calmops' });
      const session = await store.sessions.create({
        intent: 'pods-pending',
        namespace: 'payments',
        channelId: 'C1',
        requester: 'U1',
      });
      base.destroy();
      await first.close();
      await first.close();

      const second = await startLocalDynamo({ dataDir: dir, worker: true });
      const again = createDynamoClient(localClientOptions(second.endpoint));
      expect(await ensureTable(again, 'calmops')).toEqual({ created: false });
      const reread = createStore({ client: createDocumentClient(again), tableName: 'calmops' });
      expect(await reread.sessions.get(session.id)).toEqual(session);
      again.destroy();
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports a taken port and releases the data directory', async () => {
    const first = await startLocalDynamo();
    const port = Number(new URL(first.endpoint).port);
    const dir = await mkdtemp(join(tmpdir(), 'calmops-dynamo-'));
    try {
      await expect(startLocalDynamo({ port, dataDir: dir, worker: true })).rejects.toThrow(
        /Could not start dynalite on 127.0.0.1:\d+/,
      );
      const again = await startLocalDynamo({ dataDir: dir, worker: true });
      await again.close();
    } finally {
      await first.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
