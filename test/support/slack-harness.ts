import { beforeEach } from 'vitest';
import { type LocalDynamo, localClientOptions, startLocalDynamo } from '../../local/dynamodb/index.js';
import { DEMO_IDS, type SlackStandIn, startSlackStandIn } from '../../local/slack/index.js';
import type { FunctionHttpResponse as SlackHttpResponse } from '../../src/http/function-http.js';
import { silentLogger } from '../../src/logging/port.js';
import { GroupMembership, parsePolicy } from '../../src/policy/channel-policy.js';
import { createSlackClient } from '../../src/slack/client.js';
import type { SlackAppDeps } from '../../src/slack/deps.js';
import { createSlackHttpHandler, type SlackHttpHandler, signSlackRequest } from '../../src/slack/receiver.js';
import {
  createDocumentClient,
  createDynamoClient,
  createStore,
  ensureTable,
  type Store,
} from '../../src/store/index.js';
import { loadTemplates } from '../../src/triage/templates/template-registry.js';
import type { ApprovalOutcome, DeliverInput, StartSessionInput } from '../../src/workflow/api.js';
import { recordTableCalls, type TableCall } from './cdk-table-calls.js';
import { type ButtonClickInput, buttonClick, eventCallback, slashCommand, viewSubmission } from './signed-slack.js';
import { startedForSuite } from './suite-lifecycle.js';

export const SECRET = 'test-signing-secret-8f1d2c';
const TOKEN = 'xoxb-test-token';

/** The workflow as the Slack function sees it: sessions are created as the real startSession would, calls recorded. */
interface RecordingWorkflow {
  started: StartSessionInput[];
  delivered: DeliverInput[];
  decisions: { token: string; output: ApprovalOutcome }[];
}

export interface SlackHarness {
  slack: SlackStandIn;
  store: Store;
  deps: SlackAppDeps;
  handle: SlackHttpHandler;
  workflow: RecordingWorkflow;
  /** Every DynamoDB request the handler sent (not the test's own setup), as IAM actions. */
  tableCalls: TableCall[];
  /** Forgets what the stand-in and the workflow recorded, so a test sees only the calls it caused. */
  reset(): void;
  close(): Promise<void>;
}

let tableCounter = 0;

export async function startSlackHarness(overrides: Partial<SlackAppDeps> = {}): Promise<SlackHarness> {
  const dynamo: LocalDynamo = await startLocalDynamo();
  const slack = await startSlackStandIn();
  const options = localClientOptions(dynamo.endpoint);
  const tableName = `calmops-slack-${process.pid}-${++tableCounter}`;
  await ensureTable(createDynamoClient(options), tableName);
  // Tests set up and inspect through `store`; the handler gets its own client, so its calls alone are recorded.
  const store = createStore({ client: createDocumentClient(options), tableName });
  const handlerDynamo = createDynamoClient(options);
  const tableCalls = recordTableCalls(handlerDynamo);
  const handlerStore = createStore({ client: createDocumentClient(handlerDynamo), tableName });
  const client = createSlackClient({ token: TOKEN, slackApiUrl: slack.url, timeoutMs: 2500, retries: 0 });
  const policy = parsePolicy({
    defaults: { cluster: 'demo', approverGroup: DEMO_IDS.approvers, seniorGroup: DEMO_IDS.seniors },
    channels: { [DEMO_IDS.incidents]: { cluster: 'demo', allowedIntents: '*' } },
  });
  const workflow: RecordingWorkflow = { started: [], delivered: [], decisions: [] };
  const deps: SlackAppDeps = {
    signingSecret: SECRET,
    botToken: TOKEN,
    client,
    store: handlerStore,
    policy,
    membership: new GroupMembership(client, 60),
    registry: loadTemplates(),
    approvalTimeoutSeconds: 3600,
    logger: silentLogger,
    workflow: {
      async startSession(input) {
        workflow.started.push(input);
        const session = await store.sessions.create({
          intent: input.intent ?? 'unknown',
          namespace: input.namespace ?? '',
          cluster: input.cluster,
          channelId: input.channelId,
          threadTs: input.threadTs,
          requester: input.requester,
        });
        await store.threads.bind(input.channelId, input.threadTs, session.id);
        return {
          sessionId: session.id,
          executionArn: `arn:aws:states:us-east-1:000000000000:execution:diagnostic:${session.id}-0`,
        };
      },
      async deliverInput(input) {
        workflow.delivered.push(input);
        return { delivered: true };
      },
      async sendTaskSuccess(token, output) {
        workflow.decisions.push({ token, output });
        return 'sent';
      },
    },
    ...overrides,
  };
  const handle = createSlackHttpHandler(deps);
  return {
    slack,
    store,
    deps,
    handle,
    workflow,
    tableCalls,
    reset() {
      slack.reset();
      workflow.started.length = 0;
      workflow.delivered.length = 0;
      workflow.decisions.length = 0;
    },
    async close() {
      await slack.close();
      await dynamo.close();
    },
  };
}

/** One harness for the enclosing `describe`: started before its tests, closed after them, and reset before each. */
export function useSlackHarness(overrides: Partial<SlackAppDeps> = {}): SlackHarness {
  const harness = startedForSuite(() => startSlackHarness(overrides));
  beforeEach(() => {
    harness.reset();
  });
  return harness;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Signs and sends a body through the handler, as Slack would. */
export function send(
  handle: SlackHttpHandler,
  body: string,
  options: {
    contentType?: string;
    timestamp?: number;
    headers?: Record<string, string>;
    base64?: boolean;
    secret?: string;
  } = {},
): Promise<SlackHttpResponse> {
  const signed = signSlackRequest(options.secret ?? SECRET, body, options.timestamp ?? nowSeconds());
  return handle({
    headers: {
      'Content-Type': options.contentType ?? 'application/x-www-form-urlencoded',
      'X-Slack-Signature': signed['x-slack-signature'],
      'X-Slack-Request-Timestamp': signed['x-slack-request-timestamp'],
      ...options.headers,
    },
    body: options.base64 === true ? Buffer.from(body, 'utf8').toString('base64') : body,
    isBase64Encoded: options.base64 === true,
  });
}

/** The request builders live in test/support/signed-slack.ts; these give the bodies the in-process `send` signs. */
export function slashBody(text: string, options: { user?: string; channel?: string; triggerId?: string } = {}): string {
  return slashCommand(text, options).body;
}

export function eventBody(event: Record<string, unknown>, options: { eventId?: string } = {}): string {
  return eventCallback(event, options).body;
}

export function blockActionBody(input: ButtonClickInput): string {
  return buttonClick({ messageText: 'approval', ...input }).body;
}

export function viewSubmissionBody(input: Parameters<typeof viewSubmission>[0]): string {
  return viewSubmission(input).body;
}

/** Creates an open session bound to a thread, as the workflow would have. */
export async function openSession(
  harness: SlackHarness,
  input: { requester?: string; state?: 'GATHERING' | 'ANALYZING' | 'HYPOTHESIZING' | 'TESTING' | 'RESOLVING' } = {},
) {
  const root = await harness.deps.client.chat.postMessage({ channel: DEMO_IDS.incidents, text: 'Triage root' });
  const threadTs = root.ts as string;
  const session = await harness.store.sessions.create({
    intent: 'pvc-binding',
    namespace: 'payments',
    cluster: 'demo',
    channelId: DEMO_IDS.incidents,
    threadTs,
    requester: input.requester ?? DEMO_IDS.requester,
    state: input.state ?? 'GATHERING',
  });
  await harness.store.threads.bind(DEMO_IDS.incidents, threadTs, session.id);
  return { session, threadTs };
}

/** Opens the break-glass modal the way a person does (`/triage breakglass <id>` in the session's channel). */
export async function openBreakGlassModal(
  harness: SlackHarness,
  sessionId: string,
  user: string = DEMO_IDS.requester,
  channel: string = DEMO_IDS.incidents,
): Promise<{ viewId: string; privateMetadata: string }> {
  const response = await send(harness.handle, slashBody(`breakglass ${sessionId}`, { user, channel }));
  if (response.statusCode !== 200 || response.body !== '') {
    throw new Error(`the break-glass modal did not open: ${response.statusCode} ${response.body}`);
  }
  const view = harness.slack.callsFor('views.open').at(-1)?.response['view'] as
    | { id: string; private_metadata: string }
    | undefined;
  if (view === undefined) throw new Error('views.open was not called');
  return { viewId: view.id, privateMetadata: view.private_metadata };
}
