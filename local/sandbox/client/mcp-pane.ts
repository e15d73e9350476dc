import type { McpCallAnswer, McpPanelView } from '../mcp-panel.js';
import { escapeHtml } from './html.js';

/**
 * The "MCP tools" pane: the tools `calmops mcp` lists for an assistant, against the served cluster, and a form to
 * call one as an assistant would, with the JSON-RPC request and response of the call underneath.
 */

export interface McpPaneState {
  view?: McpPanelView;
  /** Why the view could not be read. */
  failure?: string;
  tool: string;
  args: string;
  busy: boolean;
  last?: { tool: string; answer?: McpCallAnswer; error?: string };
}

/** What a person might ask each tool first, on the demo cluster. */
const EXAMPLES: Record<string, unknown> = {
  triage: { text: 'the order worker keeps crashing in orders' },
  read: { command: 'kubectl get pods -n payments' },
  intents: {},
  snapshot: { namespace: 'orders', logs: true },
};

export function exampleArguments(tool: string): string {
  return JSON.stringify(EXAMPLES[tool] ?? {}, null, 2);
}

function badges(annotations: Record<string, unknown> | undefined): string {
  const hints = annotations ?? {};
  const badge = (on: unknown, label: string) =>
    on === undefined
      ? ''
      : `<span class="mcp-hint" data-hint="${escapeHtml(label)}">${escapeHtml(label)}: ${on === true ? 'yes' : 'no'}</span>`;
  return (
    badge(hints['readOnlyHint'], 'read-only') +
    badge(hints['destructiveHint'], 'destructive') +
    badge(hints['idempotentHint'], 'idempotent') +
    badge(hints['openWorldHint'], 'open world')
  );
}

interface ToolResult {
  content?: Array<{ type: string; text?: string }>;
  isError?: boolean;
}

function renderResult(last: NonNullable<McpPaneState['last']>): string {
  if (last.error !== undefined) {
    return `<div class="mcp-result mcp-error" data-mcp-result>${escapeHtml(last.error)}</div>`;
  }
  const response = last.answer?.response as { result?: ToolResult; error?: { message?: string } } | undefined;
  const result = response?.result;
  const text = result?.content
    ?.map((c) => c.text ?? `[${c.type}]`)
    .join('\n')
    .trim();
  const failed = result?.isError === true || response?.error !== undefined;
  const body = text ?? response?.error?.message ?? '(no answer)';
  return `<div class="mcp-result${failed ? ' mcp-error' : ''}" data-mcp-result data-is-error="${failed}">
<div class="mcp-result-head">${escapeHtml(last.tool)} ${failed ? 'answered with an error' : 'answered'}</div>
<pre class="mcp-text">${escapeHtml(body)}</pre>
<details class="mcp-wire"><summary>JSON-RPC request and response</summary>
<pre data-mcp-request>${escapeHtml(JSON.stringify(last.answer?.request, null, 2))}</pre>
<pre data-mcp-response>${escapeHtml(JSON.stringify(last.answer?.response, null, 2))}</pre>
</details></div>`;
}

export function renderMcpPane(state: McpPaneState): string {
  if (state.failure !== undefined) return `<div class="empty" data-mcp-unavailable>${escapeHtml(state.failure)}</div>`;
  const view = state.view;
  if (view === undefined) return '<div class="empty">Starting calmops mcp…</div>';
  if (!view.available) return `<div class="empty" data-mcp-unavailable>${escapeHtml(view.reason)}</div>`;
  const tools = view.tools
    .map(
      (t) => `<div class="mcp-tool" data-mcp-tool="${escapeHtml(t.name)}">
<div class="mcp-tool-name"><code>${escapeHtml(t.name)}</code> ${escapeHtml(t.title ?? '')}</div>
<div class="mcp-tool-description">${escapeHtml(t.description ?? '')}</div>
<div class="mcp-hints">${badges(t.annotations as Record<string, unknown> | undefined)}</div></div>`,
    )
    .join('');
  const options = view.tools
    .map(
      (t) =>
        `<option value="${escapeHtml(t.name)}"${t.name === state.tool ? ' selected' : ''}>${escapeHtml(t.name)}</option>`,
    )
    .join('');
  return `<div class="mcp-pane">
<div class="mcp-intro">An assistant starts <code>calmops mcp</code> and calls its tools over stdio. This pane does the same,
with the SDK's own client, against the cluster this sandbox serves:</div>
<pre class="mcp-command" data-mcp-command>${escapeHtml(view.command)}</pre>
<div class="mcp-tools">${tools}</div>
<form class="mcp-form" id="mcp-form">
<label>Tool <select id="mcp-tool" aria-label="Tool">${options}</select></label>
<label class="mcp-args-label">Arguments (JSON)<textarea id="mcp-args" rows="4" aria-label="Arguments">${escapeHtml(state.args)}</textarea></label>
<button type="submit" class="sk-button sk-primary" id="mcp-call"${state.busy ? ' disabled' : ''}>Call</button>
</form>
${state.last === undefined ? '' : renderResult(state.last)}
</div>`;
}
