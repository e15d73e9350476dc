import { type ChildProcess, spawn } from 'node:child_process';
import { access, constants, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../local/free-port.js';
import { writeYaml as stringify } from '../../src/yaml-text.js';
import { locate } from '../prerequisites.mjs';

/**
 * A real Prometheus Alertmanager (Debian's `prometheus-alertmanager`) as a child process: its own configuration,
 * storage and loopback port, clustering off, alerts pushed through its v2 API exactly as Prometheus pushes them.
 */

/** Found on PATH as the prerequisites check finds it (test/prerequisites.mjs); Debian installs it in /usr/bin. */
const ALERTMANAGER_BINARY = locate('prometheus-alertmanager') ?? '/usr/bin/prometheus-alertmanager';

class AlertmanagerProcessError extends Error {
  override readonly name = 'AlertmanagerProcessError';
}

/** Prometheus' postable alert (`POST /api/v2/alerts`). */
export interface PostableAlert {
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  startsAt?: string;
  endsAt?: string;
  generatorURL?: string;
}

export interface RunningAlertmanager {
  /** `http://127.0.0.1:<port>`, also its external URL (the link its notifications carry). */
  url: string;
  push(alerts: PostableAlert[]): Promise<void>;
  /** What it logged so far, to explain a notification that never arrived. */
  output(): string;
  stop(): Promise<void>;
}

export interface WebhookReceiverConfig {
  url: string;
  bearerToken: string;
  groupBy: string[];
  groupWait: string;
  groupInterval: string;
  repeatInterval: string;
}

/** An alertmanager.yml (0.25 syntax) that sends every alert to one webhook with a bearer token. */
export function webhookConfig(input: WebhookReceiverConfig): string {
  return stringify({
    route: {
      receiver: 'calmops',
      group_by: input.groupBy,
      group_wait: input.groupWait,
      group_interval: input.groupInterval,
      repeat_interval: input.repeatInterval,
    },
    receivers: [
      {
        name: 'calmops',
        webhook_configs: [
          {
            url: input.url,
            send_resolved: true,
            http_config: { authorization: { type: 'Bearer', credentials: input.bearerToken } },
          },
        ],
      },
    ],
  });
}

/** Fails with what to install when the binary is not there. */
export async function requireAlertmanagerBinary(binary = ALERTMANAGER_BINARY): Promise<void> {
  try {
    await access(binary, constants.X_OK);
  } catch (error) {
    throw new AlertmanagerProcessError(
      `${binary} is missing: install it with "apt-get install -y prometheus-alertmanager" (node test/prerequisites.mjs lists what the tests need)`,
      { cause: error },
    );
  }
}

const READY_WAIT_MS = 20_000;
const MAX_OUTPUT = 64 * 1024;

function exited(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) done();
    else child.once('exit', () => done());
  });
}

async function ready(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

export async function startAlertmanager(options: { config: string; binary?: string }): Promise<RunningAlertmanager> {
  const binary = options.binary ?? ALERTMANAGER_BINARY;
  await requireAlertmanagerBinary(binary);
  const dir = await mkdtemp(join(tmpdir(), 'calmops-alertmanager-'));
  const configFile = join(dir, 'alertmanager.yml');
  await writeFile(configFile, options.config);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    binary,
    [
      `--config.file=${configFile}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      `--web.external-url=${url}`,
      // Empty: no gossip listener, a single Alertmanager.
      '--cluster.listen-address=',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-MAX_OUTPUT);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  // A test runner that dies mid-test must not leave the process behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      process.off('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited(child);
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    })();
    return stopping;
  };

  const deadline = Date.now() + READY_WAIT_MS;
  for (;;) {
    if (spawnError !== undefined || child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new AlertmanagerProcessError(
        `Alertmanager stopped before it was ready (${spawnError?.message ?? `exit ${child.exitCode ?? child.signalCode}`}):\n${output}`,
        { cause: spawnError },
      );
    }
    if (await ready(url)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new AlertmanagerProcessError(`Alertmanager was not ready at ${url}/-/ready:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  return {
    url,
    async push(alerts) {
      const response = await fetch(`${url}/api/v2/alerts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(alerts),
      });
      const text = await response.text();
      if (!response.ok) {
        throw new AlertmanagerProcessError(`Alertmanager refused the alerts (${response.status}): ${text}`);
      }
    },
    output: () => output,
    stop,
  };
}
