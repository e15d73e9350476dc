import type { IncomingMessage, ServerResponse } from 'node:http';
import { hostRefusal, isStateChanging, originRefusal, refuse } from '../request-guard.js';
import type { SlackStandIn } from '../slack/server.js';
import { stopClientBuilds } from './assets.js';
import type { BotClient } from './bot-client.js';
import { demoClusterView, isDemoRoute, type SandboxDemoCluster } from './demo-routes.js';
import type { McpPanel } from './mcp-panel.js';
import { createPageState, type SandboxState } from './page-state.js';
import { sampleAlertRoute } from './routes/alerts.js';
import { demoClusterRoute } from './routes/demo.js';
import { interactionActions } from './routes/interactions.js';
import { messageActions } from './routes/messages.js';
import { pageRoutes } from './routes/pages.js';
import { isJson, readJson, SandboxRequestError, sendJson } from './routes/requests.js';
import { isSampleAlertRoute, type SampleAlertTarget } from './sample-alerts.js';
import type { SandboxWorkspace } from './workspace.js';

export type { SandboxNotice, SandboxState } from './page-state.js';

export interface SandboxOptions {
  standIn: SlackStandIn;
  workspace: SandboxWorkspace;
  /** Sends a signed request to the app's `/slack/events`. */
  bot: BotClient;
  /** How long a state request waits for something to change before answering unchanged (long poll). */
  pollWaitMs?: number;
  /**
   * Keeps the conversation (not ephemeral messages, as in Slack) in this file, so threads of stored sessions are
   * still there after a restart of the stand-in, which keeps messages in memory only.
   */
  historyFile?: string;
  /**
   * The demo cluster the page may run fixes on (under `/_sandbox/demo`), or why there is none (your own cluster or
   * snapshot). Absent: none, without a reason.
   */
  demoCluster?: SandboxDemoCluster;
  /**
   * calmops' Alertmanager route and its token, for the sample alerts of the demo namespaces (under
   * `/_sandbox/alerts/sample`). The token never reaches the page. Absent: no sample alerts.
   */
  alerts?: SampleAlertTarget;
  /** `calmops mcp` against the served cluster, for the "MCP tools" pane (under `/sandbox/api/mcp`). */
  mcp?: McpPanel;
}

export interface Sandbox {
  /** Answers requests under `/sandbox`; returns false for any other path. */
  handle(request: IncomingMessage, response: ServerResponse): Promise<boolean>;
  state(): Promise<SandboxState>;
  /** Builds the page's script now rather than on the first request. */
  warm(): Promise<void>;
  /** Ends waiting state requests and writes the history file one last time. */
  close(): Promise<void>;
}

const NO_MCP = 'No MCP server is started with this sandbox.';

/**
 * The sandbox's server side: serves the page, and turns what a person does on it into the signed requests Slack
 * would send (slash commands, events, interactions). The signing secret stays here; the page only says what the
 * person did. What the app posted is read back from the Web API stand-in.
 */
export function createSandbox(options: SandboxOptions): Sandbox {
  const { standIn, workspace, bot } = options;
  const page = createPageState({
    standIn,
    workspace,
    pollWaitMs: options.pollWaitMs ?? 15_000,
    ...(options.historyFile === undefined ? {} : { historyFile: options.historyFile }),
    outside: () => ({ demoCluster: demoClusterView(options.demoCluster), alerts: alerts.view() }),
  });
  const alerts = sampleAlertRoute({
    target: options.alerts,
    demoCluster: options.demoCluster !== undefined && 'control' in options.demoCluster,
    page,
  });
  const demo = demoClusterRoute({ demoCluster: options.demoCluster, page });
  const reads = pageRoutes({ workspace, page });
  const messages = messageActions({ standIn, workspace, bot, page });
  const interactions = interactionActions({ standIn, workspace, bot, page });

  // What the page reads (GET) and what it does (POST, JSON), one entry per path.
  const pages: Record<string, (response: ServerResponse, url: URL) => Promise<void>> = {
    '/sandbox': reads.redirect,
    '/sandbox/': reads.html,
    '/sandbox/app.js': reads.script,
    '/sandbox/app.css': reads.css,
    '/sandbox/api/workspace': reads.workspace,
    '/sandbox/api/state': reads.state,
    '/sandbox/api/mcp': async (response) => {
      sendJson(
        response,
        200,
        options.mcp === undefined ? { available: false, reason: NO_MCP } : await options.mcp.view(),
      );
    },
  };
  const actions: Record<string, (body: unknown) => Promise<unknown>> = {
    '/sandbox/api/compose': messages.compose,
    '/sandbox/api/action': interactions.action,
    '/sandbox/api/view/submit': interactions.submit,
    '/sandbox/api/view/close': interactions.close,
    '/sandbox/api/home': messages.openHome,
    '/sandbox/api/mcp/call': async (body) => {
      if (options.mcp === undefined) throw new SandboxRequestError(NO_MCP, 409);
      return options.mcp.call(body);
    },
  };

  const answerPage = async (request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> => {
    const path = url.pathname;
    try {
      if (request.method === 'GET') {
        const read = Object.hasOwn(pages, path) ? pages[path] : undefined;
        if (read === undefined) sendJson(response, 404, { error: `no such page ${path}` });
        else await read(response, url);
        return;
      }
      if (request.method !== 'POST') {
        sendJson(response, 405, { error: `${request.method} is not allowed here` });
        return;
      }
      if (!isJson(request)) {
        sendJson(response, 415, { error: 'send the request as application/json' });
        return;
      }
      const body = await readJson(request);
      const run = Object.hasOwn(actions, path) ? actions[path] : undefined;
      if (run === undefined) sendJson(response, 404, { error: `no such action ${path}` });
      else sendJson(response, 200, await run(body));
    } catch (error) {
      if (error instanceof SandboxRequestError) sendJson(response, error.status, { error: error.message });
      else sendJson(response, 500, { error: (error as Error).message });
    }
  };

  return {
    async handle(request, response) {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      const path = url.pathname;
      const isDemo = isDemoRoute(path);
      const isAlert = isSampleAlertRoute(path);
      if (!isDemo && !isAlert && path !== '/sandbox' && !path.startsWith('/sandbox/')) return false;
      // Every route here acts as a person in the workspace or changes the demo cluster, and the state readout shows
      // every conversation: answer only this machine's own pages (see local/request-guard.ts).
      const host = hostRefusal(request);
      if (host !== undefined) {
        refuse(response, host);
        return true;
      }
      if (isStateChanging(request.method)) {
        const origin = originRefusal(request);
        if (origin !== undefined) {
          refuse(
            response,
            isDemo
              ? `the demo cluster is changed only from the sandbox page itself: ${origin}`
              : isAlert
                ? `sample alerts are sent only from the sandbox page itself: ${origin}`
                : origin,
          );
          return true;
        }
      }
      if (isAlert) await alerts.answer(request, response, path);
      else if (isDemo) demo(request, response, path);
      else await answerPage(request, response, url);
      return true;
    },
    state: page.state,
    warm: reads.warm,
    async close() {
      await options.mcp?.close();
      await page.close();
      await stopClientBuilds().catch(() => undefined);
    },
  };
}
