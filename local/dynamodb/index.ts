import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { type AddressInfo, createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import dynalite from 'dynalite';
import type { StoreClientOptions } from '../../src/store/client.js';
import { StoreError } from '../../src/store/errors.js';

export { ensureTable } from '../../src/store/create-table.js';

export interface LocalDynamo {
  /** `http://127.0.0.1:<port>`; hand it to the code under test as AWS_ENDPOINT_URL_DYNAMODB. */
  endpoint: string;
  close(): Promise<void>;
}

export interface LocalDynamoOptions {
  /** Keep the data on disk in this directory (LevelDB); in memory when absent. */
  dataDir?: string;
  /** 0 or absent picks a free port. */
  port?: number;
  /**
   * Serve from a worker thread. dynalite and the SDK both spend CPU on every request; in one thread they take
   * turns, in two they use two cores. Worth it where one process drives many requests (seeding, benchmarks).
   */
  worker?: boolean;
}

export class LocalDynamoError extends StoreError {}

/**
 * Starts dynalite on loopback. It speaks the DynamoDB wire protocol but has no transactions and never sweeps TTL,
 * which the store does not rely on: every write is a single-item condition and every expiry is checked in it.
 */
export async function startLocalDynamo(options: LocalDynamoOptions = {}): Promise<LocalDynamo> {
  const path = options.dataDir === undefined ? undefined : resolve(options.dataDir);
  const releaseLock = path === undefined ? async () => {} : await lockDataDir(path);
  if (options.port !== undefined && options.port !== 0) {
    // dynalite opens its database when created and cannot close it unless listening, so a taken port is found
    // out before it is created.
    try {
      await assertPortFree(options.port);
    } catch (error) {
      await releaseLock();
      throw error;
    }
  }
  const dynaliteOptions = {
    ...(path === undefined ? {} : { path }),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  };
  if (options.worker) return startInWorker(dynaliteOptions, options.port ?? 0, releaseLock);
  const server = dynalite(dynaliteOptions);
  // Should listening still fail, the lock stays: the database is open in this process and another start on the
  // same directory must be refused rather than crash.
  await new Promise<void>((done, fail) => {
    server.once('error', (error) => fail(portError(options.port ?? 0, error)));
    server.listen(options.port ?? 0, '127.0.0.1', () => done());
  });
  const { port } = server.address() as AddressInfo;
  const inFlight = trackRequests(server);
  let closed: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close() {
      closed ??= (async () => {
        await inFlight.drain(DRAIN_MS);
        await new Promise<void>((done, fail) => {
          server.close((error) => {
            releaseLock().then(() => (error ? fail(error) : done()), fail);
          });
          // SDK clients keep connections alive; without this, close would wait for them to time out.
          server.closeAllConnections();
        });
      })();
      return closed;
    },
  };
}

/**
 * How long close() lets requests already being served finish. dynalite closes its database when the server
 * closes; a request cut off mid-way would go on to write to the closed database and throw where nobody catches.
 */
const DRAIN_MS = 5000;

function trackRequests(server: Server): { drain(timeoutMs: number): Promise<void> } {
  let active = 0;
  const idle = new Set<() => void>();
  server.on('request', (_request: IncomingMessage, response: ServerResponse) => {
    active += 1;
    response.once('close', () => {
      active -= 1;
      if (active === 0) for (const done of idle) done();
    });
  });
  return {
    async drain(timeoutMs) {
      if (active === 0) return;
      await new Promise<void>((done) => {
        const finish = () => {
          clearTimeout(timer);
          idle.delete(finish);
          done();
        };
        const timer = setTimeout(finish, timeoutMs);
        idle.add(finish);
      });
    },
  };
}

/** The worker's whole program. It is plain CommonJS so it runs without the TypeScript loader of the parent. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const server = require(workerData.dynalite)(workerData.options);
server.once('error', (error) => parentPort.postMessage({ type: 'error', message: error.message }));
server.listen(workerData.port, '127.0.0.1', () => parentPort.postMessage({ type: 'listening', port: server.address().port }));
let active = 0;
server.on('request', (req, res) => {
  active += 1;
  res.once('close', () => { active -= 1; });
});
parentPort.on('message', (message) => {
  if (message !== 'close') return;
  const started = Date.now();
  const closeWhenIdle = () => {
    if (active > 0 && Date.now() - started < workerData.drainMs) return void setTimeout(closeWhenIdle, 10);
    server.close((error) => {
      parentPort.postMessage({ type: 'closed', message: error ? error.message : undefined });
      parentPort.close();
    });
    server.closeAllConnections();
  };
  closeWhenIdle();
});
`;

type WorkerMessage =
  | { type: 'listening'; port: number }
  | { type: 'error'; message: string }
  | { type: 'closed'; message?: string };

async function startInWorker(
  dynaliteOptions: Record<string, unknown>,
  port: number,
  releaseLock: () => Promise<void>,
): Promise<LocalDynamo> {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      dynalite: createRequire(import.meta.url).resolve('dynalite'),
      options: dynaliteOptions,
      port,
      drainMs: DRAIN_MS,
    },
  });
  const exited = new Promise<void>((done) => worker.once('exit', () => done()));
  let listening: number;
  try {
    listening = await new Promise<number>((done, fail) => {
      worker.once('error', (error) => fail(portError(port, error)));
      worker.once('message', (message: WorkerMessage) => {
        if (message.type === 'listening') done(message.port);
        else fail(portError(port, new Error(message.type === 'error' ? message.message : 'worker stopped')));
      });
    });
  } catch (error) {
    await worker.terminate();
    await releaseLock();
    throw error;
  }
  let closed: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${listening}`,
    close() {
      closed ??= (async () => {
        const reply = new Promise<WorkerMessage | undefined>((done) => {
          worker.once('message', done);
          worker.once('exit', () => done(undefined));
        });
        worker.postMessage('close');
        const message = await reply;
        // The worker ends by itself once the server is closed; a handle left open must not keep close() waiting.
        const timer = setTimeout(() => void worker.terminate(), 2000);
        await exited;
        clearTimeout(timer);
        await releaseLock();
        if (message?.type === 'closed' && message.message) throw new LocalDynamoError(message.message);
      })();
      return closed;
    },
  };
}

function portError(port: number, error: Error): LocalDynamoError {
  return new LocalDynamoError(`Could not start dynalite on 127.0.0.1:${port}: ${error.message}`, { cause: error });
}

async function assertPortFree(port: number): Promise<void> {
  const probe = createServer();
  await new Promise<void>((done, fail) => {
    probe.once('error', (error) => fail(portError(port, error)));
    probe.listen(port, '127.0.0.1', () => probe.close(() => done()));
  });
}

/**
 * LevelDB allows one process per directory, and dynalite only finds out on its first request, by crashing. A lock
 * file naming the owner turns that into a clear error up front. The owner is named by its pid and its start time,
 * so a lock left by a process that died is taken over even when the pid now belongs to another process (pids are
 * reused) or to the dead one's unreaped remains (a `kill -9` a moment ago).
 */
async function lockDataDir(path: string): Promise<() => Promise<void>> {
  await mkdir(path, { recursive: true });
  const lock = join(path, 'calmops.lock');
  const self = `${process.pid} ${processStart(process.pid) ?? ''}`.trim();
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(lock, self, { flag: 'wx' });
      return async () => {
        // Only our own lock: a process that took over a lock it judged stale must keep it.
        if ((await readFile(lock, 'utf8').catch(() => '')).trim() === self) await rm(lock, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const [pidText, started] = (await readFile(lock, 'utf8').catch(() => '')).trim().split(/\s+/);
      const owner = Number(pidText);
      if (Number.isInteger(owner) && owner > 0 && ownerIsRunning(owner, started)) {
        throw new LocalDynamoError(`${path} is in use by process ${owner}; stop it or choose another data directory`);
      }
      await rm(lock, { force: true });
    }
  }
  throw new LocalDynamoError(`Could not lock ${path}`);
}

/**
 * When a process started, in clock ticks since boot (field 22 of `/proc/<pid>/stat`), or undefined when it is not
 * running: gone, a zombie, or on a system without `/proc`.
 */
function processStart(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name may hold spaces and parentheses; the fields after its closing one are fixed.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  return state === 'Z' || state === 'X' ? undefined : fields[19];
}

function ownerIsRunning(pid: number, started: string | undefined): boolean {
  if (existsSync('/proc/self/stat')) {
    const now = processStart(pid);
    return now !== undefined && (started === undefined || started === now);
  }
  return isAlive(pid);
}

function isAlive(pid: number): boolean {
  try {
    // Signal 0 only checks that the process exists; nothing is sent.
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Client options for a local endpoint. The emulators accept any credentials; fixed placeholder ones keep the SDK
 * from searching the machine for real ones.
 */
export function localClientOptions(endpoint: string): StoreClientOptions {
  return {
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 3,
  };
}
