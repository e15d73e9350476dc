import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import type { ClusterReader } from '../cluster/types.js';
import { ID_MAX, NOTE_MAX } from '../limits.js';
import { TriageEnvelopeSchema } from '../triage/envelope/index.js';
import { MAX_STEP_BUDGET, type TriageLogger } from '../triage/index.js';
import { intentSummaries } from '../triage/route/index.js';
import { loadTemplates, type TemplateRegistry } from '../triage/templates/index.js';
import { readReplyText, runTypedRead } from './read-tool.js';
import { describeScope, type NamespaceScope } from './scope.js';
import { runSnapshotTool, snapshotSummaryText } from './snapshot-tool.js';
import { type NamespaceWitness, runTriageTool } from './triage-tool.js';

/**
 * calmops as an MCP server: the triage, one read at a time, the intents and a snapshot capture, each read-only and
 * bounded as the command line is, plus the intents and the envelope's JSON Schema as resources. Whoever starts it
 * (the `calmops mcp` command) decides the cluster, the scope and the bounds; the transport is theirs too.
 */

export interface McpServerContext {
  version: string;
  /** The read-only reader of the cluster or snapshot. */
  reader: ClusterReader;
  /** The cluster's name in the envelope (`snapshot:incident.yaml`, a kubeconfig context). */
  cluster: string;
  scope: NamespaceScope;
  /** What a read that names no namespace reads, as kubectl's current namespace. */
  namespace: string;
  /** Rounds of reads a triage may run unless a call asks for fewer or more (1 to 5). */
  stepBudget: number;
  /** The deadline of one triage or one read. */
  timeoutMs: number;
  /** How long a snapshot capture may take. */
  snapshotDeadlineMs: number;
  /** Where the snapshot tool writes. */
  snapshotDir: string;
  /** A replay's "now": the moment its snapshot was taken. */
  now?: Date;
  witness?: NamespaceWitness;
  logger: TriageLogger;
  templates?: TemplateRegistry;
}

const INTENTS_URI = 'calmops://intents';
const ENVELOPE_SCHEMA_URI = 'calmops://schemas/triage-envelope.json';

/** Every tool only reads the cluster; none changes it, so a client may run them without asking each time. */
const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };

const IntentSchema = z.object({
  id: z.string(),
  domain: z.string(),
  title: z.string(),
  description: z.string(),
  examples: z.array(z.string()),
  relatedDomains: z.array(z.string()),
});

const ReadReplySchema = z.object({
  title: z.string().describe('the read as it was run'),
  outcome: z.enum(['ok', 'empty', 'failed']),
  summary: z.string(),
  lines: z.array(z.string()).describe('what kubectl prints, line by line, pipes applied and redacted'),
});

const SnapshotResultSchema = z.object({
  file: z.string(),
  logsFile: z.string().optional(),
  objects: z.record(z.string(), z.number().int()),
  logs: z.number().int(),
  warnings: z.array(z.string()),
  configMaps: z.array(z.string()),
});

const NamespaceArg = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a namespace name: lower-case letters, digits and "-"');

/** A tool's answer to a failure: the message, for the model to act on; never a stack, never a dropped connection. */
function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

async function guarded(what: string, run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const known = error instanceof Error && /ToolError$/.test(error.name);
    return toolError(known ? message : `calmops could not ${what}: ${message}`);
  }
}

function instructions(context: McpServerContext): string {
  return [
    `calmops reads the Kubernetes cluster ${context.cluster} with a read-only identity and never changes it.`,
    'Start with triage, in the words of the person asking ("pods stuck pending in payments"): it returns what is wrong, the object to change, how sure it is, what it could not see and the next actions, each labelled SAFE, REQUIRES_APPROVAL or DANGEROUS.',
    'Then look closer with read, one kubectl-style read at a time (get, describe, logs, events); writes, exec and Secrets are refused.',
    `This server reads ${describeScope(context.scope)}.`,
  ].join(' ');
}

export function createMcpServer(context: McpServerContext): McpServer {
  const templates = context.templates ?? loadTemplates();
  const server = new McpServer(
    { name: 'calmops', title: 'calmops', version: context.version },
    { instructions: instructions(context) },
  );
  registerTriageTool(server, context);
  registerReadTool(server, context);
  registerIntentsTool(server, templates);
  registerSnapshotTool(server, context);
  registerResources(server, templates);
  return server;
}

/** The `triage` tool: a whole triage, answered with its envelope. */
function registerTriageTool(server: McpServer, context: McpServerContext): void {
  server.registerTool(
    'triage',
    {
      title: 'Triage a namespace',
      description:
        'What is wrong in a Kubernetes namespace, from evidence: give the problem in plain words (and the namespace when known). ' +
        'Returns the triage envelope: the root cause (the object to change), findings with their evidence, how complete the evidence is and what is missing and why, ' +
        `and next actions labelled by safety. Bounded: ${context.stepBudget} rounds of reads by default (at most ${MAX_STEP_BUDGET}), ${Math.round(context.timeoutMs / 1000)} s.`,
      inputSchema: {
        text: z
          .string()
          .min(1)
          .max(NOTE_MAX)
          .describe('what is wrong, in the words of the person asking, e.g. "pods stuck pending in payments"'),
        namespace: NamespaceArg.optional().describe(
          'the namespace; found from the words and the cluster when left out',
        ),
        intent: z
          .string()
          .max(ID_MAX)
          .optional()
          .describe('an intent id from the intents tool, to skip intent detection'),
        stepBudget: z.number().int().min(1).max(MAX_STEP_BUDGET).optional().describe('rounds of reads, 1 to 5'),
      },
      outputSchema: TriageEnvelopeSchema,
      annotations: { ...READ_ONLY, openWorldHint: true },
    },
    (args) =>
      guarded('triage', async () => {
        const { envelope, text } = await runTriageTool(args, {
          reader: context.reader,
          scope: context.scope,
          cluster: context.cluster,
          stepBudget: context.stepBudget,
          timeoutMs: context.timeoutMs,
          logger: context.logger,
          ...(context.now === undefined ? {} : { now: context.now }),
          ...(context.witness === undefined ? {} : { witness: context.witness }),
        });
        return { content: [{ type: 'text', text }], structuredContent: envelope };
      }),
  );
}

/** The `read` tool: one kubectl read, printed as kubectl prints it. */
function registerReadTool(server: McpServer, context: McpServerContext): void {
  server.registerTool(
    'read',
    {
      title: 'Run one read',
      description:
        'One kubectl read, answered as kubectl prints it, as calmops runs it in an incident thread: get, describe, ' +
        'logs, events or top, with -o wide|yaml|json|jsonpath|custom-columns, selectors and pipes such as "| grep", e.g. ' +
        '"kubectl get pods -n shop -o wide", "kubectl logs deploy/web --previous", "kubectl get events". Writes, exec, ' +
        `compound commands and Secrets are refused; output is redacted. Reads ${describeScope(context.scope)}.`,
      inputSchema: {
        command: z.string().min(1).max(1000).describe('the kubectl (or oc) command line; "kubectl" may be left out'),
        namespace: NamespaceArg.optional().describe(
          `the namespace when the command names none (default ${context.namespace})`,
        ),
      },
      outputSchema: ReadReplySchema,
      annotations: { ...READ_ONLY, openWorldHint: true },
    },
    (args, extra) =>
      guarded('run the read', async () => {
        const outcome = await runTypedRead(args.command, {
          reader: context.reader,
          scope: context.scope,
          namespace: args.namespace ?? context.namespace,
          signal: AbortSignal.any([AbortSignal.timeout(context.timeoutMs), extra.signal]),
        });
        if (outcome.status === 'refused') return toolError(outcome.message);
        const { status: _, ...reply } = outcome;
        const text = readReplyText(outcome);
        return {
          content: [{ type: 'text', text }],
          structuredContent: reply,
          ...(reply.outcome === 'failed' ? { isError: true } : {}),
        };
      }),
  );
}

/** The `intents` tool: what calmops can triage. */
function registerIntentsTool(server: McpServer, templates: TemplateRegistry): void {
  server.registerTool(
    'intents',
    {
      title: 'List the triage intents',
      description: 'The problems calmops can triage, with example requests: ids for the triage tool\'s "intent".',
      inputSchema: {},
      outputSchema: { intents: z.array(IntentSchema) },
      annotations: { ...READ_ONLY, openWorldHint: false },
    },
    () =>
      guarded('list the intents', async () => {
        const intents = intentSummaries(templates);
        const text = intents.map((i) => `${i.id} (${i.domain}): ${i.title}; e.g. "${i.examples[0] ?? ''}"`).join('\n');
        return { content: [{ type: 'text', text }], structuredContent: { intents } };
      }),
  );
}

/** The `snapshot` tool: one namespace captured to a file for offline replay. */
function registerSnapshotTool(server: McpServer, context: McpServerContext): void {
  server.registerTool(
    'snapshot',
    {
      title: 'Capture a namespace',
      description:
        'Capture one namespace, read-only, as a snapshot file for offline replay (calmops triage --snapshot, calmops serve-snapshot). ' +
        "Secrets are never read. Writes a new file in the server's snapshot folder and never overwrites one.",
      inputSchema: {
        namespace: NamespaceArg.describe('the namespace to capture'),
        file: z.string().max(210).optional().describe('a file name ending in .yaml; default <namespace>-<time>.yaml'),
        logs: z.boolean().optional().describe('also capture the logs of failing pods (default true)'),
      },
      outputSchema: SnapshotResultSchema,
      annotations: { ...READ_ONLY, idempotentHint: false, openWorldHint: true },
    },
    (args) =>
      guarded('capture the snapshot', async () => {
        const result = await runSnapshotTool(args, {
          reader: context.reader,
          scope: context.scope,
          dir: context.snapshotDir,
          deadlineMs: context.snapshotDeadlineMs,
          now: () => new Date(),
        });
        return { content: [{ type: 'text', text: snapshotSummaryText(result) }], structuredContent: { ...result } };
      }),
  );
}

/** The intents and the envelope's JSON Schema, as resources a client can read. */
function registerResources(server: McpServer, templates: TemplateRegistry): void {
  server.registerResource(
    'intents',
    INTENTS_URI,
    {
      title: 'Triage intents',
      description: 'What calmops can triage, with example requests',
      mimeType: 'application/json',
    },
    async (uri) => ({
      contents: [
        { uri: uri.href, mimeType: 'application/json', text: JSON.stringify(intentSummaries(templates), null, 2) },
      ],
    }),
  );

  server.registerResource(
    'triage-envelope-schema',
    ENVELOPE_SCHEMA_URI,
    {
      title: 'Triage envelope JSON Schema',
      description: 'The JSON Schema of the envelope the triage tool returns as structured content',
      mimeType: 'application/schema+json',
    },
    async (uri) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'application/schema+json',
          text: JSON.stringify(z.toJSONSchema(TriageEnvelopeSchema, { io: 'output' }), null, 2),
        },
      ],
    }),
  );
}
