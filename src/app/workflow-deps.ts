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
import { createStore } from '../store/index.js';
import { MemoryRepository } from '../store/memory.js';
import { loadTemplates, type TemplateRegistry } from '../triage/templates/index.js';
import type { ThreadPoster, WorkflowDeps, WorkflowMetrics } from '../workflow/deps.js';
import type { WorkflowEngine } from '../workflow/engine.js';
import { powertoolsLogPort } from './log-port.js';

/** The workflow's metrics as CloudWatch EMF lines through Powertools. */
function powertoolsMetrics(serviceName = 'calmops'): WorkflowMetrics {
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

/**
 * The workflow's dependencies over one table: the store's repositories, Powertools' Logger and Metrics, the
 * templates and the plan synthesizer, each replaceable by a test, a benchmark or the local stack.
 */
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
    logger: powertoolsLogPort(input.logger ?? new Logger({ serviceName: 'calmops' })),
    metrics: input.metrics ?? powertoolsMetrics(),
    templates: input.templates ?? loadTemplates(),
    synthesizer: input.synthesizer ?? new TemplateSynthesizer(),
    stateMachines: input.stateMachines,
    timeouts: input.timeouts,
    policy: input.policy,
    now: input.now ?? (() => new Date()),
  };
}
