import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ALERTMANAGER_PATH } from '../src/alerts/http.js';
import { loadSnapshotFiles, secretsSkippedNotice } from '../src/cluster/snapshot.js';
import type { KubeObject } from '../src/cluster/types.js';
import { DEFAULT_MIN_TIME_IN_STATE_SECONDS } from '../src/diagnosis/state-machine.js';
import { ENV } from '../src/env-names.js';
import { PolicyError, parsePolicy } from '../src/policy/channel-policy.js';
import type { SnapshotServer } from '../src/snapshot-api/server.js';
import { readYaml, YamlReadError } from '../src/yaml-text.js';
import { localCache } from './cache-dir.js';
import { createDemoClusterControl, type DemoClusterControl } from './demo/control.js';
import { DEMO_NAMESPACES, DEMO_SNAPSHOT } from './demo/index.js';
import { type HealthReport, type LocalHttpServer, type SlackHttpHandler, startLocalHttpServer } from './http-server.js';
import { createBotClient } from './sandbox/bot-client.js';
import type { SandboxDemoCluster } from './sandbox/demo-routes.js';
import { createMcpPanel, type SandboxMcpOptions } from './sandbox/mcp-panel.js';
import { createSandbox, type Sandbox } from './sandbox/server.js';
import { buildWorkspace, sandboxChannels } from './sandbox/workspace.js';
import { type SlackStandIn, startSlackStandIn } from './slack/index.js';
import { snapshotCacheIn } from './snapshot-cache.js';
import type { SocketModeApp } from './socket-mode.js';
import type { LocalStack } from './stack.js';

/**
 * `npm start`: the whole product on one machine. DynamoDB (dynalite, on disk under `.calmops/`), the local Step
 * Functions endpoint running the three machines on the real handlers, a Kubernetes snapshot API server with the
 * demo cluster (or your snapshot, or your cluster), the Slack Web API stand-in, and the bot's `/slack/events` and
 * `/alerts/alertmanager` served by the Lambda's own handler, with the Slack sandbox page in front. With SLACK_BOT_TOKEN and
 * SLACK_APP_TOKEN the same handlers serve a real workspace over Socket Mode instead.
 */

type Env = Readonly<Record<string, string | undefined>>;

export interface StartOptions {
  /** The environment to honour (PORT, SLACK_SIGNING_SECRET, ALERTS_TOKEN, KUBECONFIG, CALMOPS_SNAPSHOT, SLACK_*_TOKEN). */
  env?: Env;
  /** Where state lives between runs; CALMOPS_DATA_DIR, else `.calmops` in the working directory. */
  dataDir?: string;
  /** Overrides PORT; 0 picks a free port. */
  port?: number;
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';
  /** Passed to the local stack (tests shorten timeouts). */
  approvalTimeoutSeconds?: number;
  waitTimeScale?: number;
  /** How long the sandbox waits for the bot's ack (Slack waits 3 s). */
  ackTimeoutMs?: number;
}

export type ClusterSource =
  | { kind: 'demo'; file: string }
  | { kind: 'snapshot'; file: string }
  | { kind: 'kubeconfig'; file: string };

export interface RunningCalmops {
  mode: 'sandbox' | 'socket';
  /** `http://127.0.0.1:<port>` */
  origin: string;
  sandboxUrl: string;
  cluster: ClusterSource;
  /** Namespaces of the served snapshot with what is wrong in each (demo), or just their names. */
  namespaces: { namespace: string; problem?: string; try?: string }[];
  /** Secret documents the served snapshot held, dropped unread when it was parsed. */
  secretsSkipped?: number;
  stack: LocalStack;
  standIn?: SlackStandIn;
  sandbox?: Sandbox;
  /** Runs and restores the demo namespaces' fixes (the sandbox's "Demo cluster" panel); only with the demo. */
  demoCluster?: DemoClusterControl;
  http: LocalHttpServer;
  /** Where Alertmanager posts, the bearer token it sends, and the channel alerts open in (none: refused). */
  alerts: { url: string; token: string; channel?: string };
  health(): Promise<HealthReport>;
  close(): Promise<void>;
}

export class StartError extends Error {
  override readonly name = 'StartError';
}

const DEFAULT_PORT = 3000;

function value(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

/** CALMOPS_RECONCILE_SECONDS: how often the reconciler runs (the schedule in AWS runs it every minute). */
function reconcileSecondsFrom(env: Env): number {
  const raw = value(env, 'CALMOPS_RECONCILE_SECONDS');
  if (raw === undefined) return 60;
  const seconds = Number(raw);
  if (!/^\d+$/.test(raw) || seconds > 3600) {
    throw new StartError(`CALMOPS_RECONCILE_SECONDS must be whole seconds 0–3600 (0 turns it off), got "${raw}"`);
  }
  return seconds;
}

/** ADR-005's minimum time in a state: what the deployment would enforce unless CALMOPS_MIN_TIME_IN_STATE_SECONDS says. */
function minTimeInStateFrom(env: Env): number {
  const raw = value(env, ENV.minTimeInStateSeconds);
  if (raw === undefined) return DEFAULT_MIN_TIME_IN_STATE_SECONDS;
  const seconds = Number(raw);
  if (!/^\d+$/.test(raw) || seconds > 3600) {
    throw new StartError(`${ENV.minTimeInStateSeconds} must be whole seconds 0–3600, got "${raw}"`);
  }
  return seconds;
}

function portFrom(env: Env): number {
  const raw = value(env, 'PORT');
  if (raw === undefined) return DEFAULT_PORT;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65_535) throw new StartError(`PORT must be a port number 0–65535, got "${raw}"`);
  return port;
}

/**
 * A local secret: yours from the environment, else one generated once and kept in the data directory, so that a
 * restart keeps the same one (a sandbox page or an Alertmanager set up against it keeps working).
 */
async function keptSecret(env: Env, variable: string, dataDir: string, name: string, bytes: number): Promise<string> {
  const given = value(env, variable);
  if (given !== undefined) return given;
  const file = join(dataDir, name);
  try {
    const stored = (await readFile(file, 'utf8')).trim();
    if (/^[0-9a-f]{32,}$/.test(stored)) return stored;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new StartError(`cannot read ${file}: ${(error as Error).message}`, { cause: error });
    }
  }
  const generated = randomBytes(bytes).toString('hex');
  await writeFile(file, `${generated}\n`, { mode: 0o600 });
  return generated;
}

const signingSecret = (env: Env, dataDir: string) =>
  keptSecret(env, ENV.slackSigningSecret, dataDir, 'signing-secret', 32);
const alertsToken = (env: Env, dataDir: string) => keptSecret(env, ENV.alertsToken, dataDir, 'alerts-token', 24);

/**
 * Your channel policy, from CALMOPS_POLICY (a YAML or JSON file) or CALMOPS_POLICY_JSON, checked here so that a
 * mistake stops the start with its reason; undefined keeps the sandbox's default (every channel, its groups).
 */
export async function policyFrom(env: Env): Promise<unknown> {
  const inline = value(env, ENV.policyJson);
  const file = value(env, ENV.policyFile);
  if (inline === undefined && file === undefined) return undefined;
  const source = inline !== undefined ? ENV.policyJson : (file as string);
  let text: string;
  try {
    text = inline ?? (await readFile(file as string, 'utf8'));
  } catch (error) {
    throw new StartError(`cannot read ${ENV.policyFile} ${file}: ${(error as Error).message}`, { cause: error });
  }
  try {
    const data: unknown = readYaml(text) ?? {};
    parsePolicy(data, { source });
    return data;
  } catch (error) {
    const reason =
      error instanceof PolicyError
        ? error.message
        : `${source} is not valid YAML or JSON${error instanceof YamlReadError ? `: ${error.message}` : ''}`;
    throw new StartError(reason, { cause: error });
  }
}

/** The channel a policy opens alert sessions in by default, when it takes alerts at all. */
export function alertsChannelOf(policy: unknown): { channel?: string } {
  const channel = (policy as { alerts?: { channel?: unknown } } | null)?.alerts?.channel;
  return typeof channel === 'string' ? { channel } : {};
}

/** The cluster names a policy uses: `npm start` reads one cluster, which answers to all of them. */
export function policyClusterNames(policy: unknown): string[] {
  const names = new Set<string>();
  const clusterOf = (entry: unknown) => {
    const cluster = (entry as { cluster?: unknown } | null)?.cluster;
    if (typeof cluster === 'string') names.add(cluster);
  };
  const data = policy as { defaults?: unknown; channels?: Record<string, unknown> } | null;
  clusterOf(data?.defaults);
  for (const channel of Object.values(data?.channels ?? {})) clusterOf(channel);
  names.delete('default');
  return [...names].sort();
}

export function clusterSource(env: Env): ClusterSource {
  const kubeconfig = value(env, ENV.kubeconfig);
  if (kubeconfig !== undefined) {
    // KUBECONFIG may list several files; the first one is the cluster to read, as for kubectl's current context.
    const first = kubeconfig.split(delimiter).find((p) => p !== '');
    if (first !== undefined) return { kind: 'kubeconfig', file: resolve(first) };
  }
  const snapshot = value(env, 'CALMOPS_SNAPSHOT');
  if (snapshot !== undefined) return { kind: 'snapshot', file: resolve(snapshot) };
  return { kind: 'demo', file: DEMO_SNAPSHOT };
}

/** Where the sandbox's MCP server writes the snapshots it is asked for. */
async function snapshotFolder(dataDir: string): Promise<string> {
  const dir = join(dataDir, 'snapshots');
  await mkdir(dir, { recursive: true });
  return dir;
}

function namespacesOf(objects: readonly KubeObject[]): string[] {
  return [...new Set(objects.map((o) => o.metadata.namespace).filter((n): n is string => n !== undefined))].sort();
}

/**
 * What the sandbox may do to the served cluster. Only the demo has fixes to run; for your own cluster or snapshot
 * the panel says why it is absent and what to do instead.
 */
export function sandboxDemoCluster(
  cluster: ClusterSource,
  served: { snapshot?: { objects: readonly KubeObject[]; logs: Record<string, string> }; kube?: SnapshotServer },
): SandboxDemoCluster {
  if (cluster.kind === 'kubeconfig') {
    return {
      unavailable: `calmops is reading your cluster (${cluster.file}) and never changes it: run the approved plan there yourself, then say "resolved" in the incident's thread.`,
    };
  }
  if (cluster.kind === 'snapshot') {
    return {
      unavailable: `calmops is serving your snapshot (${cluster.file}), which has no fixes to run. To validate a fix, start again with a snapshot taken after it (sessions are kept), then say "resolved" in the incident's thread.`,
    };
  }
  const { snapshot, kube } = served;
  if (snapshot === undefined || kube === undefined) {
    return { unavailable: 'The demo cluster is not served by the snapshot server here, so it cannot be changed.' };
  }
  return {
    control: createDemoClusterControl({
      broken: snapshot,
      serve: (fixed) => kube.setObjects(fixed.objects, fixed.logs),
    }),
  };
}

/**
 * `calmops mcp` as the sandbox's "MCP tools" pane starts it: the kubeconfig the bot reads with, the served
 * namespaces (any one at a time for your own cluster), snapshots written under the data folder.
 */
export function sandboxMcpOptions(
  kubeconfigFile: string | undefined,
  namespaces: readonly string[],
  snapshotDir: string,
): SandboxMcpOptions | { unavailable: string } {
  if (kubeconfigFile === undefined) {
    return { unavailable: 'No kubeconfig is served with this sandbox, so no MCP server can read the cluster.' };
  }
  const scope = namespaces.length > 0 ? namespaces.join(',') : '*';
  return {
    args: ['--kubeconfig', kubeconfigFile, '--namespaces', scope, '--snapshot-dir', snapshotDir],
    cwd: snapshotDir,
  };
}

function probe(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((done) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const finish = (up: boolean) => {
      socket.destroy();
      done(up);
    };
    socket.setTimeout(500, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

export async function startCalmops(options: StartOptions = {}): Promise<RunningCalmops> {
  const env = options.env ?? process.env;
  const dataDir = resolve(options.dataDir ?? value(env, 'CALMOPS_DATA_DIR') ?? join(process.cwd(), '.calmops'));
  await mkdir(dataDir, { recursive: true });
  const port = options.port ?? portFrom(env);
  const reconcileEverySeconds = reconcileSecondsFrom(env);
  const minTimeInStateSeconds = minTimeInStateFrom(env);
  const secret = await signingSecret(env, dataDir);
  const alertToken = await alertsToken(env, dataDir);
  const cluster = clusterSource(env);
  const policy = await policyFrom(env);
  const botToken = value(env, ENV.slackBotToken);
  const appToken = value(env, 'SLACK_APP_TOKEN');
  const socketMode = botToken !== undefined && appToken !== undefined;

  let snapshot: { objects: KubeObject[]; logs: Record<string, string> } | undefined;
  let secretsSkipped = 0;
  if (cluster.kind !== 'kubeconfig') {
    // Parsed once and kept by content: the demo cluster's YAML alone takes a few hundred milliseconds to parse.
    const loaded = await loadSnapshotFiles(cluster.file, undefined, snapshotCacheIn(localCache.parsedSnapshots));
    snapshot = { objects: loaded.objects, logs: loaded.logs };
    secretsSkipped = loaded.secretsSkipped;
  }
  const namespaces =
    cluster.kind === 'demo'
      ? DEMO_NAMESPACES.map((d) => ({ namespace: d.namespace, problem: d.problem, try: d.try }))
      : namespacesOf(snapshot?.objects ?? []).map((namespace) => ({ namespace }));

  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
  };
  try {
    // The stand-in is started here rather than by the stack so that it knows the sandbox's channels.
    const standIn = socketMode
      ? undefined
      : await startSlackStandIn({ channels: sandboxChannels(), stateFile: join(dataDir, 'slack-conversation.json') });
    if (standIn !== undefined) closers.push(() => standIn.close());
    // Loaded here, not at the top, so that `main` can set up warning handling before the AWS SDK loads.
    const { defaultLocalPolicy, startLocalStack } = await import('./stack.js');
    const stack = await startLocalStack({
      dataDir,
      snapshot:
        cluster.kind === 'kubeconfig' ? { kubeconfigFile: cluster.file } : (snapshot as { objects: KubeObject[] }),
      slackApiUrl: standIn?.url ?? 'https://slack.com/api/',
      signingSecret: secret,
      alertsToken: alertToken,
      ...(policy === undefined ? {} : { policy, clusterNames: policyClusterNames(policy) }),
      logLevel: options.logLevel ?? 'WARN',
      reconcileEverySeconds,
      minTimeInStateSeconds,
      ...(options.approvalTimeoutSeconds === undefined
        ? {}
        : { approvalTimeoutSeconds: options.approvalTimeoutSeconds }),
      ...(options.waitTimeScale === undefined ? {} : { waitTimeScale: options.waitTimeScale }),
    });
    closers.push(() => stack.close());

    let slackHandler: SlackHttpHandler;
    let socket: SocketModeApp | undefined;
    if (socketMode) {
      // The workflow functions read their environment on first use, so the real token reaches them before any post.
      stack.env[ENV.slackBotToken] = botToken;
      stack.env[ENV.slackApiUrl] = 'https://slack.com/api/';
      const { createSlackDepsFromEnv } = await import('../src/app/slack-runtime.js');
      const { SocketModeError, startSocketMode } = await import('./socket-mode.js');
      const socketDeps = await createSlackDepsFromEnv(stack.env);
      try {
        socket = await startSocketMode({ appToken, deps: socketDeps });
      } catch (error) {
        // A token or network problem is the user's to fix: reported like any other bad setting.
        throw error instanceof SocketModeError ? new StartError(error.message, { cause: error }) : error;
      }
      closers.push(() => socket?.stop() ?? Promise.resolve());
      // Slack talks over the socket; alerts still arrive over HTTP, handled over the same dependencies.
      const { createAlertsRoute } = await import('../src/app/alerts-runtime.js');
      const { routeRequests } = await import('../src/alerts/http.js');
      slackHandler = routeRequests({
        slack: async () => ({
          statusCode: 404,
          headers: { 'content-type': 'text/plain; charset=utf-8' },
          body: 'calmops runs in Socket Mode; Slack does not post here',
        }),
        alerts: createAlertsRoute(stack.env, socketDeps),
      });
    } else {
      // The Lambda's handler reads the same variables the stack configured its functions with.
      Object.assign(process.env, stack.env);
      // Powertools loggers the Slack function creates itself follow this level (INFO in Lambda).
      process.env['POWERTOOLS_LOG_LEVEL'] ??= options.logLevel ?? 'WARN';
      const { handleSlackHttp, prepareSlackHttp } = await import('../functions/slack.js');
      // The first slash command after a start would otherwise build the Slack app itself, and on a busy machine
      // miss Slack's 3 s.
      await prepareSlackHttp();
      slackHandler = async (request) => handleSlackHttp(request);
    }

    let origin = '';
    const demoCluster =
      standIn === undefined
        ? undefined
        : sandboxDemoCluster(cluster, {
            ...(snapshot === undefined ? {} : { snapshot }),
            ...(stack.kube ? { kube: stack.kube } : {}),
          });
    const sandbox =
      standIn === undefined
        ? undefined
        : createSandbox({
            standIn,
            workspace: buildWorkspace({ channels: sandboxChannels() }),
            bot: createBotClient({
              url: () => `${origin}/slack/events`,
              signingSecret: secret,
              ...(options.ackTimeoutMs === undefined ? {} : { timeoutMs: options.ackTimeoutMs }),
            }),
            historyFile: join(dataDir, 'sandbox-history.json'),
            ...(demoCluster === undefined ? {} : { demoCluster }),
            // The page fires sample alerts through the server, which alone holds the token.
            alerts: { url: () => `${origin}${ALERTMANAGER_PATH}`, token: alertToken },
            mcp: createMcpPanel(
              sandboxMcpOptions(
                stack.kubeconfigFile,
                namespaces.map((n) => n.namespace),
                await snapshotFolder(dataDir),
              ),
            ),
          });
    if (sandbox !== undefined) closers.push(async () => sandbox.close());

    const services = (): Record<string, string> => ({
      dynamodb: stack.endpoints.dynamodb,
      stepfunctions: stack.endpoints.sfn,
      ...(stack.endpoints.kubernetes === undefined ? {} : { kubernetes: stack.endpoints.kubernetes }),
      ...(standIn === undefined ? {} : { slack: standIn.origin }),
    });
    const health = async (): Promise<HealthReport> => {
      const entries = await Promise.all(
        Object.entries(services()).map(async ([name, url]) => [name, { url, up: await probe(url) }] as const),
      );
      return { ok: entries.every(([, s]) => s.up), services: Object.fromEntries(entries) };
    };
    const http = await startLocalHttpServer({
      port,
      slack: slackHandler,
      ...(sandbox === undefined ? {} : { sandbox }),
      ...(standIn === undefined ? {} : { standInOrigin: standIn.origin }),
      health,
    });
    closers.push(() => http.close());
    origin = http.origin;
    // The page's script is bundled in the background, so the first visit does not wait for it.
    void sandbox?.warm().catch(() => undefined);

    return {
      mode: socketMode ? 'socket' : 'sandbox',
      origin,
      sandboxUrl: `${origin}/sandbox/`,
      cluster,
      namespaces,
      secretsSkipped,
      stack,
      ...(standIn === undefined ? {} : { standIn }),
      ...(sandbox === undefined ? {} : { sandbox }),
      ...(demoCluster !== undefined && 'control' in demoCluster ? { demoCluster: demoCluster.control } : {}),
      http,
      alerts: {
        url: `${origin}${ALERTMANAGER_PATH}`,
        token: alertToken,
        ...alertsChannelOf(policy ?? defaultLocalPolicy()),
      },
      health,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The one block `npm start` prints. */
/** Enough of a token to tell which one it is, not enough to use it. */
export function shortToken(token: string): string {
  return token.length <= 8 ? '…' : `${token.slice(0, 4)}…`;
}

export function banner(running: RunningCalmops): string {
  const lines: string[] = [];
  if (running.mode === 'socket') {
    lines.push('calmops is connected to your Slack workspace (Socket Mode).', '');
  } else {
    lines.push(`calmops is running: open ${running.sandboxUrl}`, '');
  }
  const where =
    running.cluster.kind === 'kubeconfig'
      ? `your cluster (${running.cluster.file})`
      : running.cluster.kind === 'snapshot'
        ? `snapshot ${running.cluster.file}`
        : 'the demo cluster';
  const skipped = secretsSkippedNotice(running.secretsSkipped);
  lines.push(`Reading ${where}${skipped ? ` (${skipped})` : ''}.`);
  if (running.namespaces.length > 0) {
    const width = Math.max(...running.namespaces.map((n) => n.namespace.length));
    const problemWidth = Math.max(...running.namespaces.map((n) => n.problem?.length ?? 0));
    for (const n of running.namespaces) {
      const problem = n.problem === undefined ? '' : `  ${n.problem.padEnd(problemWidth)}`;
      lines.push(`  ${n.namespace.padEnd(width)}${problem}${n.try ? `  ${n.try}` : ''}`.trimEnd());
    }
  }
  if (running.cluster.kind === 'demo' && running.mode === 'sandbox') {
    lines.push('', 'After a plan is approved, run its fix from "Demo cluster" in the sandbox, then say "resolved".');
  }
  lines.push('');
  if (running.cluster.kind !== 'kubeconfig') {
    lines.push('Real cluster: KUBECONFIG=~/.kube/config npm start   (read-only: get, list, watch)');
    lines.push('Own snapshot: CALMOPS_SNAPSHOT=incident.yaml npm start');
  }
  if (running.mode === 'sandbox') {
    lines.push(`Slack endpoint: ${running.origin}/slack/events   health: ${running.origin}/healthz`);
  }
  if (running.alerts !== undefined) {
    const { url, token, channel } = running.alerts;
    // Cut short: a start-up block ends up in terminals' scrollback, screen shares and pasted logs.
    lines.push(`Alertmanager webhook: ${url}   Authorization: Bearer ${shortToken(token)}`);
    lines.push(`  the whole token: ${ENV.alertsToken} if you set it, else the file alerts-token in the data directory`);
    lines.push(
      channel === undefined
        ? '  (your channel policy has no alerts section: alerts are refused until it names a channel)'
        : `  alerts open their incident threads in ${channel} (docs/alerts.md)`,
    );
  }
  lines.push('Ctrl-C stops everything; sessions are kept in .calmops/ for the next start.');
  return lines.join('\n');
}

/** Keeps the start-up block readable: the AWS SDK's notice about future Node versions says nothing about calmops. */
function quietNodeVersionNotice(): void {
  const defaults = process.listeners('warning');
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (`${warning.name} ${warning.message}`.includes('NodeVersionSupportWarning')) return;
    for (const listener of defaults) listener(warning);
  });
}

/**
 * The slow parts of a first start, done ahead of it by `npm install` (the package's prepare script): validating
 * the state machine definitions and parsing the demo cluster, each remembered under node_modules/.cache/calmops.
 */
export async function prepareStart(): Promise<void> {
  const { validateLocalStateMachines } = await import('./stack.js');
  validateLocalStateMachines();
  await loadSnapshotFiles(DEMO_SNAPSHOT, undefined, snapshotCacheIn(localCache.parsedSnapshots));
}

/** Runs `npm start` in this process until Ctrl-C. */
export async function main(): Promise<void> {
  quietNodeVersionNotice();
  let running: RunningCalmops;
  try {
    running = await startCalmops();
  } catch (error) {
    process.stderr.write(`calmops could not start: ${(error as Error).message}\n`);
    process.exitCode = error instanceof StartError ? 2 : 1;
    return;
  }
  process.stdout.write(`${banner(running)}\n`);
  let stoppingSince: number | undefined;
  const stop = (signal: string) => {
    if (stoppingSince !== undefined) {
      // The same Ctrl-C can arrive twice (from the terminal and relayed by npm); a later one means "now".
      if (Date.now() - stoppingSince > 1000) process.exit(130);
      return;
    }
    stoppingSince = Date.now();
    process.stdout.write(`\n${signal}: stopping calmops…\n`);
    // A stop that hangs (a server that will not close) must not keep the port and the data directory: nobody may be
    // left to press Ctrl-C again once the parent is gone.
    setTimeout(() => process.exit(1), STOP_DEADLINE_MS).unref();
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`error while stopping: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGHUP', () => stop('SIGHUP'));
  watchParent(() => stop('parent exited'));
}

const STOP_DEADLINE_MS = 10_000;

/**
 * npm does not pass a SIGTERM sent to `npm start` on to this process; it exits and this one is re-parented. Noticing
 * the new parent stops calmops too, so nothing is left holding the port.
 */
function watchParent(onGone: () => void): void {
  const parent = process.ppid;
  if (parent <= 1) return;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, 500);
  timer.unref();
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
