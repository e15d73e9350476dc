import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { WebClient } from '@slack/web-api';
import type { StateMachinesConfig, TimeoutsConfig } from '../config.js';
import { GroupMembership } from '../policy/channel-policy.js';
import type { PolicyConfig } from '../policy/policy-source.js';
import type { PlanSynthesizer } from '../review/template-synthesizer.js';
import { TemplateSynthesizer } from '../review/template-synthesizer.js';
import { ArtifactRepository } from '../store/artifacts.js';
import { createDocumentClient, type DynamoClient } from '../store/client.js';
import { createStore, type Store } from '../store/index.js';
import { MemoryRepository } from '../store/memory.js';
import { loadTemplates, type TemplateRegistry } from '../triage/template-registry.js';
import type { ThreadMessage } from '../views/limits.js';
import type { WorkflowEngine } from './engine.js';

/** Posts into a session thread. Separate from the WebClient so tests and the bench can count and time posts. */
/** A text file shared into a thread: a long read's whole answer. */
export interface ThreadFile {
  filename: string;
  title: string;
  content: string;
}

export interface ThreadPoster {
  post(channelId: string, threadTs: string | undefined, message: ThreadMessage): Promise<{ ts: string }>;
  update(channelId: string, ts: string, message: ThreadMessage): Promise<void>;
  /** Shares a text file into the thread; posters that cannot leave it out and replies say the answer was cut. */
  upload?(channelId: string, threadTs: string, file: ThreadFile): Promise<void>;
}

export function webClientPoster(client: WebClient): ThreadPoster {
  return {
    async post(channelId, threadTs, message) {
      const out = await client.chat.postMessage({
        channel: channelId,
        ...(threadTs === undefined ? {} : { thread_ts: threadTs }),
        text: message.text,
        blocks: message.blocks,
        unfurl_links: false,
      });
      return { ts: String(out.ts ?? '') };
    },
    async update(channelId, ts, message) {
      await client.chat.update({ channel: channelId, ts, text: message.text, blocks: message.blocks });
    },
    async upload(channelId, threadTs, file) {
      // Slack's upload: ask for a URL, send the bytes there, then share the file into the thread.
      const bytes = Buffer.from(file.content, 'utf8');
      const target = await client.files.getUploadURLExternal({ filename: file.filename, length: bytes.length });
      if (!target.upload_url || !target.file_id) throw new Error('Slack gave no upload URL for the file');
      const sent = await fetch(target.upload_url, {
        method: 'POST',
        body: bytes,
        headers: { 'Content-Type': 'text/plain; charset=utf-8' },
        signal: AbortSignal.timeout(10_000),
      });
      if (!sent.ok) throw new Error(`Slack refused the file's bytes (HTTP ${sent.status})`);
      await client.files.completeUploadExternal({
        files: [{ id: target.file_id, title: file.title }],
        channel_id: channelId,
        thread_ts: threadTs,
      });
    },
  };
}

/** The product's own metrics (CloudWatch EMF through Powertools in AWS). */
export interface WorkflowMetrics {
  approvalExpired(kind: string): void;
}

export function powertoolsMetrics(serviceName = 'calmops'): WorkflowMetrics {
  const metrics = new Metrics({ namespace: 'calmops', serviceName });
  return {
    approvalExpired(kind) {
      // Published at once: a step function task is a single short invocation, there is no later flush point.
      metrics.addDimension('kind', kind);
      metrics.addMetric('ApprovalsExpired', MetricUnit.Count, 1);
      metrics.publishStoredMetrics();
    },
  };
}

export interface WorkflowDeps {
  store: Store;
  memory: MemoryRepository;
  artifacts: ArtifactRepository;
  engine: WorkflowEngine;
  slack: ThreadPoster;
  /** Slack Web API for user group lookups (the policy's approver groups). */
  membership: GroupMembership | undefined;
  logger: Logger;
  metrics: WorkflowMetrics;
  templates: TemplateRegistry;
  synthesizer: PlanSynthesizer;
  stateMachines: StateMachinesConfig;
  timeouts: TimeoutsConfig;
  policy: PolicyConfig['policy'];
  now: () => Date;
}

export interface BuildDepsInput {
  tableName: string;
  clients: { dynamo: DynamoClient };
  engine: WorkflowEngine;
  slack: ThreadPoster;
  slackClient?: WebClient;
  stateMachines: StateMachinesConfig;
  timeouts: TimeoutsConfig;
  policy: PolicyConfig['policy'];
  logger?: Logger;
  metrics?: WorkflowMetrics;
  templates?: TemplateRegistry;
  synthesizer?: PlanSynthesizer;
  now?: () => Date;
}

export function buildWorkflowDeps(input: BuildDepsInput): WorkflowDeps {
  const client = createDocumentClient(input.clients.dynamo);
  const ctx = { client, tableName: input.tableName };
  return {
    store: createStore(ctx),
    memory: new MemoryRepository(client, input.tableName),
    artifacts: new ArtifactRepository(ctx),
    engine: input.engine,
    slack: input.slack,
    membership:
      input.slackClient === undefined
        ? undefined
        : new GroupMembership(input.slackClient, input.policy?.membershipCacheSeconds ?? 60),
    logger: input.logger ?? new Logger({ serviceName: 'calmops' }),
    metrics: input.metrics ?? powertoolsMetrics(),
    templates: input.templates ?? loadTemplates(),
    synthesizer: input.synthesizer ?? new TemplateSynthesizer(),
    stateMachines: input.stateMachines,
    timeouts: input.timeouts,
    policy: input.policy,
    now: input.now ?? (() => new Date()),
  };
}
