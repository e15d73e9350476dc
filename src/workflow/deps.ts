import type { StateMachinesConfig, TimeoutsConfig } from '../config.js';
import type { LogPort } from '../logging/port.js';
import type { GroupMembership } from '../policy/channel-policy.js';
import type { PolicyConfig } from '../policy/policy-source.js';
import type { PlanSynthesizer } from '../review/template-synthesizer.js';
import type { ArtifactRepository } from '../store/artifacts.js';
import type { Store } from '../store/index.js';
import type { MemoryRepository } from '../store/memory.js';
import type { TemplateRegistry } from '../triage/templates/index.js';
import type { ThreadMessage } from '../views/limits.js';
import type { WorkflowEngine } from './engine.js';

/** A text file shared into a thread: a long read's whole answer. */
interface ThreadFile {
  filename: string;
  title: string;
  content: string;
}

/** Posts into a session thread. Separate from the WebClient so tests and the bench can count and time posts. */
export interface ThreadPoster {
  post(channelId: string, threadTs: string | undefined, message: ThreadMessage): Promise<{ ts: string }>;
  update(channelId: string, ts: string, message: ThreadMessage): Promise<void>;
  /** Shares a text file into the thread; posters that cannot leave it out and replies say the answer was cut. */
  upload?(channelId: string, threadTs: string, file: ThreadFile): Promise<void>;
}

/** The product's own metrics (CloudWatch EMF through Powertools in AWS). */
export interface WorkflowMetrics {
  approvalExpired(kind: string): void;
}

export interface WorkflowDeps {
  store: Store;
  memory: MemoryRepository;
  artifacts: ArtifactRepository;
  engine: WorkflowEngine;
  slack: ThreadPoster;
  /** Slack Web API for user group lookups (the policy's approver groups). */
  membership: GroupMembership | undefined;
  logger: LogPort;
  metrics: WorkflowMetrics;
  templates: TemplateRegistry;
  synthesizer: PlanSynthesizer;
  stateMachines: StateMachinesConfig;
  timeouts: TimeoutsConfig;
  policy: PolicyConfig['policy'];
  now: () => Date;
}
