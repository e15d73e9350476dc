import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createClusterReaderHandler } from '../functions/cluster-reader.js';
import { createNotifierHandler } from '../functions/notifier.js';
import { createWorkflowHandler } from '../functions/workflow.js';
import type { SnapshotLogs } from '../src/cluster/snapshot.js';
import type { KubeObject } from '../src/cluster/types.js';
import { ENV } from '../src/env-names.js';
import { writeKubeconfig } from '../src/snapshot-api/kubeconfig.js';
import { type SnapshotServer, startSnapshotServer } from '../src/snapshot-api/server.js';
import { createDocumentClient } from '../src/store/client.js';
import type { ThreadPoster, WorkflowMetrics } from '../src/workflow/deps.js';
import { localCache } from './cache-dir.js';
import { ensureTable, localClientOptions, startLocalDynamo } from './dynamodb/index.js';
import { DEMO_IDS, type SlackStandIn, startSlackStandIn } from './slack/index.js';
import {
  localStateMachineArn,
  type StateMachineRegistration,
  startLocalStepFunctions,
  validateStateMachines,
} from './stepfunctions/index.js';

/**
 * The whole calmops back end on loopback: dynalite, the local Step Functions endpoint running the three machines
 * with their Task resources bound to the same handlers the Lambdas export, the Kubernetes snapshot API server with a
 * kubeconfig for it, and the Slack Web API stand-in. Handlers read their configuration from `env`, exactly as in
 * AWS; only the endpoints, the kubeconfig and the Slack URL differ.
 */

export interface LocalStackOptions {
  /** Keep DynamoDB data on disk here (and the kubeconfig); in memory and a temp dir when absent. */
  dataDir?: string;
  /**
   * Serve dynalite from a worker thread. Every handler runs in this process, so under many concurrent sessions the
   * SDK and dynalite take turns on one core; in a worker, dynalite gets another.
   */
  dynamoWorker?: boolean;
  /** A cluster to read: objects served by the snapshot server, or an existing kubeconfig. */
  snapshot?: { objects: readonly KubeObject[]; logs?: SnapshotLogs } | { kubeconfigFile: string };
  /** Slack Web API base URL; the stand-in is started when absent. */
  slackApiUrl?: string;
  signingSecret?: string;
  /** The bearer token alert senders present (ALERTS_TOKEN); a random one when absent. */
  alertsToken?: string;
  idleTimeoutSeconds?: number;
  approvalTimeoutSeconds?: number;
  /**
   * ADR-005's minimum time in a state (CALMOPS_MIN_TIME_IN_STATE_SECONDS). 0 by default: tests drive a session faster
   * than a person reads; `npm start` passes the deployed default.
   */
  minTimeInStateSeconds?: number;
  /** Multiplies every Wait state (the break-glass hold), so a one-minute override lasts seconds in tests. */
  waitTimeScale?: number;
  /** Channel policy (defaults: every channel, the stand-in's approver and senior groups, cluster `default`). */
  policy?: unknown;
  /** More cluster names (besides `default`) that the one cluster read here answers to, as a policy names them. */
  clusterNames?: readonly string[];
  /**
   * Runs the reconciler (the workflow function's `reconcile` step, what the schedule invokes in AWS) this often, and
   * once right after start so a restart repairs at once; 60 by default, 0 turns it off.
   */
  reconcileEverySeconds?: number;
  /** `SILENT` in tests; `INFO` by default. */
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';
  /** Replace the metrics sink (tests count ApprovalsExpired). */
  metrics?: WorkflowMetrics;
  /** Wrap the Slack poster (the bench times posts). */
  wrapPoster?: (poster: ThreadPoster) => ThreadPoster;
  /**
   * Remembers across processes which state machine definitions passed validation, so a restart skips it;
   * `node_modules/.cache/calmops/validated-definitions.json` by default.
   */
  validatedDefinitionsFile?: string;
}

export interface LocalStack {
  /** The environment the handlers were configured from: what `npm start` hands to the Slack function too. */
  env: Record<string, string>;
  endpoints: { dynamodb: string; sfn: string; slack: string; kubernetes?: string };
  stateMachineArns: { diagnostic: string; review: string; breakGlass: string };
  sfnClient: SFNClient;
  docClient: DynamoDBDocumentClient;
  /** The Slack stand-in, when the stack started it. */
  slack?: SlackStandIn;
  /** The snapshot API server, when the stack served `snapshot.objects` (tests swap its objects after a "fix"). */
  kube?: SnapshotServer;
  kubeconfigFile?: string;
  close(): Promise<void>;
}

const REGION = 'us-east-1';
const ACCOUNT = '000000000000';
const FUNCTIONS = {
  workflow: 'calmops-workflow',
  notifier: 'calmops-notifier',
  clusterReader: 'calmops-cluster-reader',
} as const;

function definitionsDir(): string {
  return fileURLToPath(new URL('../statemachines/', import.meta.url));
}

function lambdaArn(name: string): string {
  return `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`;
}

const STATE_MACHINE_ARNS = {
  diagnostic: localStateMachineArn({ region: REGION, accountId: ACCOUNT }, 'calmops-diagnostic'),
  review: localStateMachineArn({ region: REGION, accountId: ACCOUNT }, 'calmops-review'),
  breakGlass: localStateMachineArn({ region: REGION, accountId: ACCOUNT }, 'calmops-break-glass'),
} as const;

/** The three machines as the local endpoint registers them: the committed definitions, wired to local functions. */
function stateMachineRegistrations(): StateMachineRegistration[] {
  const substitutions = {
    WorkflowFunctionArn: lambdaArn(FUNCTIONS.workflow),
    NotifierFunctionArn: lambdaArn(FUNCTIONS.notifier),
    ClusterReaderFunctionArn: lambdaArn(FUNCTIONS.clusterReader),
    ReviewStateMachineArn: STATE_MACHINE_ARNS.review,
    BreakGlassStateMachineArn: STATE_MACHINE_ARNS.breakGlass,
  };
  const definition = (file: string) => readFileSync(join(definitionsDir(), file), 'utf8');
  return [
    { name: 'calmops-diagnostic', definition: definition('diagnostic.asl.json'), substitutions },
    { name: 'calmops-review', definition: definition('review.asl.json'), substitutions },
    { name: 'calmops-break-glass', definition: definition('break-glass.asl.json'), substitutions },
  ];
}

/**
 * Validates the three definitions ahead of time and remembers them in `validatedDefinitionsFile`, so that the next
 * stack to start skips validation (run by `npm install` through the package's prepare script).
 */
export function validateLocalStateMachines(validatedDefinitionsFile = localCache.validatedDefinitions): void {
  validateStateMachines(stateMachineRegistrations(), { validatedDefinitionsFile });
}

/**
 * The demo channel is the platform team's: every tenant namespace, and the platform namespaces the demo's incidents
 * lead to (cluster DNS, the router).
 */
export const DEMO_SCOPE = ['*', 'kube-system', 'openshift-dns', 'openshift-ingress', 'ingress-nginx'];

export function defaultLocalPolicy(): unknown {
  return {
    defaults: {
      cluster: 'default',
      approverGroup: DEMO_IDS.approvers,
      seniorGroup: DEMO_IDS.seniors,
      allowedNamespaces: DEMO_SCOPE,
    },
    // Alerts open their sessions in the incident channel.
    alerts: { channel: DEMO_IDS.incidents },
  };
}

/** The local stand-in for the EventBridge schedule: one run at a time, the first right away. */
function scheduleReconciler(
  run: () => Promise<unknown>,
  everySeconds: number,
  logger: Logger,
): { stop(): Promise<void> } {
  if (everySeconds <= 0) return { stop: async () => undefined };
  let current: Promise<void> | undefined;
  let stopped = false;
  // A run still going when the next is due is left alone, as overlapping runs only repeat each other's checks.
  const tick = () => {
    if (stopped || current !== undefined) return;
    current = run()
      .then(() => undefined)
      .catch((error: unknown) => logger.error('reconciler run failed', { error: String(error) }))
      .finally(() => {
        current = undefined;
      });
  };
  // Right after start: a restart's stranded sessions should not wait a whole period.
  const first = setTimeout(tick, 0);
  const timer = setInterval(tick, everySeconds * 1000);
  first.unref();
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      await current;
    },
  };
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  };
  try {
    const dynamo = await startLocalDynamo({
      ...(options.dataDir === undefined ? {} : { dataDir: join(options.dataDir, 'dynamodb') }),
      ...(options.dynamoWorker ? { worker: true } : {}),
    });
    closers.push(() => dynamo.close());
    const tableName = 'calmops';
    const dynamoClient = new DynamoDBClient(localClientOptions(dynamo.endpoint));
    await ensureTable(dynamoClient, tableName);

    let kubeconfigFile: string | undefined;
    let kubernetes: string | undefined;
    let kube: SnapshotServer | undefined;
    if (options.snapshot && 'objects' in options.snapshot) {
      const server = await startSnapshotServer({
        objects: options.snapshot.objects,
        ...(options.snapshot.logs ? { logs: options.snapshot.logs } : {}),
      });
      closers.push(() => server.close());
      kube = server;
      kubernetes = server.url;
      const dir =
        options.dataDir === undefined ? await mkdtemp(join(tmpdir(), 'calmops-stack-')) : resolve(options.dataDir);
      if (options.dataDir === undefined) closers.push(() => rm(dir, { recursive: true, force: true }));
      kubeconfigFile = join(dir, 'kubeconfig');
      await writeKubeconfig(kubeconfigFile, { server: server.url });
    } else if (options.snapshot) {
      kubeconfigFile = options.snapshot.kubeconfigFile;
    }

    let slack: SlackStandIn | undefined;
    let slackApiUrl = options.slackApiUrl;
    if (slackApiUrl === undefined) {
      slack = await startSlackStandIn();
      closers.push(() => slack?.close() ?? Promise.resolve());
      slackApiUrl = slack.url;
    }

    const arns = STATE_MACHINE_ARNS;
    const env: Record<string, string> = {
      AWS_REGION: REGION,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      [ENV.table]: tableName,
      [ENV.diagnosticStateMachineArn]: arns.diagnostic,
      [ENV.reviewStateMachineArn]: arns.review,
      [ENV.breakGlassStateMachineArn]: arns.breakGlass,
      [ENV.slackApiUrl]: slackApiUrl,
      [ENV.slackBotToken]: 'xoxb-local-stand-in',
      [ENV.slackSigningSecret]: options.signingSecret ?? randomBytes(16).toString('hex'),
      [ENV.alertsToken]: options.alertsToken ?? randomBytes(24).toString('hex'),
      [ENV.policyJson]: JSON.stringify(options.policy ?? defaultLocalPolicy()),
      [ENV.idleTimeoutSeconds]: String(options.idleTimeoutSeconds ?? 14_400),
      [ENV.approvalTimeoutSeconds]: String(options.approvalTimeoutSeconds ?? 3_600),
      [ENV.minTimeInStateSeconds]: String(options.minTimeInStateSeconds ?? 0),
      ...(kubeconfigFile
        ? {
            [ENV.clusters]: JSON.stringify(
              Object.fromEntries(
                ['default', ...(options.clusterNames ?? [])].map((name) => [name, { kubeconfigFile }]),
              ),
            ),
          }
        : {}),
    };

    const logger = new Logger({ serviceName: 'calmops', logLevel: options.logLevel ?? 'INFO' });
    let poster: ThreadPoster | undefined;
    const overrides = {
      logger,
      ...(options.metrics ? { metrics: options.metrics } : {}),
    };
    // The poster wrapper needs the real poster, which the runtime builds from env; wrap lazily through a proxy.
    const slackOverride = options.wrapPoster
      ? {
          slack: {
            post: (c: string, t: string | undefined, m: Parameters<ThreadPoster['post']>[2]) =>
              (poster as ThreadPoster).post(c, t, m),
            update: (c: string, ts: string, m: Parameters<ThreadPoster['update']>[2]) =>
              (poster as ThreadPoster).update(c, ts, m),
            upload: async (c: string, t: string, f: Parameters<NonNullable<ThreadPoster['upload']>>[2]) =>
              (poster as ThreadPoster).upload?.(c, t, f),
          } satisfies ThreadPoster,
        }
      : {};
    if (options.wrapPoster) {
      const { createSlackClient } = await import('../src/slack/client.js');
      const { webClientPoster } = await import('../src/app/thread-poster.js');
      poster = options.wrapPoster(
        webClientPoster(createSlackClient({ token: env[ENV.slackBotToken] ?? '', slackApiUrl })),
      );
    }
    const workflow = createWorkflowHandler(env, { ...overrides, ...slackOverride });
    const notifier = createNotifierHandler(env, { ...overrides, ...slackOverride });
    const clusterReader = createClusterReaderHandler(env, {
      logger: new Logger({ serviceName: 'calmops', logLevel: options.logLevel ?? 'INFO' }),
    });

    const sfn = await startLocalStepFunctions({
      region: REGION,
      accountId: ACCOUNT,
      stateMachines: stateMachineRegistrations(),
      taskHandlers: {
        [FUNCTIONS.workflow]: (payload) => workflow(payload),
        [FUNCTIONS.notifier]: (payload) => notifier(payload),
        [FUNCTIONS.clusterReader]: (payload) => clusterReader(payload),
      },
      ...(options.waitTimeScale === undefined ? {} : { waitTimeScale: options.waitTimeScale }),
      validatedDefinitionsFile: options.validatedDefinitionsFile ?? localCache.validatedDefinitions,
      // Executions, their history and task tokens survive a restart, as in AWS; without a data dir, memory only.
      ...(options.dataDir === undefined ? {} : { stateDir: join(resolve(options.dataDir), 'stepfunctions') }),
      onError: (error) => logger.error('local Step Functions endpoint error', { error: String(error) }),
    });
    closers.push(() => sfn.close());
    const reconciler = scheduleReconciler(
      () => workflow({ step: 'reconcile' }),
      options.reconcileEverySeconds ?? 60,
      logger,
    );
    closers.push(async () => reconciler.stop());
    env['AWS_ENDPOINT_URL_SFN'] = sfn.endpoint;

    const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
    const sfnClient = new SFNClient({ region: REGION, endpoint: sfn.endpoint, credentials });
    const docClient = createDocumentClient(dynamoClient);
    closers.push(async () => {
      sfnClient.destroy();
      dynamoClient.destroy();
    });

    return {
      env,
      endpoints: {
        dynamodb: dynamo.endpoint,
        sfn: sfn.endpoint,
        slack: slackApiUrl,
        ...(kubernetes ? { kubernetes } : {}),
      },
      stateMachineArns: arns,
      sfnClient,
      docClient,
      ...(slack ? { slack } : {}),
      ...(kube ? { kube } : {}),
      ...(kubeconfigFile ? { kubeconfigFile } : {}),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
